// SPDX-License-Identifier: MIT
// SGEMM tutorial, chapter 08: tensor cores (TF32 mma.sync).
//
//   00 naive -> 01 coalescing -> 02 smem tiling -> 03 thread tiling -> 04 vectorized
//   -> 05 bank conflicts -> 06 double buffer -> 07 any shape -> [08 tensor cores] -> 09 3xTF32
//
// Chapters 00-07 multiply on the FP32 CUDA cores. Here the multiply-adds go to the tensor cores:
// one warp-wide `mma.sync.aligned.m16n8k8` multiplies a 16 x 8 tile of A by an 8 x 8 tile of B
// into a 16 x 8 tile of C, 1024 multiply-adds in one instruction. Its inputs are TF32: FP32's
// sign and 8-bit exponent with only 10 of its 23 mantissa bits, so every element of A and B is
// rounded (to_tf32) before it is multiplied; products and sums are FP32. The loads are
// chapter 06's cp.async pipeline, now with 16-byte copies for A as well (A is kept row-major in
// shared memory, the layout the mma wants), and the shared-memory rows are padded so that the
// fragment loads (ldmatrix for A, 4-byte loads for B) are free of bank conflicts.
// On Hopper (sm_90a code on a compute capability 9.0 GPU) mma.sync is capped below cuBLAS, and the
// launcher takes a second kernel instead: the same product through wgmma.mma_async, the
// warpgroup instruction that reads one operand straight from (swizzled) shared memory and runs
// asynchronously (the "Hopper" section below).
// Precision contract: TF32 (the harness verifies with a TF32 tolerance and compares the speed
// with cuBLAS CUBLAS_COMPUTE_32F_FAST_TF32). Chapter 09 wins FP32 accuracy back.
// Limits: sm_80 or newer (TF32 mma.sync); wgmma on sm_90a; every shape, 16-byte copies where
// K % 4 == 0 (A) and N % 4 == 0 (B), 4-byte copies otherwise.
// Example: build/bin/08_tensor_cores --size 4096

#include <cstdint>
#include <string>
#include <type_traits>

#include <cuda_runtime.h>

#include "common/grid.h"
#include "common/harness.h"

// Tile shape (BM, BN, BK, WM, WN, STAGES), chosen on the H100: README.md, "Choosing the tile".
// The tuning build (-DSGEMM_TUNING=ON) compiles this file again with other SGEMM_TILE values.
// A tuning build that sets SGEMM_TILE measures a tile of the mma.sync kernel: it keeps that kernel.
#if defined(SGEMM_TILE) && !defined(SGEMM_WGMMA)
#define SGEMM_WGMMA 0
#endif
#ifndef SGEMM_TILE
#define SGEMM_TILE 128, 256, 32, 64, 64, 3
#endif
// Attribution switches (README.md, "Results"): SGEMM_VECTOR_B = 1 reads the B fragments as
// float4s (columns permuted, see warp_column()) instead of one 4-byte load per value: a quarter
// of the load instructions, no bank conflicts either way, and measured slower on the H100.
// SGEMM_ROUND_TF32 = 0 skips the rounding to TF32 (the tensor core then truncates: 2.7x the
// error, shown only to price the rounding); 2 rounds with cvt.rna.tf32.f32 (see to_tf32()).
#ifndef SGEMM_VECTOR_B
#define SGEMM_VECTOR_B 0
#endif
#ifndef SGEMM_ROUND_TF32
#define SGEMM_ROUND_TF32 1
#endif

namespace {

using sgemm::ceil_div;

// The tensor-core instruction's tile: mma.sync.aligned.m16n8k8 (TF32 in, FP32 out).
constexpr int kMmaM = 16;
constexpr int kMmaN = 8;
constexpr int kMmaK = 8;

// Everything the kernel derives from the tile shape, checked at compile time so that a bad
// candidate of the tuning build fails to compile instead of failing at run time.
template <int kBlockM_, int kBlockN_, int kBlockK_, int kWarpM_, int kWarpN_, int kStages_>
struct Tile {
  static constexpr int kBlockM = kBlockM_;  // rows of C per block
  static constexpr int kBlockN = kBlockN_;  // columns of C per block
  static constexpr int kBlockK = kBlockK_;  // depth of one K tile (one pipeline stage)
  static constexpr int kWarpM = kWarpM_;    // rows of C per warp
  static constexpr int kWarpN = kWarpN_;    // columns of C per warp
  static constexpr int kStages = kStages_;  // K tiles held in shared memory at once

  static constexpr int kWarpsM = kBlockM / kWarpM;
  static constexpr int kWarpsN = kBlockN / kWarpN;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int kFragsM = kWarpM / kMmaM;  // mma tiles of a warp along M ...
  static constexpr int kFragsN = kWarpN / kMmaN;  // ... and along N

  // B fragments as float4s: a thread's kFragsN values of one k row sit side by side in sB
  // (columns permuted, see warp_column()), so it reads them with kFragsN / 4 LDS.128.
  static constexpr bool kVectorB = SGEMM_VECTOR_B;

  // sA[m][k]: rows of kBlockK + 4 floats. The 8 rows an ldmatrix phase reads (16 bytes each) then
  // start 4 banks apart and cover all 32 banks. sB[k][n]: rows padded so that the B fragment
  // loads of a warp cover 32 banks per phase: with 4-byte loads (k = lane % 4, n = lane / 4) rows
  // 8 banks apart; with LDS.128 (8 lanes per phase: 4 rows x 2 column groups) rows 8 banks apart
  // for kFragsN = 4 and 4 banks apart for kFragsN = 8 (README.md, "Shared memory without bank
  // conflicts").
  static constexpr int kStrideA = kBlockK + 4;
  static constexpr int kStrideB = kBlockN + (kVectorB && kWarpN / kMmaN == 8 ? 4 : 8);
  static constexpr int kSizeA = kBlockM * kStrideA;
  static constexpr int kStageFloats = kSizeA + kBlockK * kStrideB;
  static constexpr int kSmemBytes = kStages * kStageFloats * static_cast<int>(sizeof(float));

