// SPDX-License-Identifier: MIT
// SGEMM tutorial, chapter 10: wgmma, Hopper's warpgroup MMA (TF32).
//
//   00 naive -> 01 coalescing -> 02 smem tiling -> 03 thread tiling -> 04 vectorized
//   -> 05 bank conflicts -> 06 double buffer -> 07 any shape -> 08 tensor cores -> 09 3xTF32
//   -> [10 wgmma]
//
// Chapter 08 multiplies in TF32 with mma.sync, a warp-wide instruction whose operands all come
// from registers; on the H100 no mma.sync kernel can pass about 325 TFLOP/s (08's README, "The
// mma.sync ceiling"), 81 % of cuBLAS TF32. This chapter issues the same TF32 product through
// wgmma.mma_async.m64n128k8: four warps (a warpgroup) issue it together, it reads one operand
// straight from shared memory through a descriptor, and it runs asynchronously while the warps
// prepare the next tile. What changed since 08, and why:
// - TF32 wgmma reads a shared-memory operand only K-major (k contiguous). A is; the row-major B
//   is not. So the kernel computes C^T = B^T A^T: A^T is the shared-memory operand, B^T the
//   register operand, loaded by the lanes in mma.sync's A-fragment layout.
// - A is stored with the 128-byte swizzle the descriptor names (rows of BK = 32 floats), so the
//   tensor core reads it without bank conflicts.
// - A is rounded to TF32 in shared memory, once, by the thread that copied it, then handed to the
//   async proxy wgmma reads through (fence.proxy.async); B^T is rounded in registers.
// - One tile's wgmma stay in flight while the next tile is rounded and its fragments loaded,
//   so the copies run kStages - 2 tiles ahead (not 08's kStages - 1).
// Precision contract: TF32, as chapter 08 (verified with a TF32 tolerance, timed against cuBLAS
// CUBLAS_COMPUTE_32F_FAST_TF32).
// Limits: compute capability 9.0 with code built for sm_90a (CMake builds it wherever the
// architecture list holds 90); elsewhere the binary prints one error: line and exits 3. Every
// shape: 16-byte copies where K % 4 == 0 (A) and N % 4 == 0 (B), 4-byte copies otherwise.
// Example: build/bin/10_wgmma --size 4096

#include <cstdint>
#include <string>
#include <type_traits>

#include <cuda_runtime.h>

#include "common/cp_async.h"
#include "common/grid.h"
#include "common/harness.h"
#include "common/tf32.h"
#include "common/wgmma.h"

// Tile shape (BM, BN, STAGES), chosen on the H100: README.md, "Parameters and limits". The tuning
// build (-DSGEMM_TUNING=ON) compiles this file again with other SGEMM_TILE values.
#ifndef SGEMM_TILE
#define SGEMM_TILE 256, 128, 4
#endif
// Attribution switches (README.md, "Attribution"). SGEMM_ROUND_TF32: how A and B are rounded to
// TF32: 1 sgemm::tf32_operand (a compare and an add), 2 cvt.rna.tf32.f32 (one instruction more),
// 0 not at all (the tensor core then truncates: about 2.7x the rms error, 08's README; built only to
// price the rounding).
// SGEMM_WGMMA_IN_FLIGHT: tiles whose wgmma may still run while the next one is prepared (0 or 1).
#ifndef SGEMM_ROUND_TF32
#define SGEMM_ROUND_TF32 1
#endif
#ifndef SGEMM_WGMMA_IN_FLIGHT
#define SGEMM_WGMMA_IN_FLIGHT 1
#endif

namespace {

using sgemm::ceil_div;

// Everything the kernel derives from the tile shape, checked at compile time so that a bad
// candidate of the tuning build fails to compile instead of failing at run time. A warpgroup
// (128 threads) owns kWgmmaM columns of C; each wgmma gives it kWgmmaN rows of C (the
// instruction's M and N on C^T), and kBlockM / kWgmmaN of them cover the block's rows.
template <int kBlockM_, int kBlockN_, int kStages_>
struct HopperTile {
  static constexpr int kBlockM = kBlockM_;  // rows of C per block
  static constexpr int kBlockN = kBlockN_;  // columns of C per block
  static constexpr int kBlockK = 32;        // depth of one K tile: a 128-byte row of floats
  static constexpr int kStages = kStages_;  // K tiles held in shared memory at once
  static constexpr int kInFlight = SGEMM_WGMMA_IN_FLIGHT;  // tiles whose wgmma run on
  static constexpr int kWgmmaM = 64;   // wgmma.m64n128k8: columns of C (rows of C^T) ...
  static constexpr int kWgmmaN = 128;  // ... rows of C ...
  static constexpr int kWgmmaK = 8;    // ... and k per instruction
  static constexpr int kRowBlocks = kBlockM / kWgmmaN;  // wgmma per warpgroup per k-step
  static constexpr int kKSteps = kBlockK / kWgmmaK;     // k-steps per K tile
  static constexpr int kWarpgroups = kBlockN / kWgmmaM;
  static constexpr int kThreads = 128 * kWarpgroups;

