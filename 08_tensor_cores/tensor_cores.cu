// SPDX-License-Identifier: MIT
// SGEMM tutorial, chapter 08: tensor cores (TF32 mma.sync).
//
//   00 naive -> 01 coalescing -> 02 smem tiling -> 03 thread tiling -> 04 vectorized
//   -> 05 bank conflicts -> 06 double buffer -> 07 any shape -> [08 tensor cores] -> 09 3xTF32
//   -> 10 wgmma
//
// Chapters 00-07 multiply on the FP32 CUDA cores. Here the multiply-adds go to the tensor cores:
// one warp-wide `mma.sync.aligned.m16n8k8` multiplies a 16 x 8 tile of A by an 8 x 8 tile of B
// into a 16 x 8 tile of C, 1024 multiply-adds in one instruction. Its inputs are TF32: FP32's
// sign and 8-bit exponent with only 10 of its 23 mantissa bits, so every element of A and B is
// rounded (round_operand) before it is multiplied; products and sums are FP32. The loads are
// chapter 06's cp.async pipeline, now with 16-byte copies for A as well (A is kept row-major in
// shared memory, the layout the mma wants), and the shared-memory rows are padded so that the
// fragment loads (ldmatrix for A, 4-byte loads for B) are free of bank conflicts; each warp loads
// the raw fragments of the next k-step while it rounds and multiplies this one; the copies test
// the matrix's bounds once per thread, the partial K tile first (make_copy_plan). The launcher
// keeps chapter 07's lesson: it picks the tile and splits K per shape (common/split_k.h). On
// large problems it first rounds A and B once, in two passes, B transposed, so that the GEMM
// rounds nothing and loads B with ldmatrix too (prepare_pays). The instruction wrappers
// (cp.async, ldmatrix, mma, the TF32 rounding) live in common/, documented in README.md.
// Precision contract: TF32 (the harness verifies with a TF32 tolerance and compares the speed
// with cuBLAS CUBLAS_COMPUTE_32F_FAST_TF32). Chapter 09 wins FP32 accuracy back; chapter 10 takes
// Hopper's warpgroup instruction (wgmma).
// Limits: sm_80 or newer (TF32 mma.sync); every shape, 16-byte copies where K % 4 == 0 (A) and
// N % 4 == 0 (B) or the operands are prepared, 4-byte copies otherwise.
// Example: build/bin/08_tensor_cores --size 4096

#include <algorithm>
#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "common/check.h"
#include "common/cp_async.h"
#include "common/device.h"
#include "common/grid.h"
#include "common/harness.h"
#include "common/mma_sync.h"
#include "common/split_k.h"
#include "common/tf32.h"

// Tile shape (BM, BN, BK, WM, WN, STAGES), chosen on the H100: README.md, "Choosing the tile".
// The tuning build (-DSGEMM_TUNING=ON) compiles this file again with other SGEMM_TILE values.
#ifndef SGEMM_TILE
#define SGEMM_TILE 128, 256, 16, 64, 64, 4
#endif
// Attribution switches (README.md, "Attribution and variants"): SGEMM_VECTOR_B = 1 reads the B
// fragments as float4s (columns permuted, see warp_column()) instead of one 4-byte load per
// value: a quarter of the load instructions, no bank conflicts either way, and measured slower
// on the H100. SGEMM_ROUND_TF32 picks the rounding of round_operand(): 1 (default)
// sgemm::tf32_operand; 2 cvt.rna.tf32.f32 (the same instructions here, but the top 4096 floats
// become Inf); 0 none (the tensor core then truncates: a larger, biased error, shown only to
// price the rounding).
#ifndef SGEMM_VECTOR_B
#define SGEMM_VECTOR_B 0
#endif
#ifndef SGEMM_ROUND_TF32
#define SGEMM_ROUND_TF32 1
#endif
// SGEMM_PREFETCH = 0 loads each k-step's fragments just before its mma (README.md, "The
// pipeline", measures the prefetch).
#ifndef SGEMM_PREFETCH
#define SGEMM_PREFETCH 1
#endif
// SGEMM_SPLIT_K = 0 never cuts K (README.md, "Every shape", measures what split-K brings).
#ifndef SGEMM_SPLIT_K
#define SGEMM_SPLIT_K 1
#endif
// SGEMM_PREPARE = 0 never prepares the operands (README.md, "Prepared operands"): 1, where it
// pays, a pass before the GEMM rounds A and B to TF32 and transposes B, and the GEMM rounds
// nothing.
#ifndef SGEMM_PREPARE
#define SGEMM_PREPARE 1
#endif
// SGEMM_PREPARE_ALWAYS = 1 prepares wherever it can, paying or not (the tests' way to run the
// prepared kernels on every shape).
#ifndef SGEMM_PREPARE_ALWAYS
#define SGEMM_PREPARE_ALWAYS 0
#endif
// SGEMM_CHECK_EVERY_TILE = 1 tests the first tile's bounds (positions before the slice's start)
// at every tile, as a loop that does not know where its partial tile is must (README.md,
// "Attribution and variants").
#ifndef SGEMM_CHECK_EVERY_TILE
#define SGEMM_CHECK_EVERY_TILE 0
#endif
// SGEMM_GROUP_ROWS: the rows of tiles of a group of chapter 01's grouped block order, which the
// prepared GEMM takes on wide grids (README.md, "Prepared operands"); 1: the plain order always.
#ifndef SGEMM_GROUP_ROWS
#define SGEMM_GROUP_ROWS 8
#endif

namespace {

using sgemm::ceil_div;
using sgemm::kMmaK;
using sgemm::kMmaM;
using sgemm::kMmaN;
constexpr int kGroupRowsWide = SGEMM_GROUP_ROWS;

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
  static constexpr bool kPrefetch = SGEMM_PREFETCH;
  static constexpr int kSteps = kBlockK / kMmaK;  // mma k-steps per K tile

