// SPDX-License-Identifier: MIT
// SGEMM tutorial, chapter 06: double buffering (a multi-stage cp.async pipeline).
//
//   00 naive -> 01 coalescing -> 02 smem tiling -> 03 thread tiling -> 04 vectorized
//   -> 05 bank conflicts -> [06 double buffer] -> 07 any shape -> 08 tensor cores
//   -> 09 3xTF32
//
// Chapter 05 loaded a K tile, waited at a barrier, computed it, waited again, then loaded the
// next: while the tile travelled from DRAM the block's warps had nothing to do. Here the block
// keeps kStages tiles of A and B in shared memory and copies tile t + kStages - 1 with cp.async
// (global -> shared without passing through registers) while it computes tile t; inside a tile,
// the fragments of step kk + 1 are read from shared memory while the FMAs of step kk run
// (register double buffering). One barrier per K tile instead of two. Edges are handled when a
// tile is copied (cp.async zero-fills what lies outside A or B), so the compute loop has no
// bounds checks, and interior tiles are copied without any either. With the loads off the
// critical path a bigger tile pays: 128 x 256 x 16, 8 x 16 accumulators per thread.
// Each sub-step is a variant of this file (README.md, "Results"): the pipeline at chapter 05's
// tile with 2 stages and SGEMM_REGISTER_DOUBLE_BUFFER=0, then register double buffering, then
// more stages, then the bigger tile (SGEMM_TILE).
// Limits: FP32 CUDA cores only (no tensor cores); cp.async needs sm_80 or newer (older GPUs take
// a synchronous copy with the same structure, see copy_4()).
// Example: build/bin/06_double_buffer --size 4096

#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "common/check.h"
#include "common/grid.h"
#include "common/harness.h"

// Tile shape (BM, BN, BK, WM, WN, TM, TN, STAGES), chosen on the H100: README.md, "Choosing the
// tile". The tuning build (-DSGEMM_TUNING=ON) compiles this file again with other SGEMM_TILE
// values.
#ifndef SGEMM_TILE
#define SGEMM_TILE 128, 256, 16, 64, 64, 8, 16, 3
#endif
// 1: read the fragments of step kk + 1 while step kk computes (two register sets). 0: read a
// step's fragments, then compute them (the variant tile05_2stages_noregdb measures the gap).
#ifndef SGEMM_REGISTER_DOUBLE_BUFFER
#define SGEMM_REGISTER_DOUBLE_BUFFER 1
#endif

namespace {

constexpr bool kRegisterDoubleBuffer = SGEMM_REGISTER_DOUBLE_BUFFER != 0;

constexpr int log2_exact(int x) { return x <= 1 ? 0 : 1 + log2_exact(x / 2); }

// Everything the kernel derives from the tile shape, checked at compile time so that a bad
// candidate of the tuning build fails to compile instead of failing at run time.
template <int kBlockM_, int kBlockN_, int kBlockK_, int kWarpM_, int kWarpN_, int kThreadM_,
          int kThreadN_, int kStages_>
struct Tile {
  static constexpr int kBlockM = kBlockM_;    // rows of C per block
  static constexpr int kBlockN = kBlockN_;    // columns of C per block
  static constexpr int kBlockK = kBlockK_;    // depth of one K tile (one pipeline stage)
  static constexpr int kWarpM = kWarpM_;      // rows of C per warp
  static constexpr int kWarpN = kWarpN_;      // columns of C per warp
  static constexpr int kThreadM = kThreadM_;  // rows of C per thread, in groups of 4
  static constexpr int kThreadN = kThreadN_;  // columns of C per thread, in groups of 4
  static constexpr int kStages = kStages_;    // K tiles held in shared memory at once

  static constexpr int kWarpsM = kBlockM / kWarpM;
  static constexpr int kWarpsN = kBlockN / kWarpN;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int kLanesM = kWarpM / kThreadM;  // lanes of a warp along M ...
  static constexpr int kLanesN = kWarpN / kThreadN;  // ... and along N
  static constexpr int kLanesNLog2 = log2_exact(kLanesN);