  // sA[m][k]: rows of 32 floats (128 bytes), 16-byte chunk c of row r stored at chunk c ^ (r % 8)
  // (the 128-byte swizzle): wgmma reads 8 rows of one chunk column at a time, which then lie in
  // 8 different chunks, all 32 banks. sB[k][n]: rows padded by 8 floats, so the fragment loads of
  // lanes (g, t) at sB[t][2g] hit 32 different banks.
  static constexpr int kStrideA = kBlockK;
  static constexpr int kStrideB = kBlockN + 8;
  static constexpr int kSizeA = kBlockM * kStrideA;
  static constexpr int kStageFloats = kSizeA + kBlockK * kStrideB;
  // + 1024: the stages start on a 1024-byte boundary, where the swizzle pattern starts.
  static constexpr int kSmemBytes = kStages * kStageFloats * static_cast<int>(sizeof(float)) + 1024;

  // Copy plan: rows of both tiles go in 16-byte chunks (4 floats); consecutive threads take
  // consecutive chunks of a row, so a warp reads whole 32-byte sectors of global memory.
  static constexpr int kChunksA = kBlockK / 4;  // chunks per row of the A tile
  static constexpr int kRowsPerPassA = kThreads / kChunksA;
  static constexpr int kPassesA = kBlockM / kRowsPerPassA;
  static constexpr int kChunksB = kBlockN / 4;  // chunks per row of the B tile
  static constexpr int kRowsPerPassB = kThreads / kChunksB;
  static constexpr int kPassesB = kBlockK / kRowsPerPassB;

