// SPDX-License-Identifier: MIT
// SGEMM tutorial, chapter 09: 3xTF32, FP32 accuracy from TF32 tensor cores.
//
//   00 naive -> 01 coalescing -> 02 smem tiling -> 03 thread tiling -> 04 vectorized
//   -> 05 bank conflicts -> 06 double buffer -> 07 any shape -> 08 tensor cores -> [09 3xTF32]
//   -> 10 wgmma
//
// Chapter 08 rounds every input to TF32 (10 mantissa bits) and loses about three decimal digits.
// Here each input x is split into two TF32 numbers, big = tf32(x) and small = tf32(x - big),
// which together keep all but about one of FP32's 24 significant bits, and the product a*b becomes
// small_a*big_b + big_a*small_b + big_a*big_b (small*small, at the level of FP32's last bit, is
// dropped): three mma.sync per product instead of one. The split alone is not enough: the tensor
// cores add into their FP32 accumulator with less care than an FP32 add (README.md, "Where the
// error goes: the accumulation"), so every kPromote k-steps the tensor-core partial sums are added
// into separate FP32 accumulators on the CUDA cores and restarted from zero. Everything else is
// chapter 08's kernel: cp.async pipeline, padded shared memory, ldmatrix for A (the wrappers in
// common/). Precision contract: FP32 (verified against cuBLAS CUBLAS_COMPUTE_32F, TF32 off, with
// the FP32 tolerance; its speed is compared with that mode) for finite inputs whose products and
// sums are finite in FP32 and whose nonzero elements are at least 2^-114 in magnitude; smaller ones
// have subnormal small parts, which TF32 holds only to multiples of 2^-136 (README.md, "The
// range"). Limits: sm_80 or newer (TF32 mma.sync); every shape. Example: build/bin/09_3xtf32 --size
// 4096

#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "common/cp_async.h"
#include "common/grid.h"
#include "common/harness.h"
#include "common/mma_sync.h"
#include "common/tf32.h"

// Tile shape (BM, BN, BK, WM, WN, STAGES), chosen on the H100: README.md, "Choosing the tile".
// Two sets of accumulators (tensor-core partial sums and FP32 totals) per thread: 64 x 32 warps.
// The tuning build (-DSGEMM_TUNING=ON) compiles this file again with other SGEMM_TILE values.
#ifndef SGEMM_TILE
#define SGEMM_TILE 128, 128, 32, 64, 32, 3
#endif
// Promotion interval: the tensor-core partial sums go into the FP32 accumulators every
// SGEMM_PROMOTE mma k-steps (of 8), 0 = never (plain 3xTF32). README.md, "Promotion", measures
// the speed and error of each.
#ifndef SGEMM_PROMOTE
#define SGEMM_PROMOTE 4
#endif
// SGEMM_VECTOR_B = 0 reads the B fragments with one 4-byte load per value (chapter 08's default)
// instead of float4s (chapter 08's SGEMM_VECTOR_B layout): README.md, "Attribution and
// variants", measures both.
#ifndef SGEMM_VECTOR_B
#define SGEMM_VECTOR_B 1
#endif

namespace {

using sgemm::ceil_div;
using sgemm::kMmaK;
using sgemm::kMmaM;
using sgemm::kMmaN;

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
  // for kFragsN = 4 and 4 banks apart for kFragsN = 8 (08's README, "Shared memory
  // without bank conflicts").
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

  // Promotion every kPromote k-steps: inside a K tile when it divides the tile's kSteps, else
  // every kPromote / kSteps tiles.
  static constexpr int kSteps = kBlockK / kMmaK;
  static constexpr int kPromote = SGEMM_PROMOTE;

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
  // Promote inside the K tile (after k-steps kPromote - 1, 2 kPromote - 1, ...) or once every
  // kTilesPerPromote tiles; 0 in both: never.
  static constexpr int kStepsPerPromote = kPromote > 0 && kPromote <= kSteps ? kPromote : 0;
  static constexpr int kTilesPerPromote = kPromote > kSteps ? kPromote / kSteps : 0;
  static_assert(kPromote >= 0 && (kStepsPerPromote == 0 || kSteps % kStepsPerPromote == 0) &&
                    (kTilesPerPromote == 0 || kPromote % kSteps == 0),
                "SGEMM_PROMOTE must divide, or be a multiple of, the k-steps of a K tile");
  static_assert(kSmemBytes <= 227 * 1024, "shared memory per block is limited to 227 KB");
};