  // Copy plan: rows of both tiles go in 16-byte chunks (4 floats); consecutive threads take
  // consecutive chunks of a row, so a warp reads whole 32-byte sectors of global memory.
  static constexpr int kChunksA = kBlockK / 4;  // chunks per row of the A tile
  static constexpr int kRowsPerPassA = kThreads / kChunksA;
  static constexpr int kPassesA = kBlockM / kRowsPerPassA;
  static constexpr int kChunksB = kBlockN / 4;  // chunks per row of the B tile
  static constexpr int kRowsPerPassB = kThreads / kChunksB;
  static constexpr int kPassesB = kBlockK / kRowsPerPassB;

  // A 128-thread block of 64 x 64 warps (128 accumulators per thread) may use 255 registers and
  // still fit twice per SM (2 x 128 x 256 = 65536); 256-thread blocks run one per SM.
  static constexpr int kMinBlocksPerSm =
      kThreads <= 128 && 2 * (kSmemBytes + 1024) <= 228 * 1024 ? 2 : 1;

  static_assert(kBlockM % kWarpM == 0 && kBlockN % kWarpN == 0, "warps must tile the block");
  static_assert(kWarpM % kMmaM == 0 && kWarpN % kMmaN == 0, "mma tiles must tile the warp");
  static_assert(kBlockK % kMmaK == 0, "a K tile is a whole number of mma k-steps");
  static_assert(kThreads <= 1024, "at most 1024 threads per block");
  static_assert(kBlockN % 32 == 0, "sB rows of 32j + 4 or 8 floats keep the b loads conflict-free");
  static_assert(!kVectorB || kFragsN == 4 || kFragsN == 8,
                "the float4 B fragment layout is worked out for 32- and 64-column warp tiles");
  static_assert(kThreads % kChunksA == 0 && kBlockM % kRowsPerPassA == 0,
                "every thread copies the same number of chunks of A");
  static_assert(kThreads % kChunksB == 0 && kBlockK % kRowsPerPassB == 0,
                "every thread copies the same number of chunks of B");
  static_assert(kStages >= 2, "a pipeline needs at least two stages");
  static_assert(kSmemBytes <= 227 * 1024, "shared memory per block is limited to 227 KB");
};

struct TileShape {
  int block_m, block_n, block_k, warp_m, warp_n, stages;
};
constexpr TileShape kTile{SGEMM_TILE};
using MainTile =
    Tile<kTile.block_m, kTile.block_n, kTile.block_k, kTile.warp_m, kTile.warp_n, kTile.stages>;
// For problems whose big tiles would leave SMs idle (README.md, "Small problems").
using SmallTile = Tile<64, 128, 32, 32, 64, 3>;

// ---- cp.async: asynchronous global -> shared copies (chapter 06) ------------------------------
// A copy with valid == false reads nothing and writes zeros (src-size 0): the tile edges.

__device__ __forceinline__ void copy_4(float* smem_dst, const float* gmem_src, bool valid) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst),
               "l"(__cvta_generic_to_global(gmem_src)), "r"(valid ? 4 : 0)
               : "memory");
}

__device__ __forceinline__ void copy_16(float* smem_dst, const float* gmem_src, bool valid) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst),
               "l"(__cvta_generic_to_global(gmem_src)), "r"(valid ? 16 : 0)
               : "memory");
}

__device__ __forceinline__ void copy_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

template <int kPending>
__device__ __forceinline__ void copy_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// ---- The tensor-core side ----------------------------------------------------------------------

// FP32 -> TF32, rounded to nearest (ties away from zero): add half a TF32 unit (2^12 in the bit
// pattern) to every finite value. The tensor core reads only the 19 high bits of a TF32 operand
// (sign, exponent, 10 mantissa bits) and ignores the 13 low ones, so they may stay as the add
// left them. cvt.rna.tf32.f32 computes the same rounding and then clears the low bits: on sm_90
// ptxas emits it as a compare (FSETP: Inf and NaN are left alone), a predicated add and a LOP3;
// this is the first two, and measured 3-6 % faster at 4096^3 and 8192^3 (README.md, "Results").
// Without any rounding the tensor core would truncate: 2.7x the error.
__device__ __forceinline__ uint32_t to_tf32(float x) {
#if SGEMM_ROUND_TF32 == 1
  uint32_t r;
  asm("{\n.reg .pred p;\n.reg .f32 a;\nabs.f32 a, %1;\nsetp.lt.f32 p, a, 0f7F800000;\n"
      "mov.b32 %0, %1;\n@p add.u32 %0, %0, 4096;\n}\n"
      : "=r"(r)
      : "f"(x));
  return r;
#elif SGEMM_ROUND_TF32 == 2
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
#else
  return __float_as_uint(x);
#endif
}

// Column of a warp's C tile (and of its B tile) that holds column x (0..7) of mma n-tile j. The
// mma does not care which columns of B it is given, as long as C's columns follow the same map.
// Plain: 8j + x. kVectorB: kFragsN * p(x) + j, so lane group g = x finds its kFragsN values of a
// k row side by side; p swaps bits 0 and 1 of x when kFragsN = 8, which puts the two lane groups
// of one LDS.128 phase 16 banks apart (README.md, "Shared memory without bank conflicts").
template <class T>
__host__ __device__ constexpr int warp_column(int j, int x) {
  if (!T::kVectorB) return kMmaN * j + x;
  const int p = T::kFragsN == 8 ? (x & 4) | ((x & 1) << 1) | ((x >> 1) & 1) : x;
  return T::kFragsN * p + j;
}