  static_assert(kBlockM % kWgmmaN == 0 && kBlockN % kWgmmaM == 0, "whole wgmma tiles per block");
  static_assert(kRowsPerPassA % 8 == 0, "a thread's A chunks keep one swizzle phase (row % 8)");
  static_assert(kBlockM % kRowsPerPassA == 0, "every thread copies the same number of chunks of A");
  static_assert(kThreads % kChunksB == 0 && kBlockK % kRowsPerPassB == 0,
                "every thread copies the same number of chunks of B");
  static_assert(kStageFloats * sizeof(float) % 1024 == 0, "every stage starts on 1024 bytes");
  static_assert(kInFlight == 0 || kInFlight == 1, "at most one tile's wgmma in flight");
  static_assert(kStages >= 2 + kInFlight,
                "stages in the tensor cores, one being read, one loading");
  static_assert(kSmemBytes <= 227 * 1024, "shared memory per block is limited to 227 KB");
};

using MainTile = HopperTile<SGEMM_TILE>;
// For problems where the big tile gives fewer blocks than half the SMs (README.md, "Small
// problems").
using SmallTile = HopperTile<256, 64, 4>;

// x as a TF32 operand of the tensor core (SGEMM_ROUND_TF32 above; 08's README, "What TF32 keeps
// of an FP32 number").
__device__ __forceinline__ uint32_t round_operand(float x) {
#if SGEMM_ROUND_TF32 == 1
  return sgemm::tf32_operand(x);
#elif SGEMM_ROUND_TF32 == 2
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
#else
  return __float_as_uint(x);
#endif
}

// What one thread copies of every K tile, fixed for the whole kernel.
struct CopyPlan {
  const float* a;  // A at (its first row, the current tile's first k + a_col)
  const float* b;  // B at (the current tile's first row, column 0)
  int64_t a_pass;  // kRowsPerPassA rows of A, in floats
  int a_row;       // its first row inside the A tile
  int a_col;       // its first k inside the A tile (a multiple of 4)
  int a_dst;       // sA offset of its first chunk: chunk a_col / 4 at its swizzled place
  int b_row;       // its first row inside the B tile
  int b_src;       // column of B it copies (a multiple of 4)
  int b_dst;       // sB offset of its first chunk
};

template <class T>
__device__ __forceinline__ CopyPlan make_copy_plan(int tid, const float* A, const float* B, int k,
                                                   int block_row, int block_col) {
  CopyPlan plan;
  const int chunk_a = tid % T::kChunksA;
  plan.a_row = tid / T::kChunksA;
  plan.a_col = 4 * chunk_a;
  plan.a_pass = static_cast<int64_t>(T::kRowsPerPassA) * k;
  plan.a = A + static_cast<int64_t>(block_row + plan.a_row) * k + plan.a_col;
  plan.a_dst = plan.a_row * T::kStrideA + 4 * (chunk_a ^ (plan.a_row % 8));  // the swizzle
  plan.b_row = tid / T::kChunksB;
  const int b_col = 4 * (tid % T::kChunksB);
  plan.b = B;
  plan.b_src = block_col + b_col;
  plan.b_dst = plan.b_row * T::kStrideB + b_col;
  return plan;
}

// The copies of one K tile into one stage. kCheck: the tile may reach past the matrix (the last
// K tile, k_left < kBlockK, or a block on the bottom edge, rows_left < kBlockM); elements outside
// are zero-filled and read from a valid address. Columns of B past N are checked on every tile
// (only blocks on the right edge have any).
template <class T, bool kAlignedK, bool kAlignedN, bool kCheck>
__device__ __forceinline__ void copy_tile(float* sA, float* sB, const CopyPlan& p, const float* A,
                                          const float* B, int n, int rows_left, int k_left) {
#pragma unroll
  for (int i = 0; i < T::kPassesA; ++i) {
    const float* src = p.a + i * p.a_pass;
    float* dst = sA + p.a_dst + i * T::kRowsPerPassA * T::kStrideA;
    const bool row_ok = !kCheck || p.a_row + i * T::kRowsPerPassA < rows_left;
    if (kAlignedK) {
      // K % 4 == 0: a chunk of 4 k values lies wholly inside or wholly outside A.
      const bool ok = row_ok && (!kCheck || p.a_col < k_left);
      sgemm::cp_async_16(dst, ok ? src : A, ok);
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const bool ok = row_ok && (!kCheck || p.a_col + j < k_left);
        sgemm::cp_async_4(dst + j, ok ? src + j : A, ok);
      }
    }
  }
#pragma unroll
  for (int c = 0; c < T::kPassesB; ++c) {
    const int row = p.b_row + c * T::kRowsPerPassB;
    const bool row_ok = !kCheck || row < k_left;
    const float* src_row = p.b + static_cast<int64_t>(row) * n;
    float* dst = sB + p.b_dst + c * T::kRowsPerPassB * T::kStrideB;
    if (kAlignedN) {
      const bool ok = row_ok && p.b_src < n;
      sgemm::cp_async_16(dst, ok ? src_row + p.b_src : B, ok);
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const bool ok = row_ok && p.b_src + j < n;
        sgemm::cp_async_4(dst + j, ok ? src_row + p.b_src + j : B, ok);
      }
    }
  }
}

// Issues the copies of one K tile into the stage at sA (sB follows at kSizeA) and moves the plan
// on to the next tile. check: the tile may reach past the matrix, so its copies test bounds.
template <class T, bool kAlignedK, bool kAlignedN>
__device__ __forceinline__ void issue_tile(float* sA, CopyPlan& plan, const float* A,
                                           const float* B, int n, int rows_left, int k_left,
                                           bool check) {
  if (check) {
    copy_tile<T, kAlignedK, kAlignedN, true>(sA, sA + T::kSizeA, plan, A, B, n, rows_left, k_left);
  } else {
    copy_tile<T, kAlignedK, kAlignedN, false>(sA, sA + T::kSizeA, plan, A, B, n, rows_left, k_left);
  }
  plan.a += T::kBlockK;
  plan.b += static_cast<int64_t>(T::kBlockK) * n;
}