struct TileShape {
  int block_m, block_n, block_k, warp_m, warp_n, stages;
};
constexpr TileShape kTile{SGEMM_TILE};
using MainTile =
    Tile<kTile.block_m, kTile.block_n, kTile.block_k, kTile.warp_m, kTile.warp_n, kTile.stages>;
// For problems whose big tiles would leave SMs idle (08's README, "Small problems").
using SmallTile = Tile<64, 128, 32, 32, 32, 3>;

// ---- The tensor-core side ----------------------------------------------------------------------
// cp.async (common/cp_async.h), ldmatrix and mma.sync (common/mma_sync.h) as in chapter 08.

// Column of a warp's C tile (and of its B tile) that holds column x (0..7) of mma n-tile j. The
// mma does not care which columns of B it is given, as long as C's columns follow the same map.
// Plain: 8j + x. kVectorB: kFragsN * p(x) + j, so lane group g = x finds its kFragsN values of a
// k row side by side; p swaps bits 0 and 1 of x when kFragsN = 8, which puts the two lane groups
// of one LDS.128 phase 16 banks apart (08's README, "Shared memory without bank
// conflicts").
template <class T>
__host__ __device__ constexpr int warp_column(int j, int x) {
  if (!T::kVectorB) return kMmaN * j + x;
  const int p = T::kFragsN == 8 ? (x & 4) | ((x & 1) << 1) | ((x >> 1) & 1) : x;
  return T::kFragsN * p + j;
}

// x as two mma operands, big + small (README.md, "The split"): within 2^-23 |x| wherever
// |x| >= 2^-114 ("The range"). big = sgemm::tf32_value(x): x rounded to the nearest TF32 number
// with its 13 low bits cleared, so x - big is exact in FP32; it never overflows (the last 4096
// floats below Inf are truncated instead of rounded up). small = x - big rounded for the tensor
// core by sgemm::tf32_operand: nothing subtracts small, so its low bits may stay as the rounding's
// add left them (two instructions, not tf32_value's three).
struct Split {
  uint32_t big;
  uint32_t small;
};
__device__ __forceinline__ Split split_tf32(float x) {
  const float big = sgemm::tf32_value(x);
  return {__float_as_uint(big), sgemm::tf32_operand(x - big)};
}

// The tensor cores' partial sums `part` join the FP32 totals `acc` (an FP32 add, correctly
// rounded, on the CUDA cores) and restart from zero.
template <class T>
__device__ __forceinline__ void promote(float (&acc)[T::kFragsM][T::kFragsN][4],
                                        float (&part)[T::kFragsM][T::kFragsN][4]) {
#pragma unroll
  for (int i = 0; i < T::kFragsM; ++i) {
#pragma unroll
    for (int j = 0; j < T::kFragsN; ++j) {
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        acc[i][j][r] += part[i][j][r];
        part[i][j][r] = 0.0f;
      }
    }
  }
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

// This thread's share of every K tile's copies, fixed for the whole kernel: chunk c of a row
// goes to chunk c of its padded row in shared memory.
template <class T>
__device__ __forceinline__ CopyPlan make_copy_plan(int tid, const float* A, const float* B, int k,
                                                   int block_row, int block_col) {
  CopyPlan plan;
  plan.a_row = tid / T::kChunksA;
  plan.a_col = (tid % T::kChunksA) * 4;
  plan.a_pass = static_cast<int64_t>(T::kRowsPerPassA) * k;
  plan.a = A + static_cast<int64_t>(block_row + plan.a_row) * k + plan.a_col;
  plan.a_dst = plan.a_row * T::kStrideA + plan.a_col;
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
    copy_tile<T, kAlignedK, kAlignedN, false>(sA, sA + T::kSizeA, plan, A, B, n, rows_left, k_left);
  }
  plan.a += T::kBlockK;
  plan.b += static_cast<int64_t>(T::kBlockK) * n;
}