// Four 8 x 4 tiles of 32-bit values from shared memory, one per register: lanes 8q .. 8q + 7
// give the row addresses of tile q, and lane l receives row l / 4, column l % 4 of each. For A
// the four tiles are (rows 0-7, k 0-3), (rows 8-15, k 0-3), (rows 0-7, k 4-7), (rows 8-15, k 4-7)
// of a 16 x 8 block: exactly the m16n8k8 fragment a0..a3, in one instruction instead of four.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t smem_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr));
}

// d += a * b on a 16 x 8 x 8 tile. Fragments (g = lane / 4, t = lane % 4; PTX ISA, "Matrix
// fragments for mma.m16n8k8", .tf32): a0 = A[g][t], a1 = A[g+8][t], a2 = A[g][t+4],
// a3 = A[g+8][t+4]; b0 = B[t][g], b1 = B[t+4][g]; d0 = C[g][2t], d1 = C[g][2t+1],
// d2 = C[g+8][2t], d3 = C[g+8][2t+1].
__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4],
                                         const uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  __trap();  // TF32 tensor cores need sm_80 or newer
#endif
}

// What one thread copies of every K tile, fixed for the whole kernel.
struct CopyPlan {
  const float* a;  // A at (its first row, the current tile's first k + a_col)
  const float* b;  // B at (its first row of the current tile, column 0)
  int64_t a_pass;  // kRowsPerPassA rows of A, in floats
  int a_row;       // its first row inside the A tile
  int a_col;       // its first k inside the A tile (a multiple of 4)
  int a_dst;       // sA offset of its first chunk
  int b_row;       // its first row inside the B tile
  int b_col;       // its first column inside the B tile (a multiple of 4)
  int b_src;       // column of B it copies: block_col + b_col
  int b_dst;       // sB offset of its first chunk
};

// Issues the copies of one K tile into one stage. kCheck: the tile may reach past the matrix
// (the last K tile, k_left < kBlockK, or a block on the bottom edge, rows_left < kBlockM);
// elements outside are zero-filled and read from a valid address. Columns of B past N are
// checked on every tile (only blocks on the right edge have any).
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
      copy_16(dst, ok ? src : A, ok);
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const bool ok = row_ok && (!kCheck || p.a_col + j < k_left);
        copy_4(dst + j, ok ? src + j : A, ok);
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
      copy_16(dst, ok ? src_row + p.b_src : B, ok);
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const bool ok = row_ok && p.b_src + j < n;
        copy_4(dst + j, ok ? src_row + p.b_src + j : B, ok);
      }
    }
  }
}

// This thread's share of every K tile's copies, fixed for the whole kernel. kSwizzleA: A's
// 16-byte chunk c of row r goes to chunk c ^ (r % 8) of its 128-byte row (the wgmma kernel's
// layout); otherwise to chunk c of its padded row.
template <class T, bool kSwizzleA>
__device__ __forceinline__ CopyPlan make_copy_plan(int tid, const float* A, const float* B, int k,
                                                   int block_row, int block_col) {
  CopyPlan plan;
  plan.a_row = tid / T::kChunksA;
  plan.a_col = (tid % T::kChunksA) * 4;
  plan.a_pass = static_cast<int64_t>(T::kRowsPerPassA) * k;
  plan.a = A + static_cast<int64_t>(block_row + plan.a_row) * k + plan.a_col;
  plan.a_dst = plan.a_row * T::kStrideA +
               (kSwizzleA ? ((tid % T::kChunksA) ^ (plan.a_row % 8)) * 4 : plan.a_col);
  plan.b_row = tid / T::kChunksB;
  plan.b_col = (tid % T::kChunksB) * 4;
  plan.b = B;
  plan.b_src = block_col + plan.b_col;
  plan.b_dst = plan.b_row * T::kStrideB + plan.b_col;
  return plan;
}

// Issues the copies of one K tile into the stage at sA (sB follows at kSizeA) and moves the plan
// on to the next tile. check: the tile may reach past the matrix (the last K tile, or a block on
// the bottom edge), so its copies test their bounds.
template <class T, bool kAlignedK, bool kAlignedN>
__device__ __forceinline__ void issue_tile(float* sA, CopyPlan& plan, const float* A,
                                           const float* B, int n, int rows_left, int k_left,
                                           bool check) {
  if (check) {
    copy_tile<T, kAlignedK, kAlignedN, true>(sA, sA + T::kSizeA, plan, A, B, n, rows_left, k_left);
  } else {
    copy_tile<T, kAlignedK, kAlignedN, false>(sA, sA + T::kSizeA, plan, A, B, n, rows_left,
                                              k_left);
  }
  plan.a += T::kBlockK;
  plan.b += static_cast<int64_t>(T::kBlockK) * n;
}