  // sA[m][k]: rows of kBlockK + 4 floats. The 8 rows an ldmatrix phase reads (16 bytes each) then
  // start 4 banks apart and cover all 32 banks. sB[k][n]: rows padded so that the B fragment
  // loads of a warp cover 32 banks per phase: with 4-byte loads (k = lane % 4, n = lane / 4) rows
  // 8 banks apart; with LDS.128 (8 lanes per phase: 4 rows x 2 column groups) rows 8 banks apart
  // for kFragsN = 4 and 4 banks apart for kFragsN = 8 (README.md, "Shared memory without bank
  // conflicts").
  static constexpr int kStrideA = kBlockK + 4;
  static constexpr int kStrideB = kBlockN + (kVectorB && kWarpN / kMmaN == 8 ? 4 : 8);
  static constexpr int kSizeA = kBlockM * kStrideA;
  // A prepared B (Bt, K-major) sits in shared memory as A does: rows of kBlockK + 4 floats, one
  // per column of C, read by ldmatrix. A stage has room for either layout; one kernel uses one.
  static constexpr int kSizeB = kBlockK * kStrideB;
  static constexpr int kSizeBt = kBlockN * kStrideA;
  static constexpr int kStageFloats = kSizeA + (kSizeB > kSizeBt ? kSizeB : kSizeBt);
  static constexpr int kSmemBytes = kStages * kStageFloats * static_cast<int>(sizeof(float));

  // Copy plan: rows of both tiles go in 16-byte chunks (4 floats); consecutive threads take
  // consecutive chunks of a row, so a warp reads whole 32-byte sectors of global memory.
  static constexpr int kChunksA = kBlockK / 4;  // chunks per row of the A tile
  static constexpr int kRowsPerPassA = kThreads / kChunksA;
  static constexpr int kPassesA = kBlockM / kRowsPerPassA;
  static constexpr int kChunksB = kBlockN / 4;  // chunks per row of the B tile
  static constexpr int kRowsPerPassB = kThreads / kChunksB;
  static constexpr int kPassesB = kBlockK / kRowsPerPassB;
  static constexpr int kPassesBt = kBlockN / kRowsPerPassA;  // Bt: rows of kBlockK, as A's

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
  static_assert(kThreads % kChunksB == 0 && kPassesB * kRowsPerPassB == kBlockK,
                "every thread copies the same number of chunks of B");
  static_assert(kBlockN % kRowsPerPassA == 0 && kFragsN % 2 == 0,
                "a prepared B: every thread copies the same number of chunks, ldmatrix.x4 per 2 "
                "n-tiles");
  static_assert(kStages >= 2, "a pipeline needs at least two stages");
  static_assert(!kPrefetch || kSteps % 2 == 0,
                "the next tile's first fragments go to register set 0: an even number of k-steps");
  static_assert(kSmemBytes <= 227 * 1024, "shared memory per block is limited to 227 KB");
};

struct TileShape {
  int block_m, block_n, block_k, warp_m, warp_n, stages;
};
constexpr TileShape kTile{SGEMM_TILE};
using MainTile =
    Tile<kTile.block_m, kTile.block_n, kTile.block_k, kTile.warp_m, kTile.warp_n, kTile.stages>;
// For problems whose big tiles would leave SMs idle (README.md, "Every shape").
using SmallTile = Tile<64, 128, 32, 32, 64, 3>;
// For prepared operands (README.md, "Prepared operands"): 32-deep K tiles, so that each row of
// the A and Bt tiles is one 128-byte line of global memory (16-deep ones measured 21 % slower).
#ifndef SGEMM_PREPARED_TILE
#define SGEMM_PREPARED_TILE 128, 256, 32, 64, 64, 3
#endif
constexpr TileShape kPreparedTile{SGEMM_PREPARED_TILE};
using PreparedTile = Tile<kPreparedTile.block_m, kPreparedTile.block_n, kPreparedTile.block_k,
                          kPreparedTile.warp_m, kPreparedTile.warp_n, kPreparedTile.stages>;

// ---- The tensor-core side ----------------------------------------------------------------------
// cp.async (common/cp_async.h), ldmatrix and mma.sync (common/mma_sync.h) are thin wrappers
// around one instruction each; README.md explains them.

// x as the mma reads it (README.md, "What TF32 keeps of an FP32 number"). The tensor core reads
// only the 19 high bits of a TF32 operand (sign, exponent, 10 mantissa bits), so rounding to
// nearest is adding half a TF32 unit (2^12 in the bit pattern) and leaving the 13 low bits as
// they are: sgemm::tf32_operand, a compare and an add. cvt.rna.tf32.f32 computes the same
// rounding and then clears the low bits (a compare, a predicated add and a LOP3; ptxas drops the
// LOP3 where the result only feeds an mma, as here), but it rounds the last 4096 floats below
// FLT_MAX up to Inf, where tf32_operand truncates them.
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

// What one thread copies of every K tile. The bounds are checked once, by make_copy_plan, not at
// every tile: a row of A past M or a column of B past N is zero-filled on every tile (src-size
// 0), from an address clamped into the matrix, so a full K tile's copies test nothing. The K tiles
// of a slice start at k0 = k_len - num_tiles * kBlockK (-kBlockK < k0 <= 0): the partial tile, if
// any, is the first one, and only its positions before the slice's start need a test
// (CUTLASS's "residue first").
template <class T>
struct CopyPlan {
  const float* a[T::kPassesA];  // A at (the row of pass i, the current tile's first k + a_col)
  const float* b;               // B at (the current tile's row b_row, column b_src or 0)
  int64_t b_pass;               // kRowsPerPassB rows of B, in floats
  int a_col;                    // its first k inside the A tile (a multiple of 4)
  int a_dst;                    // sA offset of its first chunk
  int b_row;                    // its first row inside the B tile
  int b_dst;                    // sB offset of its first chunk
  bool a_ok[T::kPassesA];       // the row of pass i lies inside A
  bool b_ok[4];                 // column b_src + j lies inside B (N % 4 == 0: all four alike)
  int b_off[4];                 // j, or back to column 0 where column b_src + j lies outside
  // A prepared B (Bt, a row per column of C) is copied as A is: pass i at the row of column
  // block_col + (A's row of pass i), the same k and the same offset in its rows.
  const float* bt[T::kPassesBt];
};