  // sA holds A transposed, sA[k][m], each row padded by 4 floats: the transposing 4-byte copies
  // of a warp then hit 32 different banks (chapter 05). sB[k][n] needs no padding.
  static constexpr int kStrideA = kBlockM + 4;
  static constexpr int kStageFloats = kBlockK * kStrideA + kBlockK * kBlockN;
  static constexpr int kSmemBytes = kStages * kStageFloats * static_cast<int>(sizeof(float));

  // Copy plan for A: 8 consecutive threads copy 8 consecutive k of one row (32 bytes, one
  // sector), so a warp's copy instruction covers 4 rows; thread copies rows a_row + i *
  // kRowsPerPassA (kPassesA of them) at k = a_k + 8 * j (kStepsA of them).
  static constexpr int kRowsPerPassA = kThreads / 8;
  static constexpr int kPassesA = kBlockM / kRowsPerPassA;
  static constexpr int kStepsA = kBlockK / 8;
  // Copy plan for B: a row of the B tile is kBlockN / 4 float4s; each thread copies kCopiesB of
  // them, kRowsPerPassB rows apart.
  static constexpr int kThreadsPerRowB = kBlockN / 4;
  static constexpr int kRowsPerPassB = kThreads / kThreadsPerRowB;
  static constexpr int kCopiesB = kBlockK / kRowsPerPassB;

  // Up to 8 x 8 accumulators per thread fit in 128 registers, i.e. 65536 / (128 * threads)
  // blocks per SM (2 for 256 threads); bigger thread tiles are allowed 255 registers.
  static constexpr int kMinBlocksPerSm =
      65536 / (kThreads * (kThreadM * kThreadN <= 64 ? 128 : 256)) > 0
          ? 65536 / (kThreads * (kThreadM * kThreadN <= 64 ? 128 : 256))
          : 1;

  static_assert(kBlockM % kWarpM == 0 && kBlockN % kWarpN == 0, "warps must tile the block");
  static_assert(kWarpM % kThreadM == 0 && kWarpN % kThreadN == 0, "lanes must tile the warp");
  static_assert(kLanesM * kLanesN == 32, "a warp tile must be covered by exactly 32 lanes");
  static_assert(kThreadM % 4 == 0 && kThreadN % 4 == 0,
                "fragments are read as float4 (LDS.128): thread tiles are made of 4x4 blocks");
  static_assert(kLanesM % 2 == 0 && (1 << kLanesNLog2) == kLanesN,
                "the interleaved lane layout needs an even lane count along M and a power of "
                "two along N");
  static_assert(kThreads <= 1024, "at most 1024 threads per block");
  static_assert(kBlockK % 8 == 0,
                "A is copied 8 consecutive k per row; fragments alternate two register sets");
  static_assert(kBlockM % 32 == 0 && kBlockM % kRowsPerPassA == 0,
                "rows of sA are 32k + 4 floats (conflict-free transposing copies), and every "
                "thread copies the same number of rows of A");
  static_assert(kBlockN % 4 == 0 && kThreads % kThreadsPerRowB == 0 && kBlockK % kRowsPerPassB == 0,
                "B is copied as whole float4s, every thread the same number of times");
  static_assert(kStages >= 2, "a pipeline needs at least two stages");
  // 227 KB on sm_90 (163 KB on sm_80, 99 KB on sm_86/89: the default tile needs 73 KB).
  static_assert(kSmemBytes <= 227 * 1024, "shared memory per block is limited to 227 KB");
};

// The tile of the SGEMM_TILE macro.
struct TileShape {
  int block_m, block_n, block_k, warp_m, warp_n, thread_m, thread_n, stages;
};
constexpr TileShape kTile{SGEMM_TILE};
using MainTile = Tile<kTile.block_m, kTile.block_n, kTile.block_k, kTile.warp_m, kTile.warp_n,
                      kTile.thread_m, kTile.thread_n, kTile.stages>;

// ---- cp.async: asynchronous global -> shared copies (sm_80+) ----------------------------------
// A copy with valid == false reads nothing and writes zeros (src-size 0), which is how the tile
// edges are handled. On GPUs without cp.async the same calls become plain loads and stores, so
// the pipeline is still correct (the barrier orders them), just not overlapped.

__device__ __forceinline__ void copy_4(float* smem_dst, const float* gmem_src, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst),
               "l"(__cvta_generic_to_global(gmem_src)), "r"(valid ? 4 : 0)
               : "memory");