// kAlignedK: K % 4 == 0 (rows of A start on 16 bytes); kAlignedN: N % 4 == 0 (rows of B and C).
template <class T, bool kAlignedK, bool kAlignedN>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocksPerSm)
    sgemm_tensor_cores(int m, int n, int k, float alpha, const float* __restrict__ A,
                       const float* __restrict__ B, float beta, float* __restrict__ C) {
  extern __shared__ float4 smem_raw[];  // float4: 16-byte aligned for cp.async and ldmatrix
  float* const smem = reinterpret_cast<float*>(smem_raw);
  // Stage s: sA = smem + s * kStageFloats (kBlockM x kStrideA), sB right after it.

  const int tid = threadIdx.x;
  const int block_row = blockIdx.y * T::kBlockM;  // < 65535 * kBlockM: the launcher's slabs
  const int block_col = blockIdx.x * T::kBlockN;
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int warp_row = (warp / T::kWarpsN) * T::kWarpM;  // the warp's C tile inside the block
  const int warp_col = (warp % T::kWarpsN) * T::kWarpN;
  const int g = lane / 4;  // fragment row group (PTX: groupID)
  const int t = lane % 4;  // fragment column (PTX: threadID_in_group)

  // Prologue 1: the copy plan.
  const int rows_left = m - block_row;
  const bool edge_m = rows_left < T::kBlockM;
  CopyPlan plan = make_copy_plan<T, false>(tid, A, B, k, block_row, block_col);

  // Fragment addresses inside a stage. ldmatrix: lane l gives the address of row l % 8 of tile
  // l / 8, i.e. row (l % 8) + 8 * ((l / 8) % 2), k 4 * (l / 16) of each 16 x 8 block of A.
  const uint32_t smem_base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const int ld_row = warp_row + (lane % 8) + 8 * ((lane / 8) % 2);
  const int ld_col = 4 * (lane / 16);
  const uint32_t a_frag = smem_base + (ld_row * T::kStrideA + ld_col) * sizeof(float);
  const int b_frag = T::kSizeA + t * T::kStrideB + warp_col + warp_column<T>(0, g);  // b0, j = 0

  const int num_tiles = ceil_div(k, T::kBlockK);

  auto issue = [&](int tile, int stage) {
    issue_tile<T, kAlignedK, kAlignedN>(smem + stage * T::kStageFloats, plan, A, B, n, rows_left,
                                        k - tile * T::kBlockK, tile == num_tiles - 1 || edge_m);
  };

  // Prologue 2: start the first kStages - 1 tiles. Every iteration commits exactly one group
  // (empty past the last tile), so "tile t has landed" is always "at most kStages - 2 groups
  // pending", whatever the number of tiles (chapter 06).
#pragma unroll
  for (int s = 0; s < T::kStages - 1; ++s) {
    if (s < num_tiles) issue(s, s);
    copy_commit();
  }

  float acc[T::kFragsM][T::kFragsN][4] = {};

  // Main loop. Iteration t: wait until tile t has landed; the barrier also says every warp has
  // finished computing tile t - 1, whose stage is then refilled with tile t + kStages - 1 while
  // tile t is computed.
  int read_stage = 0;
  int write_stage = T::kStages - 1;
  for (int tile = 0; tile < num_tiles; ++tile) {
    copy_wait<T::kStages - 2>();
    __syncthreads();
    if (tile + T::kStages - 1 < num_tiles) issue(tile + T::kStages - 1, write_stage);
    copy_commit();

    const uint32_t a_stage = a_frag + read_stage * T::kStageFloats * sizeof(float);
    const float* b_stage = smem + read_stage * T::kStageFloats + b_frag;
#pragma unroll
    for (int kk = 0; kk < T::kBlockK; kk += kMmaK) {
      // Fragments of this k-step: one ldmatrix per 16 x 8 block of A, two loads per 8 x 8 block
      // of B, each value rounded to TF32.
      uint32_t rA[T::kFragsM][4];
      uint32_t rB[T::kFragsN][2];
#pragma unroll
      for (int i = 0; i < T::kFragsM; ++i) {
        ldmatrix_x4(rA[i], a_stage + (i * kMmaM * T::kStrideA + kk) * sizeof(float));
#pragma unroll
        for (int r = 0; r < 4; ++r) rA[i][r] = to_tf32(__uint_as_float(rA[i][r]));
      }
      if constexpr (T::kVectorB) {
#pragma unroll
        for (int r = 0; r < 2; ++r) {
#pragma unroll
          for (int q = 0; q < T::kFragsN / 4; ++q) {
            const float4 v =
                *reinterpret_cast<const float4*>(b_stage + (kk + 4 * r) * T::kStrideB + 4 * q);
            rB[4 * q + 0][r] = to_tf32(v.x);
            rB[4 * q + 1][r] = to_tf32(v.y);
            rB[4 * q + 2][r] = to_tf32(v.z);
            rB[4 * q + 3][r] = to_tf32(v.w);
          }
        }
      } else {
#pragma unroll
        for (int j = 0; j < T::kFragsN; ++j) {
          rB[j][0] = to_tf32(b_stage[kk * T::kStrideB + j * kMmaN]);
          rB[j][1] = to_tf32(b_stage[(kk + 4) * T::kStrideB + j * kMmaN]);
        }
      }
#pragma unroll
      for (int i = 0; i < T::kFragsM; ++i) {
#pragma unroll
        for (int j = 0; j < T::kFragsN; ++j) mma_tf32(acc[i][j], rA[i], rB[j]);
      }
    }
    read_stage = read_stage + 1 == T::kStages ? 0 : read_stage + 1;
    write_stage = write_stage + 1 == T::kStages ? 0 : write_stage + 1;
  }

  // Epilogue: C = alpha * acc + beta * C. With beta == 0, C is never read (it may hold NaN).
  // acc[i][j] holds rows 16i + g (registers 0, 1) and 16i + g + 8 (2, 3), columns
  // warp_column(j, 2t) (registers 0, 2) and warp_column(j, 2t + 1) (1, 3): a pair of
  // neighbours (8j + 2t, 8j + 2t + 1) in the plain layout, float2 stores; with kVectorB the
  // kFragsN values of one row and one column parity are consecutive, float4 stores.
#pragma unroll
  for (int i = 0; i < T::kFragsM; ++i) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = block_row + warp_row + i * kMmaM + g + 8 * half;
      if (row >= m) continue;
      float* c_row = C + static_cast<int64_t>(row) * n;
      if constexpr (T::kVectorB) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
#pragma unroll
          for (int q = 0; q < T::kFragsN; q += 4) {
            // Columns col .. col + 3 hold n-tiles q .. q + 3.
            const int col = block_col + warp_col + warp_column<T>(q, 2 * t + e);
            float v[4];
#pragma unroll
            for (int u = 0; u < 4; ++u) v[u] = alpha * acc[i][q + u][2 * half + e];
            if (kAlignedN) {
              // N % 4 == 0 and col % 4 == 0: the float4 lies wholly inside or outside C.
              if (col >= n) continue;
              float4 out = make_float4(v[0], v[1], v[2], v[3]);
              if (beta != 0.0f) {
                const float4 old = *reinterpret_cast<const float4*>(c_row + col);
                out.x += beta * old.x;
                out.y += beta * old.y;
                out.z += beta * old.z;
                out.w += beta * old.w;
              }
              *reinterpret_cast<float4*>(c_row + col) = out;
            } else {
#pragma unroll
              for (int u = 0; u < 4; ++u) {
                if (col + u < n)
                  c_row[col + u] = beta != 0.0f ? v[u] + beta * c_row[col + u] : v[u];
              }
            }
          }
        }
      } else {
#pragma unroll
        for (int j = 0; j < T::kFragsN; ++j) {
          const int col = block_col + warp_col + j * kMmaN + 2 * t;
          const float v0 = alpha * acc[i][j][2 * half];
          const float v1 = alpha * acc[i][j][2 * half + 1];
          if (kAlignedN) {
            // N even: col < n implies col + 1 < n, and the pair starts on 8 bytes.
            if (col >= n) continue;
            float2 out = make_float2(v0, v1);
            if (beta != 0.0f) {
              const float2 old = *reinterpret_cast<const float2*>(c_row + col);
              out.x += beta * old.x;
              out.y += beta * old.y;
            }
            *reinterpret_cast<float2*>(c_row + col) = out;
          } else {
            if (col < n) c_row[col] = beta != 0.0f ? v0 + beta * c_row[col] : v0;
            if (col + 1 < n) c_row[col + 1] = beta != 0.0f ? v1 + beta * c_row[col + 1] : v1;
          }
        }
      }
    }
  }
}