// This thread's share of every K tile's copies, at tile 0: chunk c of a row goes to chunk c of
// its padded row in shared memory.
template <class T, bool kPrepared>
__device__ __forceinline__ CopyPlan<T> make_copy_plan(int tid, const float* A, const float* B,
                                                      int m, int n, int k, int ldb, int k0,
                                                      int block_row, int block_col) {
  CopyPlan<T> plan;
  const int a_row = tid / T::kChunksA;
  plan.a_col = (tid % T::kChunksA) * 4;
  plan.a_dst = a_row * T::kStrideA + plan.a_col;
  if constexpr (kPrepared) {
    // Packed panels (prepare_a, prepare_b): the block's rows of A start at A + block_row * k, its
    // rows of Bt at B + block_col * ldb, and K tile t of them is the kBlockM x kBlockK (kBlockN x
    // kBlockK) floats t tiles further on, row after row; the panels are whole (zero rows past M
    // and N) and K is a whole number of tiles (k0 == 0), so nothing needs a test.
#pragma unroll
    for (int i = 0; i < T::kPassesA; ++i) {
      plan.a_ok[i] = true;
      plan.a[i] = A + static_cast<int64_t>(block_row) * k +
                  (a_row + i * T::kRowsPerPassA) * T::kBlockK + plan.a_col;
    }
#pragma unroll
    for (int i = 0; i < T::kPassesBt; ++i) {
      plan.bt[i] = B + static_cast<int64_t>(block_col) * ldb +
                   (a_row + i * T::kRowsPerPassA) * T::kBlockK + plan.a_col;
    }
  } else {
#pragma unroll
    for (int i = 0; i < T::kPassesA; ++i) {
      const int row = block_row + a_row + i * T::kRowsPerPassA;
      plan.a_ok[i] = row < m;
      plan.a[i] = A + static_cast<int64_t>(min(row, m - 1)) * k + (k0 + plan.a_col);
    }
    plan.b_row = tid / T::kChunksB;
    const int b_col = (tid % T::kChunksB) * 4;
    plan.b_dst = plan.b_row * T::kStrideB + b_col;
    const int b_src = block_col + b_col;
    const int col0 = b_src < n ? b_src : 0;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      plan.b_ok[j] = b_src + j < n;
      plan.b_off[j] = plan.b_ok[j] ? j : -col0;
    }
    plan.b_pass = static_cast<int64_t>(T::kRowsPerPassB) * ldb;
    plan.b = B + static_cast<int64_t>(k0 + plan.b_row) * ldb + col0;
  }
  return plan;
}

// One chunk of a K-major operand (A, or a prepared B) whose first k is k_at (relative to the
// slice): 16 bytes, or four 4-byte copies where rows do not start on 16 bytes. row_ok false (a
// row past the matrix, src clamped into it) or, with kCheck, k_at + j < 0 zero-fills; `any` is a
// valid address to read nothing from.
template <bool kAlignedK, bool kCheck>
__device__ __forceinline__ void copy_k_chunk(float* dst, const float* src, const float* any,
                                             bool row_ok, int k_at) {
  if (kAlignedK) {
    // K % 4 == 0: a chunk of 4 k values lies wholly inside or wholly outside the slice.
    const bool ok = row_ok && (!kCheck || k_at >= 0);
    sgemm::cp_async_16(dst, !kCheck || ok ? src : any, ok);
  } else {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const bool ok = row_ok && (!kCheck || k_at + j >= 0);
      sgemm::cp_async_4(dst + j, !kCheck || ok ? src + j : any, ok);
    }
  }
}

// Issues the copies of the K tile whose first k is k_at (relative to the slice) into the stage
// at sA (sB follows at kSizeA) and moves the plan on to the next tile. kCheck: the tile may hold
// positions before the slice's start (k_at < 0, tile 0 only), zero-filled from a valid address.
template <class T, bool kPrepared, bool kAlignedK, bool kAlignedN, bool kCheck>
__device__ __forceinline__ void issue_tile(float* sA, CopyPlan<T>& p, const float* A,
                                           const float* B, int k_at) {
  float* const sB = sA + T::kSizeA;
#pragma unroll
  for (int i = 0; i < T::kPassesA; ++i) {
    copy_k_chunk<kAlignedK, kCheck>(sA + p.a_dst + i * T::kRowsPerPassA * T::kStrideA, p.a[i], A,
                                    p.a_ok[i], k_at + p.a_col);
    p.a[i] += kPrepared ? T::kBlockM * T::kBlockK : T::kBlockK;  // the next K tile
  }
  if constexpr (kPrepared) {
#pragma unroll
    for (int i = 0; i < T::kPassesBt; ++i) {
      copy_k_chunk<true, false>(sB + p.a_dst + i * T::kRowsPerPassA * T::kStrideA, p.bt[i], B, true,
                                0);
      p.bt[i] += T::kBlockN * T::kBlockK;
    }
  } else {
#pragma unroll
    for (int c = 0; c < T::kPassesB; ++c) {
      float* dst = sB + p.b_dst + c * T::kRowsPerPassB * T::kStrideB;
      const bool row_ok = !kCheck || k_at + p.b_row + c * T::kRowsPerPassB >= 0;
      if (kAlignedN) {
        // N % 4 == 0: the chunk lies wholly inside or wholly outside B.
        const bool ok = row_ok && p.b_ok[0];
        sgemm::cp_async_16(dst, !kCheck || ok ? p.b : B, ok);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const bool ok = row_ok && p.b_ok[j];
          sgemm::cp_async_4(dst + j, !kCheck || ok ? p.b + p.b_off[j] : B, ok);
        }
      }
      p.b += p.b_pass;  // after kPassesB passes: the next tile's row b_row
    }
  }
}