// kAlignedK: K % 4 == 0 (rows of A start on 16 bytes); kAlignedN: N % 4 == 0 (rows of B and C).
template <class T, bool kAlignedK, bool kAlignedN>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocksPerSm)
    sgemm_3xtf32(int m, int n, int k, float alpha, const float* __restrict__ A,
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
  CopyPlan plan = make_copy_plan<T>(tid, A, B, k, block_row, block_col);

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
    sgemm::cp_async_commit();
  }

  float acc[T::kFragsM][T::kFragsN][4] = {};   // FP32 totals (CUDA-core adds)
  float part[T::kFragsM][T::kFragsN][4] = {};  // tensor-core partial sums since the last promotion

  // Main loop. Iteration t: wait until tile t has landed; the barrier also says every warp has
  // finished computing tile t - 1, whose stage is then refilled with tile t + kStages - 1 while
  // tile t is computed.
  int read_stage = 0;
  int write_stage = T::kStages - 1;
  for (int tile = 0; tile < num_tiles; ++tile) {
    sgemm::cp_async_wait<T::kStages - 2>();
    __syncthreads();
    if (tile + T::kStages - 1 < num_tiles) issue(tile + T::kStages - 1, write_stage);
    sgemm::cp_async_commit();

    const uint32_t a_stage = a_frag + read_stage * T::kStageFloats * sizeof(float);
    const float* b_stage = smem + read_stage * T::kStageFloats + b_frag;
#pragma unroll
    for (int kk = 0; kk < T::kBlockK; kk += kMmaK) {
      // Fragments of this k-step, each value split into its big and small TF32 parts.
      uint32_t rA[T::kFragsM][4], rA_small[T::kFragsM][4];
      uint32_t rB[T::kFragsN][2], rB_small[T::kFragsN][2];
#pragma unroll
      for (int i = 0; i < T::kFragsM; ++i) {
        sgemm::ldmatrix_x4(rA[i], a_stage + (i * kMmaM * T::kStrideA + kk) * sizeof(float));
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const Split v = split_tf32(__uint_as_float(rA[i][r]));
          rA[i][r] = v.big;
          rA_small[i][r] = v.small;
        }
      }
#pragma unroll
      for (int r = 0; r < 2; ++r) {
#pragma unroll
        for (int j = 0; j < T::kFragsN; j += T::kVectorB ? 4 : 1) {
          // kVectorB: the values of n-tiles j .. j + 3 side by side (one LDS.128).
          float v[4];
          if constexpr (T::kVectorB) {
            const float4 w =
                *reinterpret_cast<const float4*>(b_stage + (kk + 4 * r) * T::kStrideB + j);
            v[0] = w.x, v[1] = w.y, v[2] = w.z, v[3] = w.w;
          } else {
            v[0] = b_stage[(kk + 4 * r) * T::kStrideB + j * kMmaN];
          }
#pragma unroll
          for (int u = 0; u < (T::kVectorB ? 4 : 1); ++u) {
            const Split x = split_tf32(v[u]);
            rB[j + u][r] = x.big;
            rB_small[j + u][r] = x.small;
          }
        }
      }
      // The two small cross terms first, then big * big, all into the same partial sums.
#pragma unroll
      for (int i = 0; i < T::kFragsM; ++i) {
#pragma unroll
        for (int j = 0; j < T::kFragsN; ++j) {
          sgemm::mma_tf32(part[i][j], rA_small[i], rB[j]);
          sgemm::mma_tf32(part[i][j], rA[i], rB_small[j]);
          sgemm::mma_tf32(part[i][j], rA[i], rB[j]);
        }
      }
      if constexpr (T::kStepsPerPromote > 0) {
        if ((kk / kMmaK + 1) % T::kStepsPerPromote == 0) promote<T>(acc, part);
      }
    }
    if constexpr (T::kTilesPerPromote > 0) {
      if ((tile + 1) % T::kTilesPerPromote == 0) promote<T>(acc, part);
    }
    read_stage = read_stage + 1 == T::kStages ? 0 : read_stage + 1;
    write_stage = write_stage + 1 == T::kStages ? 0 : write_stage + 1;
  }

  // What is left since the last promotion (all of it when kPromote == 0; 0 + x is exact).
  promote<T>(acc, part);

  // Epilogue: C = alpha * acc + beta * C. With beta == 0, C is never read (it may hold NaN).
  // acc[i][j] holds rows 16i + g (registers 0, 1) and 16i + g + 8 (2, 3), columns
  // warp_column(j, 2t) (registers 0, 2) and warp_column(j, 2t + 1) (1, 3). With kVectorB the
  // kFragsN values of one row and one e = 0, 1 are kFragsN consecutive columns: float4 stores.