#else
  *smem_dst = valid ? *gmem_src : 0.0f;
#endif
}

__device__ __forceinline__ void copy_16(float* smem_dst, const float* gmem_src, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst),
               "l"(__cvta_generic_to_global(gmem_src)), "r"(valid ? 16 : 0)
               : "memory");
#else
  *reinterpret_cast<float4*>(smem_dst) =
      valid ? *reinterpret_cast<const float4*>(gmem_src) : make_float4(0.f, 0.f, 0.f, 0.f);
#endif
}

// Closes the group of copies issued since the last commit.
__device__ __forceinline__ void copy_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most kPending groups of this thread are still in flight.
template <int kPending>
__device__ __forceinline__ void copy_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
#endif
}

// What one thread copies of every K tile, fixed for the whole kernel.
struct CopyPlan {
  const float* a;  // A at (its first row, the current tile's first k + a_k)
  const float* b;  // its first row of B at the current tile's first k (row start)
  int64_t a_pass;  // kRowsPerPassA rows of A, in floats
  int a_row;       // its first row inside the A tile
  int a_k;         // its k inside the A tile (0..7)
  int a_dst;       // sA offset of its first element: sA[a_k][a_row]
  int b_col;       // its float4 of a B row, relative to the block (0, 4, ...)
  int b_row;       // its first row of the B tile
  int b_src;       // column of B it copies (block_col + b_col); aligned path: 0 if outside
  bool b_ok;       // that float4 of B exists (aligned path; the other path checks per float)
};

// Issues the copies of one K tile into one stage. kCheck: the tile may reach past the matrix
// (the last K tile: k_left = K - first k of the tile < kBlockK; or a block on the bottom edge:
// rows_left < kBlockM); elements outside are zero-filled and read from a valid address.
// Interior tiles (almost all of them) take kCheck = false: no comparisons at all.
template <class T, bool kAligned, bool kCheck>
__device__ __forceinline__ void copy_tile(float* sA, float* sB, const CopyPlan& p, const float* A,
                                          const float* B, int n, int rows_left, int k_left) {
  // A, transposed on the way: element (row, k) lands at sA[k][row]. A 16-byte cp.async cannot
  // scatter four k values into four rows of sA, so A goes 4 bytes at a time: 8 lanes read the
  // 32 bytes of one row, a warp 4 rows, and each sector is fetched by exactly one instruction.
  const float* row_ptr = p.a;
#pragma unroll
  for (int i = 0; i < T::kPassesA; ++i) {
#pragma unroll
    for (int j = 0; j < T::kStepsA; ++j) {
      float* dst = sA + p.a_dst + 8 * j * T::kStrideA + i * T::kRowsPerPassA;
      if (kCheck) {
        const bool ok = p.a_row + i * T::kRowsPerPassA < rows_left && p.a_k + 8 * j < k_left;
        copy_4(dst, ok ? row_ptr + 8 * j : A, ok);
      } else {
        copy_4(dst, row_ptr + 8 * j, true);
      }
    }
    row_ptr += p.a_pass;
  }
  // B, row-major like global memory: one 16-byte copy per float4 when rows are 16-byte aligned
  // (N % 4 == 0), four 4-byte copies otherwise.
#pragma unroll
  for (int c = 0; c < T::kCopiesB; ++c) {
    const int row = p.b_row + c * T::kRowsPerPassB;
    const bool row_ok = !kCheck || row < k_left;
    const float* src_row = p.b + static_cast<int64_t>(c) * T::kRowsPerPassB * n;
    float* dst = sB + row * T::kBlockN + p.b_col;
    if (kAligned) {
      const bool ok = row_ok && p.b_ok;
      copy_16(dst, kCheck && !ok ? B : src_row + p.b_src, ok);
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int col = p.b_src + j;
        const bool ok = row_ok && col < n;
        copy_4(dst + j, ok ? src_row + col : B, ok);
      }
    }
  }
}