// kAlignedK: K % 4 == 0 (rows of A start on 16 bytes); kAlignedN: N % 4 == 0 (rows of B and C).
// B's rows are ldb floats apart: N here, always (common/split_k.h's kernel signature has ldb for
// chapter 09, whose launcher may pass a padded copy of B). Split-K (chapter 07, common/split_k.h):
// block z covers k in [z * k_slice, min(k, (z + 1) * k_slice)) and writes C + z * c_slice; A keeps
// its leading dimension k. Without split-K, gridDim.z = 1 and k_slice = k.
// kPrepared: A and B come from the launcher's passes, TF32 values packed in panels (prepare_a,
// prepare_b; K a whole number of K tiles, ldb = k); the loop rounds nothing and loads B's
// fragments with ldmatrix.
// kGroupRows > 1: chapter 01's grouped block order.
template <class T, bool kPrepared, bool kAlignedK, bool kAlignedN, int kGroupRows>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocksPerSm)
    sgemm_tensor_cores(int m, int n, int k, int k_slice, float alpha, const float* __restrict__ A,
                       const float* __restrict__ B, int ldb, float beta, float* __restrict__ C,
                       int64_t c_slice) {
  extern __shared__ float4 smem_raw[];  // float4: 16-byte aligned for cp.async and ldmatrix
  float* const smem = reinterpret_cast<float*>(smem_raw);
  // Stage s: sA = smem + s * kStageFloats (kBlockM x kStrideA), sB right after it.

  // The slice, never empty (the launcher starts every slice below k); k_slice is a multiple of
  // kBlockK, so a slice of A starts on 16 bytes whenever K % 4 == 0.
  const int k_begin = blockIdx.z * k_slice;
  const int k_len = min(k_slice, k - k_begin);
  A += kPrepared ? static_cast<int64_t>(k_begin) * T::kBlockM : k_begin;
  B += static_cast<int64_t>(k_begin) * (kPrepared ? T::kBlockN : ldb);
  C += blockIdx.z * c_slice;

  const int tid = threadIdx.x;
  // Chapter 01's grouped block order (01_coalescing/README.md, "Which blocks run together"):
  // block b of the grid takes tile (first + b' % rows, b' / rows) of its group of kGroupRows rows
  // of tiles, so that the blocks running at once share their rows of A and columns of B in L2.
  int tile_row = blockIdx.y, tile_col = blockIdx.x;
  if constexpr (kGroupRows > 1) {
    const int b = blockIdx.y * gridDim.x + blockIdx.x;
    const int first = b / (kGroupRows * gridDim.x) * kGroupRows;
    const int rows = min(kGroupRows, static_cast<int>(gridDim.y) - first);
    const int in_group = b - first * gridDim.x;
    tile_row = first + in_group % rows;
    tile_col = in_group / rows;
  }
  const int block_row = tile_row * T::kBlockM;  // < 65535 * kBlockM: the launcher's slabs
  const int block_col = tile_col * T::kBlockN;
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int warp_row = (warp / T::kWarpsN) * T::kWarpM;  // the warp's C tile inside the block
  const int warp_col = (warp % T::kWarpsN) * T::kWarpN;
  const int g = lane / 4;  // fragment row group (PTX: groupID)
  const int t = lane % 4;  // fragment column (PTX: threadID_in_group)

  // Prologue 1: the copy plan. Rows of A past M, columns of B past N and the first tile's
  // positions before the slice's start (k0 + their k < 0) are zero-filled; the mma multiply
  // those zeros.
  const int num_tiles = ceil_div(k_len, T::kBlockK);
  const int k0 = k_len - num_tiles * T::kBlockK;
  CopyPlan<T> plan =
      make_copy_plan<T, kPrepared>(tid, A, B, m, n, k, ldb, k0, block_row, block_col);

  // Fragment addresses inside a stage. ldmatrix: lane l gives the address of row l % 8 of tile
  // l / 8, i.e. row (l % 8) + 8 * ((l / 8) % 2), k 4 * (l / 16) of each 16 x 8 block of A.
  const uint32_t smem_base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const int ld_row = warp_row + (lane % 8) + 8 * ((lane / 8) % 2);
  const int ld_col = 4 * (lane / 16);
  const uint32_t a_frag = smem_base + (ld_row * T::kStrideA + ld_col) * sizeof(float);
  const int b_frag = T::kSizeA + t * T::kStrideB + warp_col + warp_column<T>(0, g);  // b0, j = 0
  // A prepared B: tile q = l / 8 of an ldmatrix.x4 is (n-tile 2jj + q / 2, k 4 (q % 2) .. + 3),
  // so lane l gives row (column of C) 8 (l / 16) + l % 8 and k 4 ((l / 8) % 2): registers b0, b1
  // of n-tile 2jj, then b0, b1 of n-tile 2jj + 1.
  const uint32_t bt_frag =
      smem_base +
      (T::kSizeA + (warp_col + 8 * (lane / 16) + lane % 8) * T::kStrideA + 4 * ((lane / 8) % 2)) *
          sizeof(float);

  auto issue = [&](int tile, int stage) {
    float* const sA = smem + stage * T::kStageFloats;
    if (SGEMM_CHECK_EVERY_TILE || tile == 0) {
      issue_tile<T, kPrepared, kAlignedK, kAlignedN, true>(sA, plan, A, B, k0 + tile * T::kBlockK);
    } else {
      issue_tile<T, kPrepared, kAlignedK, kAlignedN, false>(sA, plan, A, B, k0 + tile * T::kBlockK);
    }
  };

  // Prologue 2: start the first kStages - 1 tiles. Every iteration commits exactly one group
  // (empty past the last tile), so "tile t has landed" is always "at most kStages - 2 groups
  // pending", whatever the number of tiles (chapter 06).
#pragma unroll
  for (int s = 0; s < T::kStages - 1; ++s) {
    if (s < num_tiles) issue(s, s);
    sgemm::cp_async_commit();
  }

  float acc[T::kFragsM][T::kFragsN][4] = {};
  int read_stage = 0;
  int write_stage = T::kStages - 1;
  auto next_stage = [](int stage) { return stage + 1 == T::kStages ? 0 : stage + 1; };

  // The fragments of k-step kk of a stage as they lie in shared memory: one ldmatrix per 16 x 8
  // block of A, two 4-byte loads per 8 x 8 block of B (or float4s, kVectorB; one ldmatrix per two
  // blocks of a prepared B). Not rounded yet.
  auto load_fragments = [&](uint32_t(&rA)[T::kFragsM][4], uint32_t(&rB)[T::kFragsN][2], int stage,
                            int kk) {
    const uint32_t a_stage = a_frag + stage * T::kStageFloats * sizeof(float);
    const float* b_stage = smem + stage * T::kStageFloats + b_frag;
#pragma unroll
    for (int i = 0; i < T::kFragsM; ++i) {
      sgemm::ldmatrix_x4(rA[i], a_stage + (i * kMmaM * T::kStrideA + kk) * sizeof(float));
    }
    if constexpr (kPrepared) {
      const uint32_t bt_stage = bt_frag + stage * T::kStageFloats * sizeof(float);
#pragma unroll
      for (int jj = 0; jj < T::kFragsN / 2; ++jj) {
        uint32_t r[4];
        sgemm::ldmatrix_x4(r, bt_stage + (jj * 2 * kMmaN * T::kStrideA + kk) * sizeof(float));
        rB[2 * jj][0] = r[0], rB[2 * jj][1] = r[1], rB[2 * jj + 1][0] = r[2],
               rB[2 * jj + 1][1] = r[3];
      }
    } else if constexpr (T::kVectorB) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
#pragma unroll
        for (int q = 0; q < T::kFragsN / 4; ++q) {
          const float4 v =
              *reinterpret_cast<const float4*>(b_stage + (kk + 4 * r) * T::kStrideB + 4 * q);
          rB[4 * q + 0][r] = __float_as_uint(v.x);
          rB[4 * q + 1][r] = __float_as_uint(v.y);
          rB[4 * q + 2][r] = __float_as_uint(v.z);
          rB[4 * q + 3][r] = __float_as_uint(v.w);
        }
      }
    } else {
#pragma unroll
      for (int j = 0; j < T::kFragsN; ++j) {
        rB[j][0] = __float_as_uint(b_stage[kk * T::kStrideB + j * kMmaN]);
        rB[j][1] = __float_as_uint(b_stage[(kk + 4) * T::kStrideB + j * kMmaN]);
      }
    }
  };
  // One k-step: every fragment value rounded to TF32 (unless prepared), then kFragsM x kFragsN mma.
  auto multiply = [&](uint32_t(&rA)[T::kFragsM][4], uint32_t(&rB)[T::kFragsN][2]) {
    if constexpr (!kPrepared) {
#pragma unroll
      for (int i = 0; i < T::kFragsM; ++i) {
#pragma unroll
        for (int r = 0; r < 4; ++r) rA[i][r] = round_operand(__uint_as_float(rA[i][r]));
      }
#pragma unroll
      for (int j = 0; j < T::kFragsN; ++j) {
        rB[j][0] = round_operand(__uint_as_float(rB[j][0]));
        rB[j][1] = round_operand(__uint_as_float(rB[j][1]));
      }
    }
#pragma unroll
    for (int i = 0; i < T::kFragsM; ++i) {
#pragma unroll
      for (int j = 0; j < T::kFragsN; ++j) sgemm::mma_tf32(acc[i][j], rA[i], rB[j]);
    }
  };

  if constexpr (T::kPrefetch) {
    // Main loop with the fragments prefetched (README.md, "The pipeline"). At k-step s the raw
    // fragments of step s + 1 are loaded, then step s is rounded and multiplied: the loads are in
    // flight while the mma issue, and no rounding instruction waits on a load just issued. At
    // the last step of K tile t the warp waits for tile t + 1 and loads its first fragments
    // before the last mma of tile t, so the tensor pipe does not drain at the barrier. That
    // barrier also says every warp holds all of tile t's fragments in registers, so tile t's
    // stage is free for the copies issued at the top of the next iteration (tile t + kStages).
    uint32_t rA[2][T::kFragsM][4];
    uint32_t rB[2][T::kFragsN][2];
    sgemm::cp_async_wait<T::kStages - 2>();
    __syncthreads();
    load_fragments(rA[0], rB[0], 0, 0);
    for (int tile = 0; tile < num_tiles; ++tile) {
      if (tile + T::kStages - 1 < num_tiles) issue(tile + T::kStages - 1, write_stage);
      sgemm::cp_async_commit();
#pragma unroll
      for (int s = 0; s < T::kSteps; ++s) {
        if (s == T::kSteps - 1) {
          // Every iteration commits one group, so "tile t + 1 has landed" is "at most kStages -
          // 2 groups pending". After the last tile the loads below read a stage no mma uses.
          sgemm::cp_async_wait<T::kStages - 2>();
          __syncthreads();
          read_stage = next_stage(read_stage);
          write_stage = next_stage(write_stage);
        }
        load_fragments(rA[(s + 1) % 2], rB[(s + 1) % 2], read_stage, (s + 1) % T::kSteps * kMmaK);
        multiply(rA[s % 2], rB[s % 2]);
      }
    }
  } else {
    // Main loop without prefetch (the attribution's variant_no_prefetch). Iteration t: wait
    // until tile t has landed; the barrier also says every warp has finished computing tile
    // t - 1, whose stage is then refilled with tile t + kStages - 1 while tile t is computed.
    for (int tile = 0; tile < num_tiles; ++tile) {
      sgemm::cp_async_wait<T::kStages - 2>();
      __syncthreads();
      if (tile + T::kStages - 1 < num_tiles) issue(tile + T::kStages - 1, write_stage);
      sgemm::cp_async_commit();
#pragma unroll
      for (int s = 0; s < T::kSteps; ++s) {
        uint32_t rA[T::kFragsM][4];
        uint32_t rB[T::kFragsN][2];
        load_fragments(rA, rB, read_stage, s * kMmaK);
        multiply(rA, rB);
      }
      read_stage = next_stage(read_stage);
      write_stage = next_stage(write_stage);
    }
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
      if constexpr (T::kVectorB && !kPrepared) {  // a prepared B keeps the plain columns
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

// The kernel for K % 4 and N % 4 (16-byte or 4-byte copies), its shared memory allowed once.
// Prepared operands have K % 4 == 0 (the launcher pads K): their first row repeats the second.
template <class T, bool kPrepared, int kGroupRows = 1>
sgemm::SlicedKernel* kernel_for(const sgemm::Problem& p) {
  // [K % 4 == 0][N % 4 == 0]
  static sgemm::SlicedKernel* const kernels[2][2] = {
      {&sgemm_tensor_cores<T, kPrepared, kPrepared, false, kGroupRows>,
       &sgemm_tensor_cores<T, kPrepared, kPrepared, true, kGroupRows>},
      {&sgemm_tensor_cores<T, kPrepared, true, false, kGroupRows>,
       &sgemm_tensor_cores<T, kPrepared, true, true, kGroupRows>}};
  static const bool raised = [] {
    // Above 48 KB, dynamic shared memory must be allowed explicitly, once per kernel.
    for (auto& row : kernels) {
      for (sgemm::SlicedKernel* kernel : row) {
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        T::kSmemBytes));
      }
    }
    return true;
  }();
  (void)raised;
  return kernels[p.k % 4 == 0][p.n % 4 == 0];  // cudaMalloc pointers: 256-byte aligned
}