// ==== Hopper (sm_90a): the same product through wgmma ==========================================
// On the H100 mma.sync is capped at 325 TFLOP/s (README.md, "The mma.sync ceiling"), 81 % of
// cuBLAS TF32, which uses Hopper's warpgroup instruction instead: wgmma.mma_async, issued by the
// four warps of a warpgroup together, reads its B operand straight from shared memory (no
// fragment loads) and runs asynchronously, so the warps load the next fragments while it works.
// For TF32, wgmma takes both operands K-major (k contiguous). A is (rows of A have k contiguous),
// B is not (its rows have n contiguous). So the kernel computes C^T = B^T A^T: B^T is the
// register operand, loaded by the lanes in exactly the fragment layout of mma.sync's A above,
// with the same conflict-free 4-byte loads and rounding as the B fragments of the mma.sync
// kernel, and A is the shared-memory operand, read by wgmma through a descriptor.
// README.md, "Hopper: wgmma", walks through it.

// wgmma exists only in code compiled for sm_90a (the "a": features of this architecture only).
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define SGEMM_WGMMA_BUILT 1
#else
#define SGEMM_WGMMA_BUILT 0
#endif
// SGEMM_WGMMA = 0 keeps the mma.sync kernel on the H100 too (README.md, "Results").
#ifndef SGEMM_WGMMA
#define SGEMM_WGMMA 1
#endif
#ifndef SGEMM_WGMMA_IN_FLIGHT
#define SGEMM_WGMMA_IN_FLIGHT 1
#endif

// 1 in the machine code the driver loaded for this GPU when that code holds the wgmma kernel, 0
// in code for other architectures, where the kernel below is only a stub; the launcher reads it.
__device__ int wgmma_built = SGEMM_WGMMA_BUILT;

// The Hopper tile. A warpgroup (128 threads) owns 64 columns of C; each wgmma.m64n128k8 gives
// it 128 rows (its "N"); kBlockM / 128 of them cover the block's rows. kBlockK = 32 floats is one
// 128-byte row, the width of the shared-memory swizzle wgmma reads.
template <int kBlockM_, int kBlockN_, int kStages_>
struct HopperTile {
  static constexpr int kBlockM = kBlockM_;  // rows of C per block
  static constexpr int kBlockN = kBlockN_;  // columns of C per block
  static constexpr int kBlockK = 32;        // depth of one K tile: 128 bytes of floats
  static constexpr int kStages = kStages_;  // K tiles held in shared memory at once
  static constexpr int kWgmmaN = 128;       // rows of C per wgmma (its N)
  static constexpr int kWgmmasM = kBlockM / kWgmmaN;
  static constexpr int kWarpgroups = kBlockN / 64;
  static constexpr int kThreads = 128 * kWarpgroups;

  // sA[m][k]: rows of 32 floats (128 bytes), 16-byte chunk c of row r stored at chunk c ^ (r % 8)
  // (the 128-byte swizzle): wgmma reads 8 rows of one chunk column at a time, which then lie in
  // 8 different chunks, all 32 banks. sB[k][n] as in the mma.sync kernel: rows 8 banks apart.
  static constexpr int kStrideA = kBlockK;
  static constexpr int kStrideB = kBlockN + 8;
  static constexpr int kSizeA = kBlockM * kStrideA;
  static constexpr int kStageFloats = kSizeA + kBlockK * kStrideB;
  // + 1024: the stages start on a 1024-byte boundary, where the swizzle pattern starts.
  static constexpr int kSmemBytes = kStages * kStageFloats * static_cast<int>(sizeof(float)) + 1024;