// Reads the fragments of step kk: kThreadM values of A and kThreadN of B, as float4s.
template <class T>
__device__ __forceinline__ void load_fragments(float (&rA)[T::kThreadM], float (&rB)[T::kThreadN],
                                               const float* sA, const float* sB, int a_off,
                                               int b_off, int kk) {
#pragma unroll
  for (int g = 0; g < T::kThreadM / 4; ++g) {
    const float4 v =
        *reinterpret_cast<const float4*>(sA + kk * T::kStrideA + a_off + g * T::kLanesM * 4);
    rA[4 * g + 0] = v.x;
    rA[4 * g + 1] = v.y;
    rA[4 * g + 2] = v.z;
    rA[4 * g + 3] = v.w;
  }
#pragma unroll
  for (int h = 0; h < T::kThreadN / 4; ++h) {
    const float4 v =
        *reinterpret_cast<const float4*>(sB + kk * T::kBlockN + b_off + h * T::kLanesN * 4);
    rB[4 * h + 0] = v.x;
    rB[4 * h + 1] = v.y;
    rB[4 * h + 2] = v.z;
    rB[4 * h + 3] = v.w;
  }
}

// The outer product of one k step: kThreadM x kThreadN FMAs, no loads.
template <class T>
__device__ __forceinline__ void outer_product(float (&acc)[T::kThreadM][T::kThreadN],
                                              const float (&rA)[T::kThreadM],
                                              const float (&rB)[T::kThreadN]) {
#pragma unroll
  for (int i = 0; i < T::kThreadM; ++i) {
#pragma unroll
    for (int j = 0; j < T::kThreadN; ++j) acc[i][j] = fmaf(rA[i], rB[j], acc[i][j]);
  }
}