// kAlignedK: K % 4 == 0 (rows of A start on 16 bytes); kAlignedN: N % 4 == 0 (rows of B and C).
template <class T, bool kAlignedK, bool kAlignedN>
__global__ void __launch_bounds__(T::kThreads, 1)
    sgemm_wgmma(int m, int n, int k, float alpha, const float* __restrict__ A,
                const float* __restrict__ B, float beta, float* __restrict__ C) {
#if !SGEMM_SM90A_BUILT
  __trap();  // built without sm_90a code: the harness exits 3 before any launch (unsupported)
#endif
  // Dynamic shared memory is only guaranteed 16-byte aligned; the swizzle needs 1024.
  extern __shared__ float4 smem_raw[];
  const uint32_t raw_base = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
  const uint32_t pad = (1024 - raw_base % 1024) % 1024;
  float* const smem = reinterpret_cast<float*>(reinterpret_cast<char*>(smem_raw) + pad);
  const uint32_t smem_base = raw_base + pad;
  // Stage s: sA = smem + s * kStageFloats (kBlockM x 32, swizzled), sB right after it.

  const int tid = threadIdx.x;
  const int block_row = blockIdx.y * T::kBlockM;  // < 65535 * kBlockM: the launcher's slabs
  const int block_col = blockIdx.x * T::kBlockN;
  const int warpgroup = tid / 128;
  const int warp = (tid % 128) / 32;  // inside the warpgroup
  const int lane = tid % 32;
  const int g = lane / 4;  // fragment row group (PTX: groupID)
  const int t = lane % 4;  // fragment column (PTX: threadID_in_group)

  // Prologue: the copy plan, and where this lane's register operand lies in a stage: B^T at k t
  // (and t + 4), columns kWgmmaM warpgroup + 16 warp + 2g (and + 1) of the block's tile.
  const int rows_left = m - block_row;
  const bool edge_m = rows_left < T::kBlockM;
  CopyPlan plan = make_copy_plan<T>(tid, A, B, k, block_row, block_col);
  const int b_frag = T::kSizeA + t * T::kStrideB + T::kWgmmaM * warpgroup + 16 * warp + 2 * g;
  const int num_tiles = ceil_div(k, T::kBlockK);

  auto issue = [&](int tile, int stage) {
    issue_tile<T, kAlignedK, kAlignedN>(smem + stage * T::kStageFloats, plan, A, B, n, rows_left,
                                        k - tile * T::kBlockK, tile == num_tiles - 1 || edge_m);
  };

  // Copies run kAhead tiles ahead: of the kStages stages, one is being read by the tile prepared
  // now and kInFlight by the wgmma still running, so their stages cannot be refilled yet. Every
  // prologue step and every tile commits exactly one group (empty past the last tile), so "tile
  // t has landed" is always "at most kAhead - 1 groups pending" (chapter 06).
  constexpr int kAhead = T::kStages - 1 - T::kInFlight;
#pragma unroll
  for (int s = 0; s < kAhead; ++s) {
    if (s < num_tiles) issue(s, s);
    sgemm::cp_async_commit();
  }

  // Zeroed accumulators: every wgmma adds to them (scale-d = 1).
  float acc[T::kRowBlocks][64] = {};
  // The register operand: two sets, one per parity of the tile, because the previous tile's
  // wgmma may still read theirs while this tile's are loaded.
  uint32_t frag[2][T::kKSteps][4];

  // Main loop, one K tile per step. P, the tile's parity, picks the fragment set; the loop takes
  // two tiles per iteration so that the two sets are two sets of registers (a loop of one tile
  // would load into the registers the running wgmma read: README.md, exercise 1).
  auto step = [&](int tile, auto parity) {
    constexpr int P = decltype(parity)::value;
    const int stage = tile % T::kStages;
    float* sA = smem + stage * T::kStageFloats;

    // Tile `tile` has landed (this thread's copies). Round them to TF32 in place, once, for
    // every warpgroup's wgmma, and hand them to the async proxy: the ordinary stores below are
    // not ordered with wgmma's reads of shared memory without fence.proxy.async.
    sgemm::cp_async_wait<kAhead - 1>();
#pragma unroll
    for (int i = 0; i < T::kPassesA; ++i) {
      float4* chunk =
          reinterpret_cast<float4*>(sA + plan.a_dst + i * T::kRowsPerPassA * T::kStrideA);
      float4 v = *chunk;
      v.x = __uint_as_float(round_operand(v.x));
      v.y = __uint_as_float(round_operand(v.y));
      v.z = __uint_as_float(round_operand(v.z));
      v.w = __uint_as_float(round_operand(v.w));
      *chunk = v;
    }
    sgemm::fence_proxy_async();
    // The wgmma of tile - 1 may still run; wait for those of tile - 2, which read the stage
    // refilled below and the fragment set loaded below. Waiting only now, not right after
    // issuing, keeps the tensor cores busy during the rounding above.
    sgemm::wgmma_wait<T::kInFlight>();
    // Every thread's part of the tile is in and rounded, and every warpgroup is done with the
    // stage of tile + kAhead - kStages.
    __syncthreads();
    if (tile + kAhead < num_tiles) issue(tile + kAhead, (tile + kAhead) % T::kStages);
    sgemm::cp_async_commit();

    // The register operand, B^T: lane (g, t) of warp w holds rows g and g + 8 of the warp's 16,
    // k t and t + 4 (mma.sync's A fragment). Row r of the 16 may stand for any column of C as
    // long as the epilogue agrees: rows g and g + 8 are columns 2g and 2g + 1, so each pair is
    // one 8-byte load (lanes 0-15 of a load then cover the 32 banks once: sB rows are 8 banks
    // apart).
    const float* b_stage = sA + b_frag;
#pragma unroll
    for (int s = 0; s < T::kKSteps; ++s) {
      const float2 lo = *reinterpret_cast<const float2*>(b_stage + (8 * s) * T::kStrideB);
      const float2 hi = *reinterpret_cast<const float2*>(b_stage + (8 * s + 4) * T::kStrideB);
      frag[P][s][0] = round_operand(lo.x);
      frag[P][s][1] = round_operand(lo.y);
      frag[P][s][2] = round_operand(hi.x);
      frag[P][s][3] = round_operand(hi.y);
    }
    // Descriptors of the A tile: rows kWgmmaN i .. kWgmmaN (i + 1) - 1, k 8s .. 8s + 7 (offsets
    // in units of 16 bytes; inside the 128-byte row, the swizzle is applied to the final address).
    // Computed, like the fragments, before the fence and pinned there, so that nothing a wgmma
    // reads is written between two wgmma (ptxas would serialize them: warning C7513).
    const uint64_t desc =
        sgemm::smem_descriptor_sw128(smem_base + stage * T::kStageFloats * sizeof(float));
    uint64_t descs[T::kKSteps][T::kRowBlocks];
#pragma unroll
    for (int s = 0; s < T::kKSteps; ++s) {
#pragma unroll
      for (int i = 0; i < T::kRowBlocks; ++i) {
        descs[s][i] = desc + (i * T::kWgmmaN * T::kStrideA + T::kWgmmaK * s) * sizeof(float) / 16;
        asm volatile("" : "+l"(descs[s][i])::"memory");
      }
      sgemm::pin(frag[P][s]);
    }
#pragma unroll
    for (int i = 0; i < T::kRowBlocks; ++i) sgemm::pin(acc[i]);
    sgemm::wgmma_fence();
#pragma unroll
    for (int s = 0; s < T::kKSteps; ++s) {
#pragma unroll
      for (int i = 0; i < T::kRowBlocks; ++i) {
        sgemm::wgmma_m64n128k8_tf32(acc[i], frag[P][s], descs[s][i]);
      }
    }
    sgemm::wgmma_commit();
  };

  for (int tile = 0; tile < num_tiles; tile += 2) {
    step(tile, std::integral_constant<int, 0>{});
    if (tile + 1 < num_tiles) step(tile + 1, std::integral_constant<int, 1>{});
  }
  sgemm::wgmma_wait<0>();
#pragma unroll
  for (int i = 0; i < T::kRowBlocks; ++i) sgemm::pin(acc[i]);

  // Epilogue: C = alpha * acc + beta * C; with beta == 0, C is never read (it may hold NaN).
  // acc[i][4j + e] is C^T (row g + 8 (e / 2) of warp w's 16, column 8j + 2t + e % 2) of row block
  // i, i.e. C at row kWgmmaN i + 8j + 2t + e % 2, column kWgmmaM warpgroup + 16 warp + 2g + e / 2:
  // registers e and e + 2 are neighbours in a row of C, one 8-byte store. A warp's store covers
  // 64 bytes of each of 4 rows.
#pragma unroll
  for (int i = 0; i < T::kRowBlocks; ++i) {
#pragma unroll
    for (int j = 0; j < T::kWgmmaN / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int row = block_row + i * T::kWgmmaN + 8 * j + 2 * t + e;
        const int col = block_col + T::kWgmmaM * warpgroup + 16 * warp + 2 * g;
        if (row >= m) continue;
        float* c = C + static_cast<int64_t>(row) * n + col;
        const float v0 = alpha * acc[i][4 * j + e];
        const float v1 = alpha * acc[i][4 * j + e + 2];
        if (kAlignedN) {
          // N even: col < n implies col + 1 < n, and the pair starts on 8 bytes.
          if (col >= n) continue;
          float2 out = make_float2(v0, v1);
          if (beta != 0.0f) {
            const float2 old = *reinterpret_cast<const float2*>(c);
            out.x += beta * old.x;
            out.y += beta * old.y;
          }
          *reinterpret_cast<float2*>(c) = out;
        } else {
          if (col < n) c[0] = beta != 0.0f ? v0 + beta * c[0] : v0;
          if (col + 1 < n) c[1] = beta != 0.0f ? v1 + beta * c[1] : v1;
        }
      }
    }
  }
}