// ---- Prepared operands (README.md, "Prepared operands") ----------------------------------------
// The loop rounds every fragment value it loads, two instructions each, in every warp that loads
// it, and reads B's fragments with one 4-byte load per value. Where it pays, two passes before the
// GEMM round A and B once, element by element, into the workspace, B transposed (Bt: a row per
// column of C), both packed the way the GEMM reads them: in panels of PreparedTile's kBlockM rows
// of A (kBlockN rows of Bt), each panel a sequence of K tiles of kBlockM x kBlockK floats, row
// after row; zeros past M, N and K, which is rounded up to a whole number of K tiles. A K tile of a
// block is then one contiguous stretch of memory, the GEMM rounds nothing, tests no bound, loads
// B's fragments with ldmatrix as A's, and copies 16 bytes at a time.
template <int kRows>
__host__ __device__ constexpr int64_t packed_index(int64_t r, int c, int ld) {
  constexpr int kDepth = PreparedTile::kBlockK;
  return r / kRows * kRows * ld + c / kDepth * kRows * kDepth + r % kRows * kDepth + c % kDepth;
}
// x rounded up to a multiple (the callers keep x at least `multiple` below INT_MAX).
int padded_to(int x, int multiple) { return ceil_div(x, multiple) * multiple; }

// x as a prepared operand: rounded as the loop would round it (round_operand: SGEMM_ROUND_TF32 = 0
// truncates here too), the 13 low bits cleared.
__device__ __forceinline__ float prepared(float x) {
  return __uint_as_float(round_operand(x) & 0xFFFFE000u);
}