// kAligned: N % 4 == 0, so rows of B and C start on 16 bytes and take float4 accesses.
template <class T, bool kAligned>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocksPerSm)
    sgemm_double_buffered(int m, int n, int k, float alpha, const float* __restrict__ A,
                          const float* __restrict__ B, float beta, float* __restrict__ C) {
  extern __shared__ float4 smem_raw[];  // float4: 16-byte aligned for LDS.128 and cp.async
  float* const smem = reinterpret_cast<float*>(smem_raw);
  // Stage s: sA = smem + s * kStageFloats (kBlockK x kStrideA), sB right after it.
  constexpr int kSizeA = T::kBlockK * T::kStrideA;

  const int tid = threadIdx.x;
  const int block_row = blockIdx.y * T::kBlockM;  // < 65535 * kBlockM: the launcher's slabs
  const int block_col = blockIdx.x * T::kBlockN;

  // Which part of C this thread computes (chapter 05): warps tile the block, and inside a warp
  // lane bit 0 picks the row and the next bits the column, so lanes 2i and 2i+1 read the same
  // B vector and lanes i and i^2 the same A vector: each LDS.128 takes 2 shared-memory
  // wavefronts instead of 4.
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int lane_m = (lane & 1) | ((lane >> (1 + T::kLanesNLog2)) << 1);
  const int lane_n = (lane >> 1) & (T::kLanesN - 1);
  const int a_off = (warp / T::kWarpsN) * T::kWarpM + lane_m * 4;  // sA column of rA[0]
  const int b_off = (warp % T::kWarpsN) * T::kWarpN + lane_n * 4;  // sB column of rB[0]

  // Prologue 1: the copy plan (which elements this thread copies). With N % 4 == 0 a float4 of B
  // outside the matrix is resolved once (zero-filled, read from column 0); otherwise each float
  // is checked. Rows of A outside the matrix only exist in the bottom row of blocks, which copies
  // every tile with checks (edge_m).
  CopyPlan plan;
  const int rows_left = m - block_row;
  const bool edge_m = rows_left < T::kBlockM;
  {
    plan.a_row = tid / 8;
    plan.a_k = tid % 8;
    plan.a_pass = static_cast<int64_t>(T::kRowsPerPassA) * k;
    plan.a = A + static_cast<int64_t>(block_row + plan.a_row) * k + plan.a_k;
    plan.a_dst = plan.a_k * T::kStrideA + plan.a_row;
    plan.b_row = tid / T::kThreadsPerRowB;
    plan.b_col = (tid % T::kThreadsPerRowB) * 4;
    plan.b = B + static_cast<int64_t>(plan.b_row) * n;
    // Aligned (N % 4 == 0): the float4 lies wholly inside or wholly outside the matrix.
    plan.b_ok = block_col + plan.b_col < n;
    plan.b_src = kAligned && !plan.b_ok ? 0 : block_col + plan.b_col;
  }

  const int num_tiles = sgemm::ceil_div(k, T::kBlockK);

  // Prologue 2: start the first kStages - 1 tiles. Every iteration commits exactly one group
  // (empty past the last tile), so "tile t has landed" is always "at most kStages - 2 groups
  // pending", whether the number of tiles is odd, even, or smaller than the pipeline.
#pragma unroll
  for (int s = 0; s < T::kStages - 1; ++s) {
    if (s < num_tiles) {
      float* sA = smem + s * T::kStageFloats;
      if (s == num_tiles - 1 || edge_m) {
        copy_tile<T, kAligned, true>(sA, sA + kSizeA, plan, A, B, n, rows_left, k - s * T::kBlockK);
      } else {
        copy_tile<T, kAligned, false>(sA, sA + kSizeA, plan, A, B, n, rows_left,
                                      k - s * T::kBlockK);
      }
      plan.a += T::kBlockK;
      plan.b += static_cast<int64_t>(T::kBlockK) * n;
    }
    copy_commit();
  }

  float acc[T::kThreadM][T::kThreadN] = {};
  float rA[2][T::kThreadM];
  float rB[2][T::kThreadN];

  copy_wait<T::kStages - 2>();
  __syncthreads();
  if constexpr (kRegisterDoubleBuffer) {
    load_fragments<T>(rA[0], rB[0], smem, smem + kSizeA, a_off, b_off, 0);
  }

  // Main loop: compute tile t out of stage read_stage while tiles t+1 .. t+kStages-1 are in
  // flight. The stage written now, write_stage, held tile t-1: every thread finished reading it
  // before the barrier at the end of the previous iteration.
  int read_stage = 0;
  int write_stage = T::kStages - 1;
  for (int t = 0; t < num_tiles; ++t) {
    const int next = t + T::kStages - 1;
    if (next < num_tiles) {
      float* sA = smem + write_stage * T::kStageFloats;
      if (next == num_tiles - 1 || edge_m) {
        copy_tile<T, kAligned, true>(sA, sA + kSizeA, plan, A, B, n, rows_left,
                                     k - next * T::kBlockK);
      } else {
        copy_tile<T, kAligned, false>(sA, sA + kSizeA, plan, A, B, n, rows_left,
                                      k - next * T::kBlockK);
      }
      plan.a += T::kBlockK;
      plan.b += static_cast<int64_t>(T::kBlockK) * n;
    }
    copy_commit();

    const float* sA = smem + read_stage * T::kStageFloats;
    if constexpr (kRegisterDoubleBuffer) {
#pragma unroll
      for (int kk = 0; kk < T::kBlockK; ++kk) {
        if (kk < T::kBlockK - 1) {
          // Register double buffering: fetch step kk + 1 while step kk computes.
          load_fragments<T>(rA[(kk + 1) % 2], rB[(kk + 1) % 2], sA, sA + kSizeA, a_off, b_off,
                            kk + 1);
        } else if (t + 1 < num_tiles) {
          // Last step of the tile: wait for tile t+1, then fetch its first fragments before the
          // last FMAs of this tile, so the barrier's latency overlaps them.
          copy_wait<T::kStages - 2>();
          __syncthreads();
          read_stage = read_stage + 1 == T::kStages ? 0 : read_stage + 1;
          write_stage = write_stage + 1 == T::kStages ? 0 : write_stage + 1;
          const float* sA_next = smem + read_stage * T::kStageFloats;
          load_fragments<T>(rA[0], rB[0], sA_next, sA_next + kSizeA, a_off, b_off, 0);
        }
        outer_product<T>(acc, rA[kk % 2], rB[kk % 2]);
      }
    } else {
      // TUTORIAL: the plain loop. Each step's FMAs wait for its own fragment loads; only the
      // copies of later tiles overlap the compute.
#pragma unroll
      for (int kk = 0; kk < T::kBlockK; ++kk) {
        load_fragments<T>(rA[0], rB[0], sA, sA + kSizeA, a_off, b_off, kk);
        outer_product<T>(acc, rA[0], rB[0]);
      }
      if (t + 1 < num_tiles) {
        // Tile t+1 has landed, and every thread is done with stage read_stage.
        copy_wait<T::kStages - 2>();
        __syncthreads();
        read_stage = read_stage + 1 == T::kStages ? 0 : read_stage + 1;
        write_stage = write_stage + 1 == T::kStages ? 0 : write_stage + 1;
      }
    }
  }

  // Epilogue: C = alpha * acc + beta * C. With beta == 0, C is never read (it may hold NaN).
  // Thread rows: a_off + g * kLanesM * 4 + i; columns: b_off + h * kLanesN * 4 + (0..3).
#pragma unroll
  for (int g = 0; g < T::kThreadM / 4; ++g) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int row = block_row + a_off + g * T::kLanesM * 4 + i;
      if (row >= m) continue;
      float* c_row = C + static_cast<int64_t>(row) * n;
#pragma unroll
      for (int h = 0; h < T::kThreadN / 4; ++h) {
        const int col = block_col + b_off + h * T::kLanesN * 4;
        const float* v = &acc[4 * g + i][4 * h];
        if (kAligned && col < n) {
          float4 out = make_float4(alpha * v[0], alpha * v[1], alpha * v[2], alpha * v[3]);
          if (beta != 0.0f) {
            const float4 old = *reinterpret_cast<const float4*>(c_row + col);
            out.x += beta * old.x;
            out.y += beta * old.y;
            out.z += beta * old.z;
            out.w += beta * old.w;
          }
          *reinterpret_cast<float4*>(c_row + col) = out;
        } else if (!kAligned) {
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            if (col + j < n) {
              c_row[col + j] = beta != 0.0f ? alpha * v[j] + beta * c_row[col + j] : alpha * v[j];
            }
          }
        }
      }
    }
  }
}