// Launches one tile shape over the whole problem, in the instantiation for K % 4 and N % 4
// (16-byte or 4-byte copies).
template <class T>
void launch_tile(const sgemm::Problem& p, const float* A, const float* B, float* C,
                 cudaStream_t stream) {
  using Kernel = void(int, int, int, float, const float*, const float*, float, float*);
  // [K % 4 == 0][N % 4 == 0]
  Kernel* const kernels[2][2] = {{&sgemm_wgmma<T, false, false>, &sgemm_wgmma<T, false, true>},
                                 {&sgemm_wgmma<T, true, false>, &sgemm_wgmma<T, true, true>}};
  // Above 48 KB, dynamic shared memory must be allowed explicitly, once per kernel.
  static const bool raised = [&] {
    for (const auto& row : kernels) {
      for (Kernel* kernel : row) {
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes);
      }
    }
    return true;
  }();
  (void)raised;
  Kernel* kernel = kernels[p.k % 4 == 0][p.n % 4 == 0];  // cudaMalloc pointers: 256-byte aligned
  sgemm::for_each_row_slab(p, T::kBlockM, [&](int64_t row0, int rows) {
    const dim3 grid(ceil_div(p.n, T::kBlockN), ceil_div(rows, T::kBlockM));
    kernel<<<grid, T::kThreads, T::kSmemBytes, stream>>>(rows, p.n, p.k, p.alpha, A + row0 * p.k, B,
                                                         p.beta, C + row0 * p.n);
  });
}