  static constexpr int kChunksA = kBlockK / 4;
  static constexpr int kRowsPerPassA = kThreads / kChunksA;
  static constexpr int kPassesA = kBlockM / kRowsPerPassA;
  static constexpr int kChunksB = kBlockN / 4;
  static constexpr int kRowsPerPassB = kThreads / kChunksB;
  static constexpr int kPassesB = kBlockK / kRowsPerPassB;

  static_assert(kBlockM % kWgmmaN == 0 && kBlockN % 64 == 0, "whole wgmma tiles per block");
  static_assert(kRowsPerPassA % 8 == 0, "a thread's A chunks keep one swizzle phase (row % 8)");
  static_assert(kThreads % kChunksB == 0 && kBlockK % kRowsPerPassB == 0,
                "every thread copies the same number of chunks of B");
  static_assert(kStageFloats * sizeof(float) % 1024 == 0, "every stage starts on 1024 bytes");
  // Tiles whose wgmma may still run while the next tile is prepared (0 or 1).
  static constexpr int kInFlight = SGEMM_WGMMA_IN_FLIGHT;
  static_assert(kStages >= 2 + kInFlight, "stages in the tensor cores, one being read, one loading");
  static_assert(kSmemBytes <= 227 * 1024, "shared memory per block is limited to 227 KB");
};
// (BM, BN, STAGES) of the wgmma kernel; the tuning build compiles other values.
#ifndef SGEMM_HOPPER_TILE
#define SGEMM_HOPPER_TILE 256, 128, 4
#endif
using HopperMainTile = HopperTile<SGEMM_HOPPER_TILE>;
#ifndef SGEMM_HOPPER_SMALL_TILE
#define SGEMM_HOPPER_SMALL_TILE 256, 64, 4
#endif
// for problems the big tile leaves SMs idle
using HopperSmallTile = HopperTile<SGEMM_HOPPER_SMALL_TILE>;


// A shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"): start address,
// leading-dimension offset (unused by a K-major swizzled operand; 1 by convention), stride
// between groups of 8 rows (8 x 128 bytes), and swizzle mode 1 = 128-byte swizzle. Moving along
// K inside the 128-byte row is adding bytes to the start address: the swizzle is applied to the
// final address bits, so the same descriptor serves every k-step.
__device__ __forceinline__ uint64_t smem_descriptor(uint32_t smem_addr) {
  return ((smem_addr & 0x3FFFF) >> 4) | (1ull << 16) | (uint64_t{1024 >> 4} << 32) | (1ull << 62);
}