// Ap = A rounded and packed, rows < rows_p (a whole number of panels), k < ld: a thread per 4 k of
// a row (one float4 store), rows along y (grid-stride past 65535).
constexpr int kPrepareThreadsA = 256;
__global__ void __launch_bounds__(kPrepareThreadsA)
    prepare_a(int m, int k, const float* __restrict__ A, int rows_p, int ld,
              float* __restrict__ Ap) {
  const int c = 4 * (blockIdx.x * kPrepareThreadsA + threadIdx.x);
  if (c >= ld) return;
  for (int64_t r = blockIdx.y; r < rows_p; r += gridDim.y) {
    float v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = r < m && c + j < k ? prepared(A[r * k + c + j]) : 0.0f;
    *reinterpret_cast<float4*>(Ap + packed_index<PreparedTile::kBlockM>(r, c, ld)) =
        make_float4(v[0], v[1], v[2], v[3]);
  }
}

// Bt = B transposed, rounded and packed, rows (columns of B) < cols_p, k < ld. B is read along its
// rows and Bt written along its rows, through a 32 x 33 tile (33: the column reads are
// conflict-free); 32 x 8 threads, columns of B along x, rows of B along y (ld / 32 <= 65535:
// prepare_pays).
constexpr int kPrepareTile = 32;
constexpr int kPrepareRows = 8;
__global__ void __launch_bounds__(kPrepareTile* kPrepareRows)
    prepare_b(int k, int n, const float* __restrict__ B, int cols_p, int ld,
              float* __restrict__ Bt) {
  __shared__ float tile[kPrepareTile][kPrepareTile + 1];
  const int r0 = blockIdx.y * kPrepareTile;
  const int c0 = blockIdx.x * kPrepareTile;
  const int x = threadIdx.x;
  for (int y = threadIdx.y; y < kPrepareTile; y += kPrepareRows) {
    const int r = r0 + y, c = c0 + x;
    tile[y][x] = r < k && c < n ? prepared(B[static_cast<int64_t>(r) * n + c]) : 0.0f;
  }
  __syncthreads();
  for (int y = threadIdx.y; y < kPrepareTile; y += kPrepareRows) {
    const int c = c0 + y, r = r0 + x;
    if (c < cols_p && r < ld) Bt[packed_index<PreparedTile::kBlockN>(c, r, ld)] = tile[x][y];
  }
}