#pragma unroll
  for (int i = 0; i < T::kFragsM; ++i) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = block_row + warp_row + i * kMmaM + g + 8 * half;
      if (row >= m) continue;
      float* c_row = C + static_cast<int64_t>(row) * n;
#pragma unroll
      for (int e = 0; e < 2; ++e) {
#pragma unroll
        for (int q = 0; q < T::kFragsN; q += T::kVectorB ? 4 : 1) {
          // kVectorB: 4 consecutive columns from n-tiles q .. q + 3; otherwise 1 column.
          const int col = block_col + warp_col + warp_column<T>(q, 2 * t + e);
          constexpr int kWidth = T::kVectorB ? 4 : 1;
          float v[kWidth];
#pragma unroll
          for (int u = 0; u < kWidth; ++u) v[u] = alpha * acc[i][q + u][2 * half + e];
          if constexpr (kAlignedN && kWidth == 4) {
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
            for (int u = 0; u < kWidth; ++u) {
              if (col + u < n) {
                c_row[col + u] = beta != 0.0f ? v[u] + beta * c_row[col + u] : v[u];
              }
            }
          }
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
  Kernel* const kernels[2][2] = {{&sgemm_3xtf32<T, false, false>, &sgemm_3xtf32<T, false, true>},
                                 {&sgemm_3xtf32<T, true, false>, &sgemm_3xtf32<T, true, true>}};
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

// The big tile when it gives every SM at least one block, the small one otherwise (08's README,
// "Small problems").
bool takes_small_tile(const sgemm::Problem& p) {
  const int64_t big_tiles =
      static_cast<int64_t>(ceil_div(p.m, MainTile::kBlockM)) * ceil_div(p.n, MainTile::kBlockN);
  return big_tiles < sgemm::sm_count();
}

void launch_3xtf32(const sgemm::Problem& p, const float* A, const float* B, float* C,
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
  // The title carries the tile and the promotion interval, so tuning runs tell themselves apart.
  static const std::string title =
      "3xTF32 (big + small TF32 split, 3 mma.sync per product, promoted every " +
      std::to_string(SGEMM_PROMOTE) + " k-steps; BM x BN x BK = " + std::to_string(kTile.block_m) +
      "x" + std::to_string(kTile.block_n) + "x" + std::to_string(kTile.block_k) + ", warp " +
      std::to_string(kTile.warp_m) + "x" + std::to_string(kTile.warp_n) + ", " +
      std::to_string(kTile.stages) + " stages)";
  const sgemm::Chapter chapter{"09_3xtf32",   title.c_str(), &launch_3xtf32,
                               kTile.block_m, kTile.block_n, &tile_for};
  return sgemm::run_chapter(chapter, argc, argv);
}