// Generic-proxy writes to shared memory (st.shared after the rounding) become visible to the
// async proxy that wgmma reads through.
__device__ __forceinline__ void fence_proxy_async() {
#if SGEMM_WGMMA_BUILT
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
// Orders this warpgroup's register writes (fragments, accumulators) before the next wgmma.
__device__ __forceinline__ void wgmma_fence() {
#if SGEMM_WGMMA_BUILT
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wgmma_commit() {
#if SGEMM_WGMMA_BUILT
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
// Waits until at most kPending committed groups of wgmma are still running.
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
#if SGEMM_WGMMA_BUILT
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
#endif
}
// Keeps the compiler from moving the computation of registers a wgmma reads (fragments,
// accumulators) across a wgmma fence or wait: ptxas would otherwise serialize the wgmma.
template <int N>
__device__ __forceinline__ void pin(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <int N>
__device__ __forceinline__ void pin(uint32_t (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(r[i])::"memory");
}

// d (64 x 128 of C^T per warpgroup) += a (64 x 8, registers) * b (8 x 128, shared memory).
// d[4j + e] of lane (g, t) in warp w: row 16w + g + 8 (e / 2), column 8j + 2t + e % 2 of C^T.
__device__ __forceinline__ void wgmma_tf32(float (&d)[64], const uint32_t (&a)[4], uint64_t b) {
#if SGEMM_WGMMA_BUILT
  // The three 1s: add to d (scale-d), and take A and B as they are (no negation).
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, 1, 1, 1;\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
#else
  __trap();
#endif
}

template <class T, bool kAlignedK, bool kAlignedN>
__global__ void __launch_bounds__(T::kThreads, 1)
    sgemm_wgmma(int m, int n, int k, float alpha, const float* __restrict__ A,
                const float* __restrict__ B, float beta, float* __restrict__ C) {
#if SGEMM_WGMMA_BUILT
  extern __shared__ float4 smem_raw[];
  const uint32_t raw_base = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
  const uint32_t pad = (1024 - raw_base % 1024) % 1024;
  float* const smem = reinterpret_cast<float*>(reinterpret_cast<char*>(smem_raw) + pad);
  const uint32_t smem_base = raw_base + pad;

  const int tid = threadIdx.x;
  const int block_row = blockIdx.y * T::kBlockM;
  const int block_col = blockIdx.x * T::kBlockN;
  const int warpgroup = tid / 128;
  const int warp = (tid % 128) / 32;  // inside the warpgroup
  const int lane = tid % 32;
  const int g = lane / 4;
  const int t = lane % 4;

  // The copy plan of the mma.sync kernel, A's chunks at their swizzled places.
  const int rows_left = m - block_row;
  const bool edge_m = rows_left < T::kBlockM;
  CopyPlan plan = make_copy_plan<T, true>(tid, A, B, k, block_row, block_col);

  // Register operand: B^T at k t (and t + 4), columns 64 warpgroup + 16 warp + 2g (and + 1).
  const int b_frag = T::kSizeA + t * T::kStrideB + 64 * warpgroup + 16 * warp + 2 * g;
  const int num_tiles = ceil_div(k, T::kBlockK);

  auto issue = [&](int tile, int stage) {
    issue_tile<T, kAlignedK, kAlignedN>(smem + stage * T::kStageFloats, plan, A, B, n, rows_left,
                                        k - tile * T::kBlockK, tile == num_tiles - 1 || edge_m);
  };

  // Prologue: kStages - 1 - kInFlight tiles ahead. With a tile's wgmma left running across the
  // next barrier (kInFlight = 1) one stage more is held than in the mma.sync kernel: that tile's
  // stage cannot be refilled until its wgmma are done.
#pragma unroll
  for (int s = 0; s < T::kStages - 1 - T::kInFlight; ++s) {
    if (s < num_tiles) issue(s, s);
    copy_commit();
  }

  float acc[T::kWgmmasM][64] = {};
  uint32_t frag[2][T::kBlockK / kMmaK][4];  // two sets: the previous tile's may still be read

  auto step = [&](int tile, auto parity) {
    constexpr int P = decltype(parity)::value;
    const int stage = tile % T::kStages;
    float* sA = smem + stage * T::kStageFloats;
    // Tile `tile` has landed (this thread's copies). Round them to TF32 in place, once, for
    // every warpgroup's wgmma, and hand them to the async proxy.
    copy_wait<T::kStages - 2 - T::kInFlight>();
#pragma unroll
    for (int i = 0; i < T::kPassesA; ++i) {
      float4* chunk = reinterpret_cast<float4*>(sA + plan.a_dst + i * T::kRowsPerPassA * T::kStrideA);
      float4 v = *chunk;
      v.x = __uint_as_float(to_tf32(v.x));
      v.y = __uint_as_float(to_tf32(v.y));
      v.z = __uint_as_float(to_tf32(v.z));
      v.w = __uint_as_float(to_tf32(v.w));
      *chunk = v;
    }
    fence_proxy_async();
    // The wgmma of tile - 1 may still run; wait for those of tile - 2, which read the stage
    // refilled below and the fragment set loaded below. Waiting only now, not right after
    // issuing, keeps two tiles of work queued in the tensor cores during the rounding above.
    wgmma_wait<T::kInFlight>();
    // Every thread's part of the tile is in, and every warpgroup is done with tile - 2.
    __syncthreads();
    constexpr int kAhead = T::kStages - 1 - T::kInFlight;
    if (tile + kAhead < num_tiles) issue(tile + kAhead, (tile + kAhead) % T::kStages);
    copy_commit();

    // The register operand, B^T: lane (g, t) of warp w holds rows g and g + 8 of the warp's 16,
    // k t and t + 4. Row r of the 64 may stand for any column of C as long as the epilogue
    // agrees: rows g and g + 8 are columns 2g and 2g + 1, so each pair is one 8-byte load
    // (lanes 0-15 of a load then cover the 32 banks once: rows of sB are 8 banks apart).
    const float* b_stage = sA + b_frag;
#pragma unroll
    for (int s = 0; s < T::kBlockK / kMmaK; ++s) {
      const float2 lo = *reinterpret_cast<const float2*>(b_stage + (kMmaK * s) * T::kStrideB);
      const float2 hi = *reinterpret_cast<const float2*>(b_stage + (kMmaK * s + 4) * T::kStrideB);
      frag[P][s][0] = to_tf32(lo.x);
      frag[P][s][1] = to_tf32(lo.y);
      frag[P][s][2] = to_tf32(hi.x);
      frag[P][s][3] = to_tf32(hi.y);
    }
    // Descriptors of the A tile: rows 128 i .. 128 i + 127, k 8 s .. 8 s + 7 (offsets in units of
    // 16 bytes). Computed, like the fragments, before the fence: ptxas serializes the wgmma if
    // any of their inputs is written between them.
    const uint64_t desc = smem_descriptor(smem_base + stage * T::kStageFloats * sizeof(float));
    uint64_t descs[T::kBlockK / kMmaK][T::kWgmmasM];
#pragma unroll
    for (int s = 0; s < T::kBlockK / kMmaK; ++s) {
#pragma unroll
      for (int i = 0; i < T::kWgmmasM; ++i) {
        descs[s][i] = desc + (i * T::kWgmmaN * T::kStrideA + kMmaK * s) * sizeof(float) / 16;
        asm volatile("" : "+l"(descs[s][i])::"memory");
      }
      pin(frag[P][s]);
    }
#pragma unroll
    for (int i = 0; i < T::kWgmmasM; ++i) pin(acc[i]);
    wgmma_fence();
#pragma unroll
    for (int s = 0; s < T::kBlockK / kMmaK; ++s) {
#pragma unroll
      for (int i = 0; i < T::kWgmmasM; ++i) wgmma_tf32(acc[i], frag[P][s], descs[s][i]);
    }
    wgmma_commit();
  };

  for (int tile = 0; tile < num_tiles; tile += 2) {
    step(tile, std::integral_constant<int, 0>{});
    if (tile + 1 < num_tiles) step(tile + 1, std::integral_constant<int, 1>{});
  }
  wgmma_wait<0>();
#pragma unroll
  for (int i = 0; i < T::kWgmmasM; ++i) pin(acc[i]);

  // Epilogue: acc[i][4j + e] is C^T (row g + 8 (e / 2) of warp w's 16, column 8j + 2t + e % 2)
  // of row block 128 i, i.e. C at row 128 i + 8j + 2t + e % 2, column 64 warpgroup + 16 warp +
  // 2g + e / 2: registers e and e + 2 are neighbours in a row of C, one 8-byte store. A warp's
  // store covers 64 bytes of each of 4 rows.
#pragma unroll
  for (int i = 0; i < T::kWgmmasM; ++i) {
#pragma unroll
    for (int j = 0; j < T::kWgmmaN / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int row = block_row + i * T::kWgmmaN + 8 * j + 2 * t + e;
        const int col = block_col + 64 * warpgroup + 16 * warp + 2 * g;
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
#else
  __trap();  // built without sm_90a code: the launcher never picks this kernel
#endif
}

// Launches one tile shape of one kernel over the whole problem, in the instantiation for K % 4
// and N % 4 (16-byte or 4-byte copies).
template <class T, bool kHopper>
void launch_tile(const sgemm::Problem& p, const float* A, const float* B, float* C,
                 cudaStream_t stream) {
  using Kernel = void(int, int, int, float, const float*, const float*, float, float*);
  Kernel* kernels[2][2];  // [K % 4 == 0][N % 4 == 0]
  if constexpr (kHopper) {
    kernels[1][1] = &sgemm_wgmma<T, true, true>;
    kernels[1][0] = &sgemm_wgmma<T, true, false>;
    kernels[0][1] = &sgemm_wgmma<T, false, true>;
    kernels[0][0] = &sgemm_wgmma<T, false, false>;
  } else {
    kernels[1][1] = &sgemm_tensor_cores<T, true, true>;
    kernels[1][0] = &sgemm_tensor_cores<T, true, false>;
    kernels[0][1] = &sgemm_tensor_cores<T, false, true>;
    kernels[0][0] = &sgemm_tensor_cores<T, false, false>;
  }
  // Above 48 KB, dynamic shared memory must be allowed explicitly, once per kernel.
  static const bool raised = [&] {
    for (auto& row : kernels) {
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

// The GPU this process runs on: its SM count, and whether it takes the wgmma kernel: compute
// capability 9.0, and the code the driver loaded for it was compiled for sm_90a (a build for
// "90" without the "a", or SGEMM_WGMMA=0, keeps the mma.sync kernel).
struct Gpu {
  int sms = 0;
  bool wgmma = false;
};
const Gpu& gpu() {
  static const Gpu info = [] {
    Gpu g;
    int device = 0, major = 0, minor = 0, built = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&g.sms, cudaDevAttrMultiProcessorCount, device);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
    if (SGEMM_WGMMA && major == 9 && minor == 0) {
      g.wgmma = cudaMemcpyFromSymbol(&built, wgmma_built, sizeof built) == cudaSuccess && built == 1;
      (void)cudaGetLastError();  // a failed query only means: no wgmma
    }
    return g;
  }();
  return info;
}

// The big tile when it gives every SM at least one block (the wgmma kernel: half of them, as
// measured at 2048^3, where its 128 big blocks beat the small tile's 256); the small one otherwise.
template <class Big>
bool takes_small_tile(const sgemm::Problem& p) {
  const int64_t big_tiles =
      static_cast<int64_t>(ceil_div(p.m, Big::kBlockM)) * ceil_div(p.n, Big::kBlockN);
  return big_tiles < (std::is_same_v<Big, MainTile> ? gpu().sms : gpu().sms / 2);
}

void launch_tensor_cores(const sgemm::Problem& p, const float* A, const float* B, float* C,
                         cudaStream_t stream) {
  if (gpu().wgmma) {
    if (takes_small_tile<HopperMainTile>(p)) {
      launch_tile<HopperSmallTile, true>(p, A, B, C, stream);
    } else {
      launch_tile<HopperMainTile, true>(p, A, B, C, stream);
    }
  } else if (takes_small_tile<MainTile>(p)) {
    launch_tile<SmallTile, false>(p, A, B, C, stream);
  } else {
    launch_tile<MainTile, false>(p, A, B, C, stream);
  }
}

// The tile the launcher takes for this problem, for the harness's traffic model.
sgemm::TileSize tile_for(const sgemm::Problem& p) {
  if (gpu().wgmma) {
    return takes_small_tile<HopperMainTile>(p)
               ? sgemm::TileSize{HopperSmallTile::kBlockM, HopperSmallTile::kBlockN}
               : sgemm::TileSize{HopperMainTile::kBlockM, HopperMainTile::kBlockN};
  }
  return takes_small_tile<MainTile>(p) ? sgemm::TileSize{SmallTile::kBlockM, SmallTile::kBlockN}
                                       : sgemm::TileSize{MainTile::kBlockM, MainTile::kBlockN};
}

}  // namespace

int main(int argc, char** argv) {
  // The title carries both kernels' tiles, so tuning runs tell themselves apart. Which kernel
  // runs is decided per GPU (gpu()); the title names both rather than touching the GPU before the
  // harness has chosen it.
  const std::string mma_sync = "mma.sync m16n8k8, BM x BN x BK = " +
                               std::to_string(kTile.block_m) + "x" + std::to_string(kTile.block_n) +
                               "x" + std::to_string(kTile.block_k) + ", warp " +
                               std::to_string(kTile.warp_m) + "x" + std::to_string(kTile.warp_n) +
                               ", " + std::to_string(kTile.stages) + " stages";
  const std::string wgmma = "wgmma m64n128k8 on sm_90a, " + std::to_string(HopperMainTile::kBlockM) +
                            "x" + std::to_string(HopperMainTile::kBlockN) + "x" +
                            std::to_string(HopperMainTile::kBlockK) + ", " +
                            std::to_string(HopperMainTile::kStages) + " stages";
  static const std::string title = "tensor cores (TF32; " +
                                   (SGEMM_WGMMA ? wgmma + "; else " + mma_sync : mma_sync) + ")";
  sgemm::Chapter chapter{"08_tensor_cores", title.c_str(), &launch_tensor_cores,
                         kTile.block_m,     kTile.block_n, &tile_for};
  chapter.precision = sgemm::Precision::kTf32;
  return sgemm::run_chapter(chapter, argc, argv);
}