// The big tile unless it gives fewer blocks than half the SMs (measured at 2048^3 on the H100,
// where its 128 blocks beat the small tile's 256); then the small one.
bool takes_small_tile(const sgemm::Problem& p) {
  const int64_t blocks =
      static_cast<int64_t>(ceil_div(p.m, MainTile::kBlockM)) * ceil_div(p.n, MainTile::kBlockN);
  return blocks < sgemm::sm_count() / 2;
}

void launch_wgmma(const sgemm::Problem& p, const float* A, const float* B, float* C,
                  cudaStream_t stream) {
  if (takes_small_tile(p)) {
    launch_tile<SmallTile>(p, A, B, C, stream);
  } else {
    launch_tile<MainTile>(p, A, B, C, stream);
  }
}

// The tile the launcher takes for this problem, for the harness's traffic model.
sgemm::TileSize tile_for(const sgemm::Problem& p) {
  return takes_small_tile(p) ? sgemm::TileSize{SmallTile::kBlockM, SmallTile::kBlockN}
                             : sgemm::TileSize{MainTile::kBlockM, MainTile::kBlockN};
}

}  // namespace

int main(int argc, char** argv) {
  static const std::string title =
      "wgmma (TF32 m64n128k8, A from swizzled shared memory, B^T from registers), BM x BN x BK = " +
      std::to_string(MainTile::kBlockM) + "x" + std::to_string(MainTile::kBlockN) + "x" +
      std::to_string(MainTile::kBlockK) + ", " + std::to_string(MainTile::kStages) + " stages, " +
      std::to_string(MainTile::kInFlight) + " tile in flight";
  sgemm::Chapter chapter{"10_wgmma",        title.c_str(),     &launch_wgmma,
                         MainTile::kBlockM, MainTile::kBlockN, &tile_for};
  chapter.precision = sgemm::Precision::kTf32;
  chapter.unsupported = &sgemm::sm90a_unsupported;
  return sgemm::run_chapter(chapter, argc, argv);
}