// Launches the kernel over the whole problem: only the grid, and the shared-memory allowance.
void launch_double_buffered(const sgemm::Problem& p, const float* A, const float* B, float* C,
                            cudaStream_t stream) {
  using T = MainTile;
  const bool aligned = p.n % 4 == 0;  // cudaMalloc pointers are 256-byte aligned
  auto* kernel = aligned ? &sgemm_double_buffered<T, true> : &sgemm_double_buffered<T, false>;
  if (T::kSmemBytes > 48 * 1024) {
    // Above 48 KB, dynamic shared memory must be allowed explicitly, once per kernel.
    static const bool raised = [] {
      CUDA_CHECK(cudaFuncSetAttribute(sgemm_double_buffered<T, true>,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes));
      CUDA_CHECK(cudaFuncSetAttribute(sgemm_double_buffered<T, false>,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes));
      return true;
    }();
    (void)raised;
  }
  // Rows of blocks go on gridDim.y (at most 65535): a taller C runs as several row slabs.
  sgemm::for_each_row_slab(p, T::kBlockM, [&](int64_t row0, int rows) {
    const dim3 grid(sgemm::ceil_div(p.n, T::kBlockN), sgemm::ceil_div(rows, T::kBlockM));
    kernel<<<grid, T::kThreads, T::kSmemBytes, stream>>>(rows, p.n, p.k, p.alpha, A + row0 * p.k, B,
                                                         p.beta, C + row0 * p.n);
  });
}

}  // namespace

int main(int argc, char** argv) {
  // The title carries the tile, so tuning runs of other SGEMM_TILE values tell themselves apart.
  static const std::string title =
      "double buffering (cp.async, " + std::to_string(kTile.stages) + " stages" +
      (kRegisterDoubleBuffer ? "" : ", no register double buffering") +
      "), BM x BN x BK = " + std::to_string(kTile.block_m) + "x" + std::to_string(kTile.block_n) +
      "x" + std::to_string(kTile.block_k) + ", warp " + std::to_string(kTile.warp_m) + "x" +
      std::to_string(kTile.warp_n) + ", thread " + std::to_string(kTile.thread_m) + "x" +
      std::to_string(kTile.thread_n);
  const sgemm::Chapter chapter{"06_double_buffer", title.c_str(), &launch_double_buffered,
                               kTile.block_m, kTile.block_n};
  return sgemm::run_chapter(chapter, argc, argv);
}