// The packed shapes: K up to whole K tiles, rows up to whole panels.
int prepared_k(const sgemm::Problem& p) { return padded_to(p.k, PreparedTile::kBlockK); }
int prepared_rows(const sgemm::Problem& p) { return padded_to(p.m, PreparedTile::kBlockM); }
int prepared_cols(const sgemm::Problem& p) { return padded_to(p.n, PreparedTile::kBlockN); }
size_t prepared_a_bytes(const sgemm::Problem& p) {
  return static_cast<size_t>(prepared_rows(p)) * prepared_k(p) * sizeof(float);
}
size_t prepared_b_bytes(const sgemm::Problem& p) {
  return static_cast<size_t>(prepared_cols(p)) * prepared_k(p) * sizeof(float);
}
using sgemm::whole_256;  // each region of the workspace starts on 256 bytes (common/split_k.h)

// The passes pay where they take less than what they save the GEMM. Their share is estimated as
// their bytes (A and B read, the packed copies written) at DRAM bandwidth against the flops at
// kSpeedOverFp32 times the FP32 peak, 08's measured speed. What they save, measured on the H100
// (README.md, "Prepared operands"): on aligned squares the prepared GEMM lost at 4096^3 (passes
// 14 % of the unprepared time) and won from 5000^3 on (under 10 %): kMaxPassShare. Where K % 4 or
// N % 4 != 0 the unprepared GEMM copies 4 bytes at a time, 24 % slower at 8191^3 than at 8192^3
// (49 % at 4095 x 4097 x 4095 against 4096^3), which the passes save as well: kFourByteLoss.
// The passes save multiply-add time only: the GEMM must be compute-bound, its multiply-adds at
// least kComputeOverStore times as long as writing C (4 MN bytes at DRAM bandwidth; K >= 8 x 2.9 x
// ridge = 463 on the H100).
constexpr double kMaxPassShare = 0.10;
constexpr double kFourByteLoss = 0.24;
constexpr double kComputeOverStore = 4.0;
constexpr double kSpeedOverFp32 = 2.9;
constexpr size_t kMaxPreparedBytes = size_t{1} << 32;  // prepared A and B together, at most

bool prepare_pays(const sgemm::Problem& p) {
  // Whole panels and K tiles must stay ints, and prepare_b's grid has at most 65535 rows of tiles.
  if (!SGEMM_PREPARE || p.m > INT32_MAX - PreparedTile::kBlockM ||
      p.n > INT32_MAX - PreparedTile::kBlockN || p.k > INT32_MAX - PreparedTile::kBlockK ||
      ceil_div(prepared_k(p), kPrepareTile) > sgemm::kMaxGridY ||
      prepared_a_bytes(p) + prepared_b_bytes(p) > kMaxPreparedBytes) {
    return false;
  }
  if (SGEMM_PREPARE_ALWAYS) return true;
  const double bytes =
      4.0 * p.m * p.k + prepared_a_bytes(p) + 4.0 * p.k * p.n + prepared_b_bytes(p);
  const double flops = 2.0 * p.m * p.n * p.k;
  const double c_bytes = 4.0 * p.m * p.n;
  const double ridge = sgemm::current_device().ridge;
  if (flops / kSpeedOverFp32 < kComputeOverStore * ridge * c_bytes) return false;
  const double saved = kMaxPassShare + (p.k % 4 != 0 || p.n % 4 != 0 ? kFourByteLoss : 0.0);
  return ridge * bytes / flops * kSpeedOverFp32 < saved;
}

// The problem the prepared GEMM sees: K a whole number of K tiles (zeros in A and Bt).
sgemm::Problem prepared_problem(const sgemm::Problem& p) {
  sgemm::Problem q = p;
  q.k = prepared_k(p);
  return q;
}

// How the launcher cuts a problem (README.md, "Every shape"): chapter 07's two decisions, the
// tile and the number of K slices, by sgemm::plan_tiles (common/split_k.h): the big tile whenever
// its blocks fill every SM once, else the tile whose busiest SM has the least work, and split-K
// for the tile's blocks when they leave SMs idle. Where the passes pay, the prepared tile.
template <class T, bool kPrepared>
sgemm::TileSpec spec_of(const sgemm::Problem& q) {
  static const int slots = sgemm::sm_count() * sgemm::blocks_per_sm(kernel_for<T, kPrepared>(q),
                                                                    T::kThreads, T::kSmemBytes);
  return {T::kBlockM, T::kBlockN, T::kBlockK, T::kStages, slots};
}

enum class Which { kMain, kSmall, kPrepared };
struct Plan {
  Which tile = Which::kMain;
  sgemm::SplitK split;
  bool grouped = false;  // the prepared GEMM in chapter 01's grouped block order
};

// The prepared GEMM's block order. In the plain order the blocks running at once cover whole rows
// of tiles; where a wave of them spans fewer than kMinWaveRows rows, each K step of the wave reads
// B's whole width for a few rows of A, and the grouped order (kGroupRowsWide rows of tiles a
// group) ran faster: measured on the H100 (README.md, "Prepared operands"), at 12288^3 and
// 16384^3 (2.75 and 2.06 rows a wave) 51 and 52 % of cuBLAS TF32 grouped against 44 and 42 %
// plain; at 8192^3 (4.1 rows) 49-50 % grouped against 51 % plain; at 6144^3 (5.5) the same.
constexpr double kMinWaveRows = 4.0;
bool grouped_order(const sgemm::Problem& q, const sgemm::TileSpec& t) {
  return kGroupRowsWide > 1 &&
         static_cast<double>(t.slots) / ceil_div(q.n, t.block_n) < kMinWaveRows;
}

Plan plan_for(const sgemm::Problem& p) {
  if (prepare_pays(p)) {
    const sgemm::Problem q = prepared_problem(p);
    const sgemm::TileSpec t = spec_of<PreparedTile, true>(q);
    Plan plan{Which::kPrepared, {1, q.k}, grouped_order(q, t)};
    if (SGEMM_SPLIT_K) {
      plan.split = sgemm::plan_split_k(sgemm::tiles_of(q, t), t.slots, q.k, t.block_k, t.stages);
    }
    return plan;
  }
  const sgemm::TilePlan two =
      sgemm::plan_tiles(p, spec_of<MainTile, false>(p), spec_of<SmallTile, false>(p),
                        sgemm::sm_count(), SGEMM_SPLIT_K);
  return {two.small_tile ? Which::kSmall : Which::kMain, two.split};
}

// The workspace: the split-K slices first (launch_split_k's), then the prepared A and Bt.
size_t workspace_for(const sgemm::Problem& p, const Plan& plan) {
  if (plan.tile != Which::kPrepared) return sgemm::split_k_workspace_bytes(p, plan.split);
  return whole_256(sgemm::split_k_workspace_bytes(prepared_problem(p), plan.split)) +
         whole_256(prepared_a_bytes(p)) + prepared_b_bytes(p);
}

template <class T, bool kPrepared, int kGroupRows = 1>
void launch_tile(const sgemm::Problem& q, const sgemm::SplitK& split, const float* A,
                 const float* B, int ldb, float* C, cudaStream_t stream) {
  sgemm::launch_split_k(q, split, kernel_for<T, kPrepared, kGroupRows>(q), T::kBlockM, T::kBlockN,
                        T::kThreads, T::kSmemBytes, A, B, ldb, C, stream);
}

void launch_tensor_cores(const sgemm::Problem& p, const float* A, const float* B, float* C,
                         cudaStream_t stream) {
  Plan plan = plan_for(p);
  // The harness allocates workspace_bytes(p); should it hold less, no passes and one pass over K.
  if (workspace_for(p, plan) > p.workspace_size) {
    plan.tile = Which::kMain;
    plan.split = {1, p.k};
  }
  switch (plan.tile) {
    case Which::kPrepared: {
      const sgemm::Problem q = prepared_problem(p);
      float* const Ap = static_cast<float*>(p.workspace) +
                        whole_256(sgemm::split_k_workspace_bytes(q, plan.split)) / sizeof(float);
      float* const Bt = Ap + whole_256(prepared_a_bytes(p)) / sizeof(float);
      const int rows_p = prepared_rows(p), cols_p = prepared_cols(p);
      const dim3 grid_a(ceil_div(q.k / 4, kPrepareThreadsA), std::min(rows_p, sgemm::kMaxGridY));
      prepare_a<<<grid_a, kPrepareThreadsA, 0, stream>>>(p.m, p.k, A, rows_p, q.k, Ap);
      const dim3 grid_b(ceil_div(cols_p, kPrepareTile), ceil_div(q.k, kPrepareTile));
      prepare_b<<<grid_b, dim3(kPrepareTile, kPrepareRows), 0, stream>>>(p.k, p.n, B, cols_p, q.k,
                                                                         Bt);
      if (plan.grouped) {
        launch_tile<PreparedTile, true, kGroupRowsWide>(q, plan.split, Ap, Bt, q.k, C, stream);
      } else {
        launch_tile<PreparedTile, true>(q, plan.split, Ap, Bt, q.k, C, stream);
      }
      break;
    }
    case Which::kSmall:
      launch_tile<SmallTile, false>(p, plan.split, A, B, p.n, C, stream);
      break;
    default:
      launch_tile<MainTile, false>(p, plan.split, A, B, p.n, C, stream);
  }
}

size_t workspace_bytes(const sgemm::Problem& p) { return workspace_for(p, plan_for(p)); }

// The tile the launcher takes for this problem, for the harness's traffic model.
sgemm::TileSize tile_for(const sgemm::Problem& p) {
  switch (plan_for(p).tile) {
    case Which::kPrepared:
      return {PreparedTile::kBlockM, PreparedTile::kBlockN};
    case Which::kSmall:
      return {SmallTile::kBlockM, SmallTile::kBlockN};
    default:
      return {MainTile::kBlockM, MainTile::kBlockN};
  }
}

}  // namespace

int main(int argc, char** argv) {
  // The title carries the tile, so tuning runs tell themselves apart.
  static const std::string title =
      "tensor cores (TF32 mma.sync m16n8k8, BM x BN x BK = " + std::to_string(kTile.block_m) + "x" +
      std::to_string(kTile.block_n) + "x" + std::to_string(kTile.block_k) + ", warp " +
      std::to_string(kTile.warp_m) + "x" + std::to_string(kTile.warp_n) + ", " +
      std::to_string(kTile.stages) + " stages)";
  sgemm::Chapter chapter{"08_tensor_cores", title.c_str(), &launch_tensor_cores,
                         kTile.block_m,     kTile.block_n, &tile_for};
  chapter.precision = sgemm::Precision::kTf32;
  chapter.workspace_bytes = &workspace_bytes;
  return sgemm::run_chapter(chapter, argc, argv);
}
