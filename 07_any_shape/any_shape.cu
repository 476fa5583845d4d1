// SPDX-License-Identifier: MIT
// SGEMM tutorial, chapter 07: any shape (the launcher decides how to cut the work).
//
//   00 naive -> 01 coalescing -> 02 smem tiling -> 03 thread tiling -> 04 vectorized
//   -> 05 bank conflicts -> 06 double buffer -> [07 any shape] -> 08 tensor cores -> 09 3xTF32
//
// The kernel is chapter 06's. What changes is how the launcher cuts a problem into blocks, because
// a GPU is only fast when every SM has work until the end:
//  - wave quantization: seven tiles (128 x 256 down to 64 x 64, and two 32 wide) and a model
//    that, from M, N, K and the device's SM count, predicts the time of each and takes the
//    fastest (the one that leaves the least SM time idle in the last wave, or computes the
//    fewest zeros);
//  - split-K: when M x N gives too few tiles to fill the GPU, K is cut into slices computed by
//    different blocks; each slice writes its partial tile to a workspace the harness allocates,
//    and a second kernel adds the slices in a fixed order and applies alpha and beta (reading C
//    once). No atomics: the result is bit-identical from run to run;
//  - rows not 16-byte aligned (N % 4 != 0): B is copied and C written 8 bytes at a time when N is
//    even and 4 bytes otherwise, with neighbouring threads on neighbouring addresses (chapter 06
//    made each thread copy four scattered floats). When N is odd and the model says it pays, B is
//    first copied once into a workspace whose rows are padded to a multiple of 4 floats, so the
//    kernel copies B 16 bytes at a time again (C keeps its rows and is written 4 bytes at a time;
//    with split-K the padded problem runs as one whose N is a multiple of 4, and only the
//    reduction writes C's rows);
//  - thin problems (M <= 16 or N <= 24) are memory bound and get no tile: three kernels stream
//    the large operand once (the two few-columns ones through chapter 06's cp.async pipeline),
//    with K cut into slices until the GPU is full.
// Limits: FP32 CUDA cores only (no tensor cores); cp.async needs sm_80 or newer.
// Example: build/bin/07_any_shape --m 8192 --n 128 --k 8192

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

#include <cuda_runtime.h>

#include "common/check.h"
#include "common/exit_codes.h"
#include "common/grid.h"
#include "common/harness.h"
#include "common/roofline.h"
#include "common/split_k.h"

// The parts of the chapter can be switched off one by one, for the attribution table of
// README.md ("Results"); the tuning build (-DSGEMM_TUNING=ON) compiles those variants.
#ifndef SGEMM_TILE_COUNT
#define SGEMM_TILE_COUNT 7  // how many of the tiles, largest first, the model may choose from
#endif
#ifndef SGEMM_SPLIT_K
#define SGEMM_SPLIT_K 1  // 0: never cut K
#endif
#ifndef SGEMM_EIGHT_BYTE_ROWS
#define SGEMM_EIGHT_BYTE_ROWS 1  // 0: rows with N % 4 != 0 are always copied 4 bytes at a time
#endif
#ifndef SGEMM_PADDED_B
#define SGEMM_PADDED_B 1  // 0: never copy B into padded rows (N odd stays on 4-byte copies)
#endif
// 0: 128 x 256 with N odd writes C from the registers, 4 bytes a store; 2: it stages C only with B
// padded (the epilogue before the 4-byte copies of B staged it too).
#ifndef SGEMM_STAGED_C
#define SGEMM_STAGED_C 1
#endif
#ifndef SGEMM_ODD_TWO_STAGES
#define SGEMM_ODD_TWO_STAGES 1  // 0: 4-byte copies of B on 8 x 8 thread tiles keep three stages
#endif
#ifndef SGEMM_SPLIT_EDGE_UP
#define SGEMM_SPLIT_EDGE_UP 1  // 0: split-K's bottom-row blocks check each copy of A's rows
#endif
#ifndef SGEMM_ROW_COPIES
#define SGEMM_ROW_COPIES 1  // 0: 4- and 8-byte copies of B one address per copy, as 16-byte ones
#endif
#ifndef SGEMM_THIN
#define SGEMM_THIN 1  // 0: M <= 16 or N <= 24 go to the tiles like every other shape
#endif
#ifndef SGEMM_WIDE_FEW_COLS
#define SGEMM_WIDE_FEW_COLS 1  // 0: only N <= 16 is thin (17 to 24 columns go to the tiles)
#endif
// When the last, partial round of blocks is timed at its own occupancy: 1 always (the model), 0
// never, 2 only after at most two full rounds (the rule before the constants were measured).
#ifndef SGEMM_PARTIAL_ROUND
#define SGEMM_PARTIAL_ROUND 1
#endif
// 1: the calibration build (scripts/calibrate_07.py): the plan comes from the environment variable
// SGEMM_PLAN="tile,splits,pad" instead of the model (unset: the model's), and each plan is printed
// on stderr. Never the chapter's binary: a plan picked by hand for a shape is what the model is
// for.
#ifndef SGEMM_FORCED_PLAN
#define SGEMM_FORCED_PLAN 0
#endif

namespace {

using sgemm::ceil_div;

constexpr int log2_exact(int x) { return x <= 1 ? 0 : 1 + log2_exact(x / 2); }

// Everything the kernel derives from the tile shape (chapter 06), checked at compile time.
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

  // sA holds A transposed, sA[k][m], each row padded by 4 floats (conflict-free transposing
  // copies, chapter 05). sB[k][n] needs no padding.
  static constexpr int kStrideA = kBlockM + 4;
  static constexpr int kStageFloats = kBlockK * kStrideA + kBlockK * kBlockN;
  static constexpr int kSmemBytes = kStages * kStageFloats * static_cast<int>(sizeof(float));

  // Copy plan for A: 8 consecutive threads copy 8 consecutive k of one row (one 32-byte sector).
  static constexpr int kRowsPerPassA = kThreads / 8;
  static constexpr int kPassesA = kBlockM / kRowsPerPassA;
  static constexpr int kStepsA = kBlockK / 8;

  // Copy plan for B with kVec floats per copy (4: N % 4 == 0, 2: N even, 1: N odd), coalesced in
  // global memory and conflict-free in shared memory. 16-byte chunks: consecutive threads take
  // consecutive chunks of a row, kRowsPerPass rows per pass, one chunk a row. Narrower chunks,
  // more than 32 to a row (SGEMM_ROW_COPIES): a warp takes a row, each lane kChunks chunks
  // kChunkStride floats apart, so one 64-bit address per row serves all of a thread's chunks in
  // it (immediate offsets); a thread per chunk would compute an address per copy, four times as
  // many for 4 bytes. A row of at most 32 chunks is one chunk a lane either way.
  template <int kVec>
  struct CopyB {
    static constexpr bool kByRow = kVec < 4 && kBlockN / kVec > 32 && SGEMM_ROW_COPIES;
    static constexpr int kThreadsPerRow = kByRow ? 32 : kBlockN / kVec;
    static constexpr int kChunkStride = kThreadsPerRow * kVec;  // floats between a lane's chunks
    static constexpr int kChunks = kBlockN / kChunkStride;      // chunks per thread and row
    static constexpr int kRowsPerPass = kThreads / kThreadsPerRow;
    static constexpr int kCopies = kBlockK / kRowsPerPass;  // rows per thread
    static_assert(kThreadsPerRow <= kThreads && kThreads % kThreadsPerRow == 0 &&
                      kChunks * kChunkStride == kBlockN && kBlockK % kRowsPerPass == 0,
                  "B is copied in whole chunks, every thread the same number of times");
  };

  // Up to 4 x 8 accumulators per thread fit in 102 registers (five 128-thread blocks on an SM),
  // up to 8 x 8 in 128; bigger thread tiles get 255.
  static constexpr int kRegisters = kThreadM * kThreadN <= 32   ? 102
                                    : kThreadM * kThreadN <= 64 ? 128
                                                                : 256;
  static constexpr int kMinBlocksPerSm = 65536 / (kThreads * kRegisters) > 0
                                             ? 65536 / (kThreads * kRegisters)
                                             : 1;
  // The split-K kernel's register cap: the same occupancy (kRegisters for up to 8 x 8
  // accumulators), 240 for bigger thread tiles (measured, see sgemm_any_shape_split).
  static constexpr int kSplitRegisters = kThreadM * kThreadN <= 64 ? kRegisters : 240;

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
  static_assert(kStages >= 2, "a pipeline needs at least two stages");
  static_assert(kSmemBytes <= 227 * 1024, "shared memory per block is limited to 227 KB");
};

// The launcher's tiles (BM, BN, BK, WM, WN, TM, TN, STAGES), largest first. The large one is
// chapter 06's; the smaller ones cut the same problem into 2, 4 and 8 times more blocks, so the
// last wave can be filled more evenly; 128 x 64 and 64 x 64 waste less of a 64-wide matrix, the
// last two less of a 32-wide one.
// The first three were measured in chapter 06's tuning build (tiles.md in the results folder).
using LargeTile = Tile<128, 256, 16, 64, 64, 8, 16, 3>;   // 256 threads, 1 block per SM
using MediumTile = Tile<128, 128, 16, 64, 64, 8, 16, 3>;  // 128 threads, 2 blocks per SM
using SmallTile = Tile<64, 128, 16, 32, 64, 8, 8, 3>;     // 128 threads, 4 blocks per SM
using TallTile = Tile<128, 64, 16, 32, 64, 8, 8, 3>;      // 128 threads, 4 blocks per SM
using TinyTile = Tile<64, 64, 16, 32, 64, 8, 8, 3>;       // 64 threads, 8 blocks per SM
// A C only 17-32 columns wide (or rows tall) leaves half or more of a 64-wide tile idle; these two
// are 32 wide, with warps of 32 x 32 (4 x 8 accumulators a thread: fewer FMAs per value loaded
// from shared memory, so a lower share of the peak, which the model weighs against the waste).
using NarrowTile = Tile<128, 32, 16, 32, 32, 4, 8, 3>;  // 128 threads, 5 blocks per SM
using WideTile = Tile<32, 128, 16, 32, 32, 4, 8, 3>;    // 128 threads, 5 blocks per SM

// The tile a kernel with kVec-float copies of B runs. N odd on the tiles of 8 x 8 accumulators a
// thread (128 registers, four or eight blocks per SM): three stages' 4-byte copies need more
// addresses than the registers hold, and ptxas spilled 20-48 bytes a thread; with two stages
// nothing spills. Forced on 7 odd-N shapes, 19 of the 21 runs were faster (up to 9 %), two of
// 128 x 64 up to 1.5 % slower (README.md, "Rows of odd length without the copy"). Every other
// kernel keeps the tile's stages: two cost 128 x 256 and 128 x 128 1-2 %.
template <class T, int kVec>
using TileFor = std::conditional_t<
    kVec == 1 && T::kRegisters == 128 && SGEMM_ODD_TWO_STAGES,
    Tile<T::kBlockM, T::kBlockN, T::kBlockK, T::kWarpM, T::kWarpN, T::kThreadM, T::kThreadN, 2>, T>;

// ---- cp.async: asynchronous global -> shared copies (sm_80+) ----------------------------------
// A copy with valid == false reads nothing and writes zeros (src-size 0): the tile edges. Only
// 16-byte copies may bypass L1 (.cg); 4- and 8-byte copies must use .ca.

template <int kVec>
__device__ __forceinline__ void copy_async(float* smem_dst, const float* gmem_src, bool valid) {
  static_assert(kVec == 1 || kVec == 2 || kVec == 4, "cp.async copies 4, 8 or 16 bytes");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  if constexpr (kVec == 4) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst),
                 "l"(__cvta_generic_to_global(gmem_src)), "r"(valid ? 16 : 0)
                 : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst),
                 "l"(__cvta_generic_to_global(gmem_src)), "n"(4 * kVec), "r"(valid ? 4 * kVec : 0)
                 : "memory");
  }
#else
  for (int j = 0; j < kVec; ++j) smem_dst[j] = valid ? gmem_src[j] : 0.0f;
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
  int b_col;       // its chunk of a B row, relative to the block
  int b_row;       // its first row of the B tile
  int b_src;       // column of B it copies (block_col + b_col); 0 if outside the matrix
  bool b_ok;       // that chunk of B starts inside the matrix (wholly inside when ldb == N; in a
                   // padded copy its end may read the zeros past column N)
};

// Issues the copies of one K tile into one stage (chapter 06). kCheckA: A's tile may reach past
// the matrix (last K tile of the slice, or bottom row of blocks). kCheckB: 2, B's tile may reach
// past K or N (last K tile); 1, past N only (a row copy's last column of blocks); 0, neither (a
// chunk copy resolves its column once, in the plan). Elements outside are zero-filled and read
// from a valid address. ldb: floats from one row of B to the next; cols_left: n - block_col.
template <class T, int kVec, bool kCheckA, int kCheckB>
__device__ __forceinline__ void copy_tile(float* sA, float* sB, const CopyPlan& p, const float* A,
                                          const float* B, int ldb, int rows_left, int cols_left,
                                          int k_left) {
  // A, transposed on the way, 4 bytes at a time: 8 lanes read the 32 bytes of one row.
  const float* row_ptr = p.a;
#pragma unroll
  for (int i = 0; i < T::kPassesA; ++i) {
#pragma unroll
    for (int j = 0; j < T::kStepsA; ++j) {
      float* dst = sA + p.a_dst + 8 * j * T::kStrideA + i * T::kRowsPerPassA;
      if (kCheckA) {
        const bool ok = p.a_row + i * T::kRowsPerPassA < rows_left && p.a_k + 8 * j < k_left;
        copy_async<1>(dst, ok ? row_ptr + 8 * j : A, ok);
      } else {
        copy_async<1>(dst, row_ptr + 8 * j, true);
      }
    }
    row_ptr += p.a_pass;
  }
  // B, row-major like global memory, chunks of kVec floats.
  using CB = typename T::template CopyB<kVec>;
#pragma unroll
  for (int c = 0; c < CB::kCopies; ++c) {
    const int row = p.b_row + c * CB::kRowsPerPass;
    const float* src = p.b + static_cast<int64_t>(c) * CB::kRowsPerPass * ldb + p.b_src;
    if constexpr (!CB::kByRow) {
      // One chunk a row, resolved once: p.b_ok and p.b_src hold the column check.
      const bool ok = (kCheckB != 2 || row < k_left) && p.b_ok;
      copy_async<kVec>(sB + row * T::kBlockN + p.b_col, kCheckB == 2 && !ok ? B : src, ok);
    } else {
#pragma unroll
      for (int j = 0; j < CB::kChunks; ++j) {
        const int col = p.b_col + j * CB::kChunkStride;
        if (kCheckB != 0) {
          const bool ok = (kCheckB != 2 || row < k_left) && col < cols_left;
          copy_async<kVec>(sB + row * T::kBlockN + col, ok ? src + j * CB::kChunkStride : B, ok);
        } else {
          copy_async<kVec>(sB + row * T::kBlockN + col, src + j * CB::kChunkStride, true);
        }
      }
    }
  }
}

// The copies of one K tile with the checks its place needs: the last K tile checks A and B (their
// k may run past K), a block of the bottom row A's rows, and with row copies a block of the last
// column B's columns. With row copies a bottom-row block copies B unchecked: with M < BM every
// block is in the bottom row, and checking B there cost the 64 x 128 tile up to 9 % at M = 38 and
// 98 (README.md, "Rows that are not 16-byte aligned"). Chunk copies keep one checked path for
// both (the plan resolves their columns once), and with it chapter 06's machine code.
template <class T, int kVec>
__device__ __forceinline__ void copy_stage(float* sA, float* sB, const CopyPlan& p, const float* A,
                                           const float* B, int ldb, int rows_left, int cols_left,
                                           int k_left, bool last, bool edge_m, bool edge_n) {
  if constexpr (!T::template CopyB<kVec>::kByRow) {
    if (last || edge_m) {
      copy_tile<T, kVec, true, 2>(sA, sB, p, A, B, ldb, rows_left, cols_left, k_left);
    } else {
      copy_tile<T, kVec, false, 0>(sA, sB, p, A, B, ldb, rows_left, cols_left, k_left);
    }
  } else if (last) {
    copy_tile<T, kVec, true, 2>(sA, sB, p, A, B, ldb, rows_left, cols_left, k_left);
  } else if (edge_n) {
    if (edge_m) {
      copy_tile<T, kVec, true, 1>(sA, sB, p, A, B, ldb, rows_left, cols_left, k_left);
    } else {
      copy_tile<T, kVec, false, 1>(sA, sB, p, A, B, ldb, rows_left, cols_left, k_left);
    }
  } else if (edge_m) {
    copy_tile<T, kVec, true, 0>(sA, sB, p, A, B, ldb, rows_left, cols_left, k_left);
  } else {
    copy_tile<T, kVec, false, 0>(sA, sB, p, A, B, ldb, rows_left, cols_left, k_left);
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

// Writes kVec consecutive results: dst = alpha * v + beta * dst; dst is not read when beta == 0.
template <int kVec>
__device__ __forceinline__ void store_c(float* dst, const float* v, float alpha, float beta) {
  if constexpr (kVec == 4) {
    float4 out = make_float4(alpha * v[0], alpha * v[1], alpha * v[2], alpha * v[3]);
    if (beta != 0.0f) {
      const float4 old = *reinterpret_cast<const float4*>(dst);
      out.x += beta * old.x;
      out.y += beta * old.y;
      out.z += beta * old.z;
      out.w += beta * old.w;
    }
    *reinterpret_cast<float4*>(dst) = out;
  } else if constexpr (kVec == 2) {
    float2 out = make_float2(alpha * v[0], alpha * v[1]);
    if (beta != 0.0f) {
      const float2 old = *reinterpret_cast<const float2*>(dst);
      out.x += beta * old.x;
      out.y += beta * old.y;
    }
    *reinterpret_cast<float2*>(dst) = out;
  } else {
    *dst = beta != 0.0f ? alpha * v[0] + beta * *dst : alpha * v[0];
  }
}

// The first row of C a block computes. Split-K only: a block of the bottom row that would reach
// past M (M >= BM) moves up to end at row M, so it copies A like an interior block, without a
// check per copy. It computes again rows the block above it has, with the same k in the same
// order, so both write the same bits there: a slice is raw sums (alpha 1, beta 0, C never read),
// and the workspace stays deterministic. Checked copies cost the 64 x 64 split kernel 13-16 % at
// 90 x 192 x 852061 against 128 x 192, where no block checks (README.md, "Deep slices on a small
// C"). Without split-K the kernel stays chapter 06's, instruction for instruction.
template <class T, bool kSplit>
__device__ __forceinline__ int first_row(int m) {
  const int row = blockIdx.y * T::kBlockM;
  return kSplit && SGEMM_SPLIT_EDGE_UP && row + T::kBlockM > m && m >= T::kBlockM ? m - T::kBlockM
                                                                                  : row;
}

// The epilogue of the one-block-per-SM tile (128 x 256) when N is odd, B padded or not, and K is
// not split (a split kernel writes slices; with B padded they have its rows): C's rows are not
// 8-byte aligned (kVecC = 1). A lane's four columns j = 0..3 would be four 4-byte
// stores, each instruction of the warp touching 16 sectors (eight rows, 64 bytes apart in each)
// to write 128 bytes: four times the L2 write requests of the float4 epilogue, while no other
// block on the SM has work to hide them. So each warp stages a group of its rows in shared
// memory, free once every warp has read the last stage, and writes them back a row at a time,
// 32 consecutive floats per store instruction. Rows of kWarpN + 4 floats: a quarter-warp's
// float4 writes (two rows, 64 bytes each) then fall on all 32 banks. The tiles of 4-8 blocks
// per SM keep the direct stores: there the other blocks hide them, and staging measured at most
// 3 % faster on short K and up to 5 % slower on long K (the compiler allocates the main loop's
// registers differently; README.md, "Rows of odd length").
template <class T>
__device__ __forceinline__ void store_c_staged(int m, int n, float alpha, float beta,
                                               float* __restrict__ C, float* smem,
                                               const float (&acc)[T::kThreadM][T::kThreadN]) {
  constexpr int kRows = T::kLanesM * 4;  // a warp's rows of one group g of its accumulators
  constexpr int kStride = T::kWarpN + 4;
  static_assert(T::kWarpN % 32 == 0, "a staged row is written back 32 floats at a time");
  static_assert(
      T::kThreads / 32 * kRows * kStride * static_cast<int>(sizeof(float)) <= T::kSmemBytes,
      "every warp's staged rows fit in the pipeline's shared memory");
  // Recomputed from the thread's indices rather than kept live through the main loop.
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int lane_m = (lane & 1) | ((lane >> (1 + T::kLanesNLog2)) << 1);
  const int lane_n = (lane >> 1) & (T::kLanesN - 1);
  copy_wait<0>();
  __syncthreads();  // every warp has read the last stage
  float* const stage = smem + warp * kRows * kStride;
  const int warp_row = blockIdx.y * T::kBlockM + (warp / T::kWarpsN) * T::kWarpM;
  const int warp_col = blockIdx.x * T::kBlockN + (warp % T::kWarpsN) * T::kWarpN;
#pragma unroll
  for (int g = 0; g < T::kThreadM / 4; ++g) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
      for (int h = 0; h < T::kThreadN / 4; ++h) {
        const float* v = &acc[4 * g + i][4 * h];
        *reinterpret_cast<float4*>(stage + (lane_m * 4 + i) * kStride + h * T::kLanesN * 4 +
                                   lane_n * 4) = make_float4(v[0], v[1], v[2], v[3]);
      }
    }
    __syncwarp();
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int row = warp_row + g * kRows + r;
      if (row >= m) break;
#pragma unroll
      for (int x = 0; x < T::kWarpN / 32; ++x) {
        const int col = warp_col + 32 * x + lane;
        if (col < n) {
          store_c<1>(C + static_cast<int64_t>(row) * n + col, stage + r * kStride + 32 * x + lane,
                     alpha, beta);
        }
      }
    }
    __syncwarp();  // the next group overwrites the rows just read
  }
}

// Chapter 06's kernel, over one K slice when kSplit. Slice z = blockIdx.z covers k in
// [z * k_slice, min(k, (z + 1) * k_slice)) and writes C + z * c_slice_stride: the launcher points
// C at the workspace and passes alpha = 1, beta = 0, so each slice stores its raw partial tile.
// A keeps its full leading dimension k. The two kernels below differ only in how the compiler
// is told to allocate registers.
// kVec: floats per access of B rows (4 when N % 4 == 0, 2 when N is even, else 1); kVecC: the
// same for C, which differs only when B is a padded copy without split-K (kVec 4, kVecC 1): then
// B's rows are ldb floats apart, otherwise ldb is not read and B's rows are N floats apart as in
// chapter 06. (With split-K and B padded, the launcher runs <T, 4, 4> on the padded problem.)
template <class T, int kVec, int kVecC, bool kSplit>
__device__ __forceinline__ void gemm_tile(int m, int n, int k, int k_slice, float alpha,
                                          const float* __restrict__ A, const float* __restrict__ B,
                                          int ldb_padded, float beta, float* __restrict__ C,
                                          int64_t c_slice_stride) {
  extern __shared__ float4 smem_raw[];  // float4: 16-byte aligned for LDS.128 and cp.async
  float* const smem = reinterpret_cast<float*>(smem_raw);
  constexpr int kSizeA = T::kBlockK * T::kStrideA;
  using CB = typename T::template CopyB<kVec>;
  const int ldb = kVec == kVecC ? n : ldb_padded;

  // The slice, never empty: the launcher makes every slice start below k. Without split-K the
  // kernel is chapter 06's, instruction for instruction: A, B and K stay kernel parameters
  // (constant bank, no registers; measured: moving the slice offsets into every launch cost
  // the 128 x 256 tile 4 % at 4096^3).
  const int k_begin = kSplit ? blockIdx.z * k_slice : 0;
  const int k_len = kSplit ? min(k_slice, k - k_begin) : k;

  const int tid = threadIdx.x;
  const int block_row = first_row<T, kSplit>(m);  // < 65535 * kBlockM: the launcher's slabs
  const int block_col = blockIdx.x * T::kBlockN;

  // Which part of C this thread computes (chapter 05's interleaved lanes).
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int lane_m = (lane & 1) | ((lane >> (1 + T::kLanesNLog2)) << 1);
  const int lane_n = (lane >> 1) & (T::kLanesN - 1);
  const int a_off = (warp / T::kWarpsN) * T::kWarpM + lane_m * 4;  // sA column of rA[0]
  const int b_off = (warp % T::kWarpsN) * T::kWarpN + lane_n * 4;  // sB column of rB[0]

  // Prologue 1: the copy plan. A 16-byte chunk of B outside the matrix is resolved once
  // (zero-filled, read from column 0); narrower chunks outside it only exist in the last column
  // of blocks (edge_n), rows of A outside it only in the bottom row (edge_m), and those blocks
  // copy with checks (copy_stage).
  CopyPlan plan;
  const int rows_left = m - block_row;
  const int cols_left = n - block_col;
  const bool edge_m = rows_left < T::kBlockM;
  const bool edge_n = cols_left < T::kBlockN;
  {
    plan.a_row = tid / 8;
    plan.a_k = tid % 8;
    plan.a_pass = static_cast<int64_t>(T::kRowsPerPassA) * k;
    plan.a = A + static_cast<int64_t>(block_row + plan.a_row) * k + k_begin + plan.a_k;
    plan.a_dst = plan.a_k * T::kStrideA + plan.a_row;
    plan.b_row = tid / CB::kThreadsPerRow;
    plan.b_col = (tid % CB::kThreadsPerRow) * kVec;
    plan.b = B + static_cast<int64_t>(k_begin + plan.b_row) * ldb;
    plan.b_ok = block_col + plan.b_col < n;
    plan.b_src = plan.b_ok ? block_col + plan.b_col : 0;
  }

  const int num_tiles = ceil_div(k_len, T::kBlockK);

  // Prologue 2: start the first kStages - 1 tiles, one commit group each (empty past the end).
#pragma unroll
  for (int s = 0; s < T::kStages - 1; ++s) {
    if (s < num_tiles) {
      float* sA = smem + s * T::kStageFloats;
      copy_stage<T, kVec>(sA, sA + kSizeA, plan, A, B, ldb, rows_left, cols_left,
                          k_len - s * T::kBlockK, s == num_tiles - 1, edge_m, edge_n);
      plan.a += T::kBlockK;
      plan.b += static_cast<int64_t>(T::kBlockK) * ldb;
    }
    copy_commit();
  }

  float acc[T::kThreadM][T::kThreadN] = {};
  float rA[2][T::kThreadM];
  float rB[2][T::kThreadN];

  copy_wait<T::kStages - 2>();
  __syncthreads();
  load_fragments<T>(rA[0], rB[0], smem, smem + kSizeA, a_off, b_off, 0);

  // Main loop: compute tile t while tiles t+1 .. t+kStages-1 are in flight (chapter 06).
  int read_stage = 0;
  int write_stage = T::kStages - 1;
  for (int t = 0; t < num_tiles; ++t) {
    const int next = t + T::kStages - 1;
    if (next < num_tiles) {
      float* sA = smem + write_stage * T::kStageFloats;
      copy_stage<T, kVec>(sA, sA + kSizeA, plan, A, B, ldb, rows_left, cols_left,
                          k_len - next * T::kBlockK, next == num_tiles - 1, edge_m, edge_n);
      plan.a += T::kBlockK;
      plan.b += static_cast<int64_t>(T::kBlockK) * ldb;
    }
    copy_commit();

    const float* sA = smem + read_stage * T::kStageFloats;
#pragma unroll
    for (int kk = 0; kk < T::kBlockK; ++kk) {
      if (kk < T::kBlockK - 1) {
        load_fragments<T>(rA[(kk + 1) % 2], rB[(kk + 1) % 2], sA, sA + kSizeA, a_off, b_off,
                          kk + 1);
      } else if (t + 1 < num_tiles) {
        copy_wait<T::kStages - 2>();
        __syncthreads();
        read_stage = read_stage + 1 == T::kStages ? 0 : read_stage + 1;
        write_stage = write_stage + 1 == T::kStages ? 0 : write_stage + 1;
        const float* sA_next = smem + read_stage * T::kStageFloats;
        load_fragments<T>(rA[0], rB[0], sA_next, sA_next + kSizeA, a_off, b_off, 0);
      }
      outer_product<T>(acc, rA[kk % 2], rB[kk % 2]);
    }
  }

  // Epilogue: C = alpha * acc + beta * C in chunks of kVecC columns (a chunk is wholly inside or
  // outside the matrix, since N % kVecC == 0), or staged (store_c_staged, above). With
  // beta == 0, C is never read.
  if constexpr (kVecC == 1 && T::kMinBlocksPerSm == 1 && !kSplit &&
                (SGEMM_STAGED_C == 1 || (SGEMM_STAGED_C == 2 && kVec == 4))) {
    store_c_staged<T>(m, n, alpha, beta, C, smem, acc);
  } else {
#pragma unroll
    for (int g = 0; g < T::kThreadM / 4; ++g) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int row = block_row + a_off + g * T::kLanesM * 4 + i;
        if (row >= m) continue;
        float* c_row =
            C + (kSplit ? blockIdx.z * c_slice_stride : 0) + static_cast<int64_t>(row) * n;
#pragma unroll
        for (int h = 0; h < T::kThreadN / 4; ++h) {
          const int col = block_col + b_off + h * T::kLanesN * 4;
#pragma unroll
          for (int j = 0; j < 4; j += kVecC) {
            if (col + j < n) {
              store_c<kVecC>(c_row + col + j, &acc[4 * g + i][4 * h + j], alpha, beta);
            }
          }
        }
      }
    }
  }
}

// Without split-K: chapter 06's kernel, registers bounded by the occupancy the tile needs.
template <class T, int kVec, int kVecC>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocksPerSm)
    sgemm_any_shape(int m, int n, int k, int k_slice, float alpha, const float* __restrict__ A,
                    const float* __restrict__ B, int ldb, float beta, float* __restrict__ C,
                    int64_t c_slice_stride) {
  gemm_tile<T, kVec, kVecC, false>(m, n, k, k_slice, alpha, A, B, ldb, beta, C, c_slice_stride);
}

// With split-K: the same code plus the slice offsets, under an explicit register cap
// (T::kSplitRegisters). Under the bounds of the kernel above, ptxas scheduled the large tile's
// split kernel differently and it ran 6 % slower than chapter 06's on the same work (46.1 against
// 48.9 TFLOP/s at 4096^3, forced on one slice); capped at 240 registers it ran at 48.6
// (README.md, "Pitfalls").
template <class T, int kVec, int kVecC>
__global__ void __maxnreg__(T::kSplitRegisters)
    sgemm_any_shape_split(int m, int n, int k, int k_slice, float alpha,
                          const float* __restrict__ A, const float* __restrict__ B, int ldb,
                          float beta, float* __restrict__ C, int64_t c_slice_stride) {
  gemm_tile<T, kVec, kVecC, true>(m, n, k, k_slice, alpha, A, B, ldb, beta, C, c_slice_stride);
}

// The padded copy of B: row r of B (N floats, N odd) becomes row r of the workspace, ldb floats
// (N rounded up to 4) with zeros past column N, so every row starts 16-byte aligned. One thread
// per 4 floats of a row: its 4-byte reads are coalesced with its neighbours', its write is one
// float4. Rows run along y (grid-stride past 65535 rows); the kernel moves 8 bytes per element
// of B and is timed with the rest of the launcher (README.md, "Rows of odd length").
constexpr int kPadThreads = 128;

__global__ void __launch_bounds__(kPadThreads)
    pad_rows(int k, int n, int ldb, const float* __restrict__ B, float* __restrict__ padded) {
  const int col = 4 * (blockIdx.x * kPadThreads + threadIdx.x);
  if (col >= ldb) return;
  for (int64_t row = blockIdx.y; row < k; row += gridDim.y) {
    const float* src = B + row * n + col;
    float4 v;
    v.x = src[0];  // col < ldb and ldb - n <= 3 mean col < n: the first float always exists
    v.y = col + 1 < n ? src[1] : 0.0f;
    v.z = col + 2 < n ? src[2] : 0.0f;
    v.w = col + 3 < n ? src[3] : 0.0f;
    *reinterpret_cast<float4*>(padded + row * ldb + col) = v;
  }
}

// ---- Thin problems: M <= 16 or N <= 24 ------------------------------------------------------
// With M <= 16 every tile above multiplies mostly rows of zeros, and the problem is a stack of
// matrix-vector products: each element of B is used M times, M / 2 FLOP per byte of B, below the
// ridge point of the roofline (FP32 peak / DRAM bandwidth: 20 FLOP per byte on the H100), so the
// time to beat is the time to read B once. N <= 24 likewise: N / 2 FLOP per byte of A. The
// kernels below stream the large operand at the bandwidth instead of tiling C (README.md, "Thin
// problems"); K slices, as in split-K, give every SM some of it, and reduce_split_k_slices adds
// them in a fixed order.
constexpr int kThinThreads = 128;  // 4 warps
constexpr int kThinWarps = kThinThreads / 32;
constexpr int kThinCols = 128;      // few rows: columns of C per block (4 per lane)
constexpr int kThinChunk = 256;     // few rows: k of A's rows in shared memory at a time
constexpr int kThinRows = 32;       // few columns: rows of C per block (8 per warp)
constexpr int kFewColsChunk = 128;  // few columns: k per pipeline stage (a float4 of a row a lane)
// Few columns: chunks of A in shared memory. By Little's law an SM keeps its share of the DRAM
// bandwidth busy (3352 GB/s / 132 = 25 KB per microsecond) with 25 KB in flight per microsecond of
// latency; kFewColsStages - 1 chunks of 16 KB in flight per block, two blocks on an SM at least
// (R = 16), make 64 KB with three stages and 96 KB with four. Four ran 1 % faster than three and
// 2 % faster than two on the few-column shapes they were measured on (geometric means; README.md,
// "Thin problems"; variants few_cols_3stages and few_cols_2stages).
#ifndef SGEMM_FEW_COLS_STAGES
#define SGEMM_FEW_COLS_STAGES 4
#endif
constexpr int kFewColsStages = SGEMM_FEW_COLS_STAGES;
// 0: the few-columns plan may cut K into slices shorter than its pipeline (thin_plan()).
#ifndef SGEMM_FEW_COLS_MIN_SLICE
#define SGEMM_FEW_COLS_MIN_SLICE 1
#endif
static_assert(kFewColsStages >= 2, "a pipeline needs at least two stages");
// Few rows: the k one pass of the block covers, each warp two groups of four rows of B.
constexpr int kFewRowsPass = 2 * 4 * kThinWarps;
// 0: the few-rows plan may cut K into slices shorter than one pass (thin_plan()).
#ifndef SGEMM_FEW_ROWS_MIN_SLICE
#define SGEMM_FEW_ROWS_MIN_SLICE 1
#endif
// 0: the few-rows kernel loads A's chunks into registers and stores them (variant few_rows_sync_a).
#ifndef SGEMM_FEW_ROWS_ASYNC_A
#define SGEMM_FEW_ROWS_ASYNC_A 1
#endif
// Thin problems: M <= kThinMax (few rows), N <= kThinMax (few columns), and kThinMax + 1 to
// kFewColsMax columns (few columns, the kernel's wide layout). Wider, the wide layout lost to
// the tiles on the fitting shapes it was tried on (geometric means of 115 shapes with kernels of
// 24, 32 and 48 columns: 1.19x at 17-24 columns, 0.91x at 25-32, 0.72x at 33-48), so it stops
// at 24 (README.md, "Thin problems").
constexpr int kThinMax = 16;
constexpr int kFewColsMax = 24;
// Wide few columns: k per pipeline stage. Half the narrow chunk, so that a stage holds twice the
// rows of A in the same 16 KB (64 rows of 64 k) and four stages still leave room for two blocks
// on an SM.
constexpr int kWideChunk = 64;
// Wide few columns: lanes of a warp that share a row's k (4 k each), and rows a lane owns.
constexpr int kWideLanesK = 8;
constexpr int kWideRowsPerLane = 4;

// The few-columns kernel's shape, by its column count: rows of C per block, k per stage, how the
// 32 lanes of a warp share a chunk (kLanesK along k, 4 k each; 32 / kLanesK along rows) and rows
// per lane. Up to kThinMax columns a lane holds 8 rows x kCols sums and the warp's 32 lanes split
// the chunk's 128 k. Wider, 8 rows x 24 sums would not fit beside the rest in 255 registers, so 8
// lanes share a row's k and 4 groups of lanes take different rows, 4 rows a lane (96 sums); a
// block of four warps then holds 64 rows.
__host__ __device__ constexpr bool few_cols_wide(int cols) { return cols > kThinMax; }
__host__ __device__ constexpr int few_cols_chunk(int cols) {
  return few_cols_wide(cols) ? kWideChunk : kFewColsChunk;
}
__host__ __device__ constexpr int few_cols_lanes_k(int cols) {
  return few_cols_wide(cols) ? kWideLanesK : 32;
}
__host__ __device__ constexpr int few_cols_rows_per_lane(int cols) {
  return few_cols_wide(cols) ? kWideRowsPerLane : kThinRows / kThinWarps;
}
__host__ __device__ constexpr int few_cols_rows(int cols) {
  return kThinWarps * (32 / few_cols_lanes_k(cols)) * few_cols_rows_per_lane(cols);
}
// sB[j][k] rows of kChunk + 4 floats: float4-aligned, and the 4-byte copies of consecutive
// elements (k and column j both moving) land in different banks.
__host__ __device__ constexpr int few_cols_stage_floats(int cols) {
  return few_cols_rows(cols) * few_cols_chunk(cols) + cols * (few_cols_chunk(cols) + 4);
}
constexpr int few_cols_smem_bytes(int cols) {
  return kFewColsStages * few_cols_stage_floats(cols) * static_cast<int>(sizeof(float));
}
static_assert(few_cols_rows(kThinMax) == kThinRows, "the narrow kernel keeps 32 rows a block");
// The few-columns kernels the launcher holds: N rounded up to the next of these.
constexpr int kFewColsKernels = 4;
constexpr int kFewColsWidths[kFewColsKernels] = {4, 8, 16, kFewColsMax};
constexpr int few_cols_index(int n) {
  int i = 0;
  while (i + 1 < kFewColsKernels && kFewColsWidths[i] < n) ++i;
  return i;
}

// Few rows (m <= kRows): block (x, z) computes columns [128 x, 128 x + 128) of C over K slice z.
// Lane l of every warp owns four columns (4l .. 4l + 3 with float4 loads when N % 4 == 0, else
// l, l + 32, l + 64, l + 96, each coalesced with its neighbours); warp w takes the groups of four
// consecutive k that start at 4w, 4w + 16, ... of each chunk, eight rows of B in flight per lane,
// and reads A's four k of each row as one float4 from shared memory, where all lanes read the
// same address (a broadcast). The warps' sums meet in shared memory, and warp 0 adds them in a
// fixed order. The launch bounds hold the registers to 64, 96 and 128 a thread (8, 5 and 4 blocks
// per SM): left alone, ptxas gave the 4-row kernel 72 (7 blocks), and 4 x 8192 x 28672 ran 8 %
// slower.
constexpr int few_rows_blocks_per_sm(int rows) { return rows <= 4 ? 8 : rows <= 8 ? 5 : 4; }

template <int kRows, bool kVec4>
__global__ void __launch_bounds__(kThinThreads, few_rows_blocks_per_sm(kRows))
    sgemm_few_rows(int m, int n, int k, int k_slice, float alpha, const float* __restrict__ A,
                   const float* __restrict__ B, float beta, float* __restrict__ C,
                   int64_t c_slice) {
  constexpr int kGroup = kFewRowsPass / 2;  // k from one group of a warp to its next
  __shared__ __align__(16) float sA[kRows][kThinChunk];
  __shared__ float sums[kThinWarps - 1][kRows][kThinCols];
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int col0 = blockIdx.x * kThinCols;
  const int k_begin = blockIdx.z * k_slice;
  const int k_end = k - k_begin < k_slice ? k : k_begin + k_slice;
  auto column = [&](int j) { return kVec4 ? col0 + 4 * lane + j : col0 + lane + 32 * j; };
  // Row kk of B's slice (zeros past the chunk), this lane's four columns.
  auto load_b = [&](int k0, int kk, int len, float(&v)[4]) {
    const float* b = B + static_cast<int64_t>(k0 + kk) * n;
    if constexpr (kVec4) {
      const float4 q = kk < len && column(0) < n ? *reinterpret_cast<const float4*>(b + column(0))
                                                 : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      v[0] = q.x;
      v[1] = q.y;
      v[2] = q.z;
      v[3] = q.w;
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) v[j] = kk < len && column(j) < n ? b[column(j)] : 0.0f;
    }
  };
  // This warp's rows of B for its groups at kk and kk + kGroup: 8 rows in flight per lane.
  float v[2][4][4];  // [group][k][column]
  auto load_groups = [&](int k0, int kk, int len) {
#pragma unroll
    for (int g = 0; g < 2; ++g) {
#pragma unroll
      for (int e = 0; e < 4; ++e) load_b(k0, kk + g * kGroup + e, len, v[g][e]);
    }
  };
  float acc[kRows][4] = {};
  for (int k0 = k_begin; k0 < k_end; k0 += kThinChunk) {
    const int len = k_end - k0 < kThinChunk ? k_end - k0 : kThinChunk;
    __syncthreads();  // the last chunk's reads of sA are done
    // A's chunk through cp.async (chapter 06): every copy in flight at once, one trip to memory
    // (a load and a store to shared memory each would wait for the load, eight trips a chunk).
    for (int i = threadIdx.x; i < kRows * kThinChunk; i += kThinThreads) {
      const int r = i / kThinChunk;
      const int kk = i % kThinChunk;
      const bool ok = r < m && kk < len;
      if (SGEMM_FEW_ROWS_ASYNC_A) {
        copy_async<1>(&sA[r][kk], ok ? A + static_cast<int64_t>(r) * k + k0 + kk : A, ok);
      } else {
        sA[r][kk] = ok ? A[static_cast<int64_t>(r) * k + k0 + kk] : 0.0f;
      }
    }
    copy_commit();
    // The first rows of B go out before the wait: their trip overlaps A's.
    load_groups(k0, 4 * warp, len);
    copy_wait<0>();
    __syncthreads();
    for (int kk = 4 * warp; kk < len; kk += 2 * kGroup) {
      if (kk > 4 * warp) load_groups(k0, kk, len);
#pragma unroll
      for (int g = 0; g < 2; ++g) {
        if (kk + g * kGroup >= len) break;
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          const float4 a = *reinterpret_cast<const float4*>(&sA[r][kk + g * kGroup]);
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            acc[r][j] = fmaf(a.x, v[g][0][j], acc[r][j]);
            acc[r][j] = fmaf(a.y, v[g][1][j], acc[r][j]);
            acc[r][j] = fmaf(a.z, v[g][2][j], acc[r][j]);
            acc[r][j] = fmaf(a.w, v[g][3][j], acc[r][j]);
          }
        }
      }
    }
  }
  // The four warps' sums, added in the order of the warps.
  if (warp > 0) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
#pragma unroll
      for (int j = 0; j < 4; ++j) sums[warp - 1][r][column(j) - col0] = acc[r][j];
    }
  }
  __syncthreads();
  if (warp > 0) return;
  float* const out = C + blockIdx.z * c_slice;
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    if (r >= m) break;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      float v = acc[r][j];
#pragma unroll
      for (int w = 0; w < kThinWarps - 1; ++w) v += sums[w][r][column(j) - col0];
      if (column(j) < n) {
        float* c = out + static_cast<int64_t>(r) * n + column(j);
        *c = beta != 0.0f ? alpha * v + beta * *c : alpha * v;
      }
    }
  }
}

// One step of a warp's butterfly reduce-scatter (sgemm_few_cols' epilogue): the lanes with bit
// kOffset set keep the upper kHalf of v[0 .. 2 kHalf), the others the lower, and each adds the
// half its partner kOffset lanes away kept: afterwards v[0 .. kHalf) holds pair sums.
template <int kOffset, int kHalf, int kValues>
__device__ __forceinline__ void halve_sums(float (&v)[kValues], int lane) {
  const bool upper = lane & kOffset;
#pragma unroll
  for (int i = 0; i < kHalf; ++i) {
    const float sent = __shfl_xor_sync(0xffffffffu, upper ? v[i] : v[i + kHalf], kOffset);
    v[i] = (upper ? v[i + kHalf] : v[i]) + sent;
  }
}

// Adds the values of the kLanes lanes that share them, by halves: halve_sums at offsets
// kLanes / 2, ..., 1 (lanes that differ only in the low bits of their index).
template <int kOffset, int kHalf, int kValues>
__device__ __forceinline__ void reduce_scatter(float (&v)[kValues], int lane) {
  halve_sums<kOffset, kHalf>(v, lane);
  if constexpr (kOffset > 1) reduce_scatter<kOffset / 2, kHalf / 2>(v, lane);
}

// Few columns (n <= kCols): block (x, z) computes rows [R x, R x + R) of C over K slice z, R =
// few_cols_rows(kCols). A, the operand to stream, goes through chapter 06's cp.async pipeline:
// the slice in chunks (16 KB of A: 32 rows of 128 k, or 64 rows of 64 k when wide),
// kFewColsStages chunks in shared memory, so the bytes in flight are set by the pipeline, not by
// the registers a lane can hold (README.md, "Thin problems"). B's chunk (rows of n floats,
// consecutive in memory) comes with it, transposed into sB[j][k] so that a lane reads four
// consecutive k of column j as one float4. Lane l of a warp takes k = 4 (l % kLanesK) .. + 3 of
// every kLanesK * 4 k of the chunk, for kRowsPerLane rows of the warp's, and the kLanesK lanes'
// sums of each element meet by shuffles, always in the same order.
template <int kCols, bool kVec4>
__global__ void __launch_bounds__(kThinThreads)
    sgemm_few_cols(int m, int n, int k, int k_slice, float alpha, const float* __restrict__ A,
                   const float* __restrict__ B, float beta, float* __restrict__ C,
                   int64_t c_slice) {
  constexpr int kRows = few_cols_rows(kCols);
  constexpr int kChunk = few_cols_chunk(kCols);
  constexpr int kStrideB = kChunk + 4;
  constexpr int kLanesK = few_cols_lanes_k(kCols);
  constexpr int kRowsPerLane = few_cols_rows_per_lane(kCols);
  constexpr int kRowsPerWarp = kRows / kThinWarps;
  constexpr int kPasses = kChunk / (4 * kLanesK);  // float4s of a row a lane reads per chunk
  constexpr int kStageA = kRows * kChunk;
  constexpr int kStageFloats = few_cols_stage_floats(kCols);
  static_assert(kPasses * 4 * kLanesK == kChunk && kRowsPerWarp * kLanesK == 32 * kRowsPerLane,
                "the lanes cover a chunk's k and a warp's rows");
  extern __shared__ float4 smem_raw[];  // float4: 16-byte aligned for LDS.128 and cp.async
  float* const smem = reinterpret_cast<float*>(smem_raw);
  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int row0 = blockIdx.x * kRows;
  const int k_begin = blockIdx.z * k_slice;
  const int k_len = min(k_slice, k - k_begin);  // a multiple of 4 when kVec4 (k and k_slice are)
  const int chunks = ceil_div(k_len, kChunk);
  A += k_begin;
  B += static_cast<int64_t>(k_begin) * n;

  // Columns n .. kCols - 1 of sB are never copied: zeros, once, so that their sums (never
  // stored) stay finite. Nothing else in shared memory is written before the first barrier.
  for (int i = tid; i < kFewColsStages * (kCols - n) * kStrideB; i += kThinThreads) {
    const int stage = i / ((kCols - n) * kStrideB);
    const int rest = i % ((kCols - n) * kStrideB);
    smem[stage * kStageFloats + kStageA + n * kStrideB + rest] = 0.0f;
  }
  // The copy plan (as the tile kernel's CopyPlan): what a thread copies of a chunk is the same
  // from chunk to chunk, so its first addresses are computed once and each copy steps from them
  // by a constant. Computed afresh at every copy (the row clamped, a 64-bit multiply, B's row and
  // column stepped), an address took 5-10 instructions for A and about 20 for B in the SASS: at
  // 53993 x 24 x 5333 the kernel issued 444 M instructions for 216 M of FMA (README.md, "The
  // few-columns kernel's copies").
  //
  // A with float4s: kChunk / 4 of them a row; thread t takes float4 t % kQuads of rows t / kQuads,
  // + kRowStepA, ... (a warp copies 512 consecutive bytes: a row of 128 k, or two of 64 k).
  // A with floats (K % 4 != 0: rows start anywhere): warp w takes rows w, w + 4, ..., its 32
  // lanes 32 consecutive k of a row at a time (128 bytes an instruction), kChunk / 32 times.
  constexpr int kVecA = kVec4 ? 4 : 1;
  constexpr int kQuads = kChunk / 4;
  constexpr int kRowStepA = kVec4 ? kThinThreads / kQuads : kThinWarps;
  constexpr int kCopiesPerRowA = kVec4 ? 1 : kChunk / 32;
  const int a_row = kVec4 ? tid / kQuads : warp;
  const int a_k = kVec4 ? 4 * (tid % kQuads) : lane;
  const float* const a_first = A + static_cast<int64_t>(min(row0 + a_row, m - 1)) * k + a_k;
  const int64_t a_step = static_cast<int64_t>(kRowStepA) * k;
  // B: its rows of n floats follow one another, so a chunk is kChunk * n consecutive floats.
  // Thread t < P n (P = 128 / n rows a pass) copies column t % n of the chunk's rows t / n,
  // + P, ..., into sB[column][k] (transposed; a warp reads 128 consecutive bytes); the other
  // threads copy nothing of B. At most kCopiesB a chunk, as n <= kCols.
  const int b_pass = kThinThreads / n;
  const int b_k0 = tid < b_pass * n ? tid / n : kChunk;
  const int b_dst = (tid % n) * kStrideB + b_k0;
  const int b_step = b_pass * n;
  constexpr int kCopiesB = ceil_div(kChunk, kThinThreads / kCols);

  // Copies chunk c of the slice into stage s. kChecked (the slice's last chunk when shorter than
  // kChunk, and every chunk of a block whose rows reach past M): positions past the slice and
  // rows past M are zero-filled (src-size 0), read from the matrix's first element. Every other
  // copy tests nothing.
  auto issue = [&](int c, int s, auto checked) {
    constexpr bool kChecked = decltype(checked)::value;
    float* const sA = smem + s * kStageFloats;
    float* const sB = sA + kStageA;
    const int kc = c * kChunk;
    // One running address each for A and B. The empty asm hides where the address came from:
    // left to itself, the compiler rebuilds every copy's address from the kernel parameter (a
    // 64-bit multiply-add and more per copy) instead of stepping one register.
    const float* a_src = a_first + kc;
    asm("" : "+l"(a_src));
#pragma unroll
    for (int i = 0; i < kRows / kRowStepA; ++i) {
      const int r = a_row + kRowStepA * i;
#pragma unroll
      for (int j = 0; j < kCopiesPerRowA; ++j) {
        float* const dst = sA + r * kChunk + a_k + 32 * j;
        if constexpr (kChecked) {
          // A float4 is wholly in or out: k_len is a multiple of 4 when kVec4.
          const int kk = kc + a_k + 32 * j;
          const bool ok = row0 + r < m && kk < k_len;
          copy_async<kVecA>(dst, ok ? A + static_cast<int64_t>(row0 + r) * k + kk : A, ok);
        } else {
          copy_async<kVecA>(dst, a_src + 32 * j, true);
        }
      }
      a_src += a_step;
    }
    const float* b_src = B + static_cast<int64_t>(kc) * n + tid;
    asm("" : "+l"(b_src));
    float* b_to = sB + b_dst;
    int kk = b_k0;
#pragma unroll
    for (int i = 0; i < kCopiesB; ++i) {
      const bool ok = !kChecked || kc + kk < k_len;
      if (kk < kChunk) copy_async<1>(b_to, ok ? b_src : B, ok);
      b_src += b_step;
      b_to += b_pass;
      kk += b_pass;
    }
  };
  const bool edge = row0 + kRows > m;
  const bool last_partial = k_len % kChunk != 0;
  auto issue_chunk = [&](int c, int s) {
    if (edge || (last_partial && c == chunks - 1)) {
      issue(c, s, std::true_type{});
    } else {
      issue(c, s, std::false_type{});
    }
  };

  // Chapter 06's pipeline: every iteration commits exactly one group (empty past the last
  // chunk), so "chunk c has landed" is "at most kFewColsStages - 2 groups pending".
#pragma unroll
  for (int s = 0; s < kFewColsStages - 1; ++s) {
    if (s < chunks) issue_chunk(s, s);
    copy_commit();
  }
  // This lane's place: k group lane_k of the chunk, rows first_row .. + kRowsPerLane - 1 of
  // the block.
  const int lane_k = kLanesK == 32 ? lane : lane % kLanesK;
  const int first_row = warp * kRowsPerWarp + (kLanesK == 32 ? 0 : lane / kLanesK * kRowsPerLane);
  float acc[kRowsPerLane][kCols] = {};
  for (int c = 0; c < chunks; ++c) {
    copy_wait<kFewColsStages - 2>();
    // Chunk c has landed for every thread, and every warp is done with chunk c - 1, whose stage
    // the copies below refill.
    __syncthreads();
    const int next = c + kFewColsStages - 1;
    if (next < chunks) issue_chunk(next, next % kFewColsStages);
    copy_commit();
    const float* const sA = smem + (c % kFewColsStages) * kStageFloats;
    const float* const sB = sA + kStageA;
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
      const int k4 = 4 * (lane_k + kLanesK * pass);
      float x[kRowsPerLane][4];
#pragma unroll
      for (int r = 0; r < kRowsPerLane; ++r) {
        const float4 v = *reinterpret_cast<const float4*>(sA + (first_row + r) * kChunk + k4);
        x[r][0] = v.x;
        x[r][1] = v.y;
        x[r][2] = v.z;
        x[r][3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < kCols; ++j) {
        const float4 b = *reinterpret_cast<const float4*>(sB + j * kStrideB + k4);
#pragma unroll
        for (int r = 0; r < kRowsPerLane; ++r) {
          acc[r][j] = fmaf(x[r][0], b.x, acc[r][j]);
          acc[r][j] = fmaf(x[r][1], b.y, acc[r][j]);
          acc[r][j] = fmaf(x[r][2], b.z, acc[r][j]);
          acc[r][j] = fmaf(x[r][3], b.w, acc[r][j]);
        }
      }
    }
  }
  // The kLanesK lanes' sums, by halves (a butterfly reduce-scatter): at each step a lane keeps
  // half of its values, sends the other half to the lane `offset` away and adds what that lane
  // sends back, so the kRowsPerLane x kCols sums take (kLanesK - 1) / kLanesK of a shuffle each
  // instead of log2(kLanesK). Lane l ends with values lane_k * kPerLane .. + kPerLane - 1: row
  // lane_k / kLanesPerRow of its rows, kPerLane of its columns. Always in the same order: C is
  // the same from run to run.
  constexpr int kValues = kRowsPerLane * kCols;
  constexpr int kPerLane = kValues / kLanesK;
  static_assert(kValues % kLanesK == 0 && kCols % kPerLane == 0,
                "each lane ends with whole columns of one row");
  float v[kValues];
#pragma unroll
  for (int r = 0; r < kRowsPerLane; ++r) {
#pragma unroll
    for (int j = 0; j < kCols; ++j) v[r * kCols + j] = acc[r][j];
  }
  reduce_scatter<kLanesK / 2, kValues / 2>(v, lane);
  constexpr int kLanesPerRow = kCols / kPerLane;
  const int row = row0 + first_row + lane_k / kLanesPerRow;
  if (row < m) {
    float* const out = C + blockIdx.z * c_slice + static_cast<int64_t>(row) * n;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
      const int col = (lane_k % kLanesPerRow) * kPerLane + i;
      if (col < n) out[col] = beta != 0.0f ? alpha * v[i] + beta * out[col] : alpha * v[i];
    }
  }
}

// Split-K's second pass, C = alpha * (the sum of the slices) + beta * C, in a fixed order (no
// atomics, so C is bit-identical from run to run): sgemm::reduce_split_k_slices in
// common/split_k.h, which the tensor-core chapters launch too (README.md, "Split-K").

// ---- The launcher's model ---------------------------------------------------------------------
// A block runs on one SM from start to end, so a problem cut into `tiles` blocks takes as long
// as the busiest SM: ceil(tiles / SMs) blocks' worth of work, while the other SMs idle in the
// last wave (wave quantization). For each tile and each number of K slices the model predicts
//   time = ceil(tiles / SMs) * work per block / SM rate  [+ split-K's reduction]
// and the launcher takes the fastest. Work per block: BM * BN * (K slice + kFillK) multiply-adds.
// SM rate: FP32 lanes * clock * the tile's share of the peak at its full occupancy, times the
// tile's measured rate with fewer resident blocks when the busiest SM holds fewer than fit (fewer
// warps hide less of the barrier and copy latency), and its column share when the grid is one
// column of tiles (every block streams its own rows of A). When the busiest SM's blocks make more
// than one round, the last, partial round runs at its own occupancy (SGEMM_PARTIAL_ROUND measures
// the two other choices). Split-K adds a second launch and the reduction's bytes, from L2 while the
// slices fit there. N odd: 4-byte copies of B run at the tile's odd_rows_share of the rate, unless
// B is first copied into padded rows, which costs a launch and 8 bytes of DRAM traffic per element
// of B.
//
// Every measured number below is scripts/calibrate_07.py's, copied from
// docs/results/nvidia-h100-80gb-hbm3/calibration_07.md (a host test holds the two together): it
// forces each tile onto shapes it builds from the tile's size and the SM count, none of them a
// suite's, and times split-K's reduction with tests/bench/split_k_bench.cu. README.md, "The
// model's constants", says how each is measured.

// The most blocks of any tile an SM holds (64 x 64: registers), the length of the rate table.
constexpr int kMaxBlocksPerSm = 8;

struct TileModel {
  int block_m, block_n, warps;
  // Share of the FP32 peak with every SM busy, i.e. how efficient the tile's compiled inner loop
  // is, not a property of the shape: the time per k of blocks that fill every slot twice.
  double peak_share;
  // The same for the split-K kernel, compiled apart (the same source with the slice offsets, but
  // the compiler schedules it differently): the same blocks in two slices, the reduction's
  // modelled time taken off.
  double split_peak_share;
  // One column of tiles (N <= block_n): each block streams its own rows of A from DRAM, which no
  // other block reads, where the share runs' blocks find most of A in L2. The rate of such a
  // grid over the share run's, with A's rows starting on 128-byte lines (K % 32 == 0) and not.
  double column_share, column_share_unaligned;
  // N odd: the rate with 4-byte copies of B over the rate at N even, the share run's blocks at
  // N - 1 against N (K = 8192, scripts/calibrate_07.py).
  double odd_rows_share;
};
constexpr int kNumTiles = 7;
constexpr TileModel kTileModels[kNumTiles] = {
    {LargeTile::kBlockM, LargeTile::kBlockN, LargeTile::kThreads / 32, 0.750, 0.746, 1.019, 1.014,
     0.897},
    {MediumTile::kBlockM, MediumTile::kBlockN, MediumTile::kThreads / 32, 0.724, 0.723, 1.012,
     1.005, 0.923},
    {SmallTile::kBlockM, SmallTile::kBlockN, SmallTile::kThreads / 32, 0.725, 0.722, 1.008, 1.004,
     0.963},
    {TallTile::kBlockM, TallTile::kBlockN, TallTile::kThreads / 32, 0.721, 0.712, 0.992, 0.975,
     0.925},
    {TinyTile::kBlockM, TinyTile::kBlockN, TinyTile::kThreads / 32, 0.702, 0.702, 0.966, 0.799,
     0.934},
    {NarrowTile::kBlockM, NarrowTile::kBlockN, NarrowTile::kThreads / 32, 0.581, 0.556, 0.747,
     0.731, 0.990},
    {WideTile::kBlockM, WideTile::kBlockN, WideTile::kThreads / 32, 0.681, 0.673, 1.019, 1.014,
     0.883},
};
// Each tile's SM rate with 1, 2, ... blocks resident, over its rate with the full count (a row of
// kTileModels' order): measured for each count below the full one, none for a tile of one block
// per SM. Not a power of the count: a 64 x 64 block has two warps, and an odd number of blocks
// leaves one of the SM's four schedulers a warp short.
constexpr double kOccupancyRate[kNumTiles][kMaxBlocksPerSm - 1] = {
    {},
    {0.601},
    {0.823, 0.901, 0.981},
    {0.767, 0.855, 0.965},
    {0.434, 0.797, 0.714, 0.942, 0.820, 0.983, 0.877},
    {0.712, 0.784, 0.917, 0.992},
    {0.737, 0.821, 0.925, 0.973},
};
// A block spends time before its first FMA (the pipeline fills) and after its last (C is
// written): counted as this many extra k per block, the intercept of time against K.
constexpr int kFillK = 28;
// A second kernel in the stream costs this before it does any work.
constexpr double kLaunchSeconds = 2.1e-6;
// A streaming kernel (split-K's reduction, the padded copy of B) moves its bytes at this share of
// the data-sheet DRAM bandwidth, and at kL2Share while they still sit in L2.
constexpr double kDramShare = 0.90;
constexpr double kL2Share = 1.21;
// Another plan replaces chapter 06's only when predicted at least this much faster: the model's
// median error on the fitting suite.
constexpr double kKeepMargin = 0.024;
// The model tries every split count from 1 to sgemm::kMaxSplits: which count fills the last
// round best depends on the block count, so no shorter list of counts serves every shape.
// Slices are whole K tiles (kBlockK = 16 for every tile).
constexpr int kSliceAlign = 16;
// The workspace never exceeds this, so split-K never rivals the operands for device memory.
constexpr size_t kMaxWorkspaceBytes = size_t{256} << 20;
// A padded copy of B is made only up to this size (it is B's own size, plus 3 floats a row).
constexpr size_t kMaxPaddedBytes = size_t{1} << 30;

struct Device {
  int sms;
  double fma_per_s_per_sm;  // FP32 lanes * clock
  double dram_bytes_per_s;
  double l2_bytes;
  int blocks_per_sm[kNumTiles];   // occupancy of each tile's kernel (registers, shared memory)
  int few_rows_blocks_per_sm[3];  // the same for sgemm_few_rows<4, 8, 16>
  int few_cols_blocks_per_sm[kFewColsKernels];  // ... and sgemm_few_cols<kFewColsWidths[i]>
};

// The split kernel only where the launcher runs one: with B padded, split-K runs <T, 4>'s.
template <class T, int kVec, int kVecC = kVec>
void allow_shared_memory() {
  // Above 48 KB, dynamic shared memory must be allowed explicitly, once per kernel.
  CUDA_CHECK(cudaFuncSetAttribute(sgemm_any_shape<T, kVec, kVecC>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes));
  if constexpr (kVec == kVecC) {
    CUDA_CHECK(cudaFuncSetAttribute(sgemm_any_shape_split<T, kVec, kVecC>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes));
  }
}

template <class T>
int prepare_tile() {
  allow_shared_memory<T, 4>();
  allow_shared_memory<T, 2>();
  allow_shared_memory<TileFor<T, 1>, 1>();
  allow_shared_memory<T, 4, 1>();  // the padded copy of B
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, sgemm_any_shape<T, 4, 4>,
                                                           T::kThreads, T::kSmemBytes));
  return blocks > 0 ? blocks : 1;
}

// The few-columns kernels' pipeline may take more than the 48 KB of shared memory a kernel gets
// without asking. Returns the kernel's occupancy.
template <int kCols>
int prepare_few_cols() {
  CUDA_CHECK(cudaFuncSetAttribute(sgemm_few_cols<kCols, true>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  few_cols_smem_bytes(kCols)));
  CUDA_CHECK(cudaFuncSetAttribute(sgemm_few_cols<kCols, false>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  few_cols_smem_bytes(kCols)));
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks, sgemm_few_cols<kCols, true>, kThinThreads, few_cols_smem_bytes(kCols)));
  return std::max(blocks, 1);
}

// Read once, on the device the harness selected (the launcher is first called after that).
const Device& device() {
  static const Device d = [] {
    Device d{};
    int index = 0, major = 0, minor = 0, sm_khz = 0, mem_khz = 0, bus_bits = 0;
    CUDA_CHECK(cudaGetDevice(&index));
    CUDA_CHECK(cudaDeviceGetAttribute(&d.sms, cudaDevAttrMultiProcessorCount, index));
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, index));
    CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, index));
    CUDA_CHECK(cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, index));
    CUDA_CHECK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, index));
    CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, index));
    const int lanes = sgemm::fp32_lanes_per_sm(major, minor);
    d.fma_per_s_per_sm = (lanes > 0 ? lanes : 128) * sm_khz * 1e3;
    d.dram_bytes_per_s = sgemm::dram_bandwidth_bytes(mem_khz * 1e3, bus_bits);
    int l2 = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, index));
    d.l2_bytes = l2;
    d.blocks_per_sm[0] = prepare_tile<LargeTile>();
    d.blocks_per_sm[1] = prepare_tile<MediumTile>();
    d.blocks_per_sm[2] = prepare_tile<SmallTile>();
    d.blocks_per_sm[3] = prepare_tile<TallTile>();
    d.blocks_per_sm[4] = prepare_tile<TinyTile>();
    d.blocks_per_sm[5] = prepare_tile<NarrowTile>();
    d.blocks_per_sm[6] = prepare_tile<WideTile>();
    const void* few_rows[3] = {reinterpret_cast<const void*>(sgemm_few_rows<4, true>),
                               reinterpret_cast<const void*>(sgemm_few_rows<8, true>),
                               reinterpret_cast<const void*>(sgemm_few_rows<16, true>)};
    for (int side = 0; side < 3; ++side) {
      int& blocks = d.few_rows_blocks_per_sm[side];
      CUDA_CHECK(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, few_rows[side], kThinThreads, 0));
      blocks = std::max(blocks, 1);
    }
    d.few_cols_blocks_per_sm[0] = prepare_few_cols<kFewColsWidths[0]>();
    d.few_cols_blocks_per_sm[1] = prepare_few_cols<kFewColsWidths[1]>();
    d.few_cols_blocks_per_sm[2] = prepare_few_cols<kFewColsWidths[2]>();
    d.few_cols_blocks_per_sm[3] = prepare_few_cols<kFewColsWidths[3]>();
    return d;
  }();
  return d;
}

// How the launcher cuts one problem.
struct Plan {
  int tile = 0;      // index into kTileModels
  int splits = 1;    // K slices (1: no split-K)
  int k_slice = 0;   // k per slice, a multiple of kSliceAlign (the last slice may be shorter)
  bool pad = false;  // B first copied into rows of padded_ld(N) floats (N odd only)
  double seconds = 0;
  int thin = 0;  // 0: the tile above; 1: few rows (sgemm_few_rows); 2: few columns (sgemm_few_cols)
};

// Floats per row of the padded copy of B (and of split-K's slices with it): N rounded up to a
// float4.
int padded_ld(int n) { return (n + 3) / 4 * 4; }

// Floats per split-K slice, at most: M rows of padded_ld(N) (with the padded copy of B; the other
// plans' slices are sgemm::split_k_slice_floats, never larger).
int64_t slice_floats(const sgemm::Problem& p) { return static_cast<int64_t>(p.m) * padded_ld(p.n); }

size_t padded_bytes(const sgemm::Problem& p) {
  return static_cast<size_t>(p.k) * padded_ld(p.n) * sizeof(float);
}

// The workspace: the split-K slices first, then the padded copy of B (both whole float4s).
size_t workspace_for(const sgemm::Problem& p, int splits, bool pad) {
  return (splits > 1 ? static_cast<size_t>(splits) * slice_floats(p) * sizeof(float) : 0) +
         (pad ? padded_bytes(p) : 0);
}

// K cut into `wanted` slices of whole kSliceAlign k (in 64 bits: K may be close to INT_MAX), every
// slice starting below K: the k per slice.
int slice_for(const sgemm::Problem& p, int wanted) {
  const int64_t aligned = int64_t{ceil_div(ceil_div(p.k, wanted), kSliceAlign)} * kSliceAlign;
  return static_cast<int>(std::min<int64_t>(aligned, p.k));
}

// What K slices add to any plan: a second launch, and the reduction's bytes (every slice read,
// C written, and read when beta != 0) at its measured share of the DRAM bandwidth, higher while
// the slices still sit in L2. The slices' writes are the split kernel's epilogue, in kFillK.
double split_k_seconds(const sgemm::Problem& p, const Device& d, int splits) {
  const double elements = static_cast<double>(p.m) * p.n;
  const double bytes = 4.0 * elements * (splits + 1.0 + (p.beta != 0.0f ? 1.0 : 0.0));
  const bool in_l2 = 4.0 * elements * splits <= d.l2_bytes;
  return kLaunchSeconds + bytes / (d.dram_bytes_per_s * (in_l2 ? kL2Share : kDramShare));
}

// kOccupancyRate's entry for r of a tile's `full` blocks resident: 1 at the full count, and where
// nothing was measured (a GPU that holds more blocks than the H100).
double occupancy_rate(int tile, int r, int full) {
  const double rate = r < full && r < kMaxBlocksPerSm ? kOccupancyRate[tile][r - 1] : 0.0;
  return rate > 0.0 ? rate : 1.0;
}

double predict_seconds(const sgemm::Problem& p, const Device& d, int tile, int splits, int k_slice,
                       bool pad) {
  const TileModel& t = kTileModels[tile];
  const double blocks =
      static_cast<double>(ceil_div(p.m, t.block_m)) * ceil_div(p.n, t.block_n) * splits;
  const double per_sm = std::ceil(blocks / d.sms);  // blocks on the busiest SM
  const double full = d.blocks_per_sm[tile];
  const double share = splits > 1 ? t.split_peak_share : t.peak_share;
  const double rows = p.n % 2 == 1 && !pad ? t.odd_rows_share : 1.0;  // 4-byte copies of B
  const double column = ceil_div(p.n, t.block_n) > 1 ? 1.0
                        : p.k % 32 == 0              ? t.column_share
                                                     : t.column_share_unaligned;
  // The SM's rate with `resident` of the tile's blocks on it.
  const auto rate = [&](double resident) {
    return d.fma_per_s_per_sm * share * rows * column *
           occupancy_rate(tile, static_cast<int>(std::min(resident, full)), d.blocks_per_sm[tile]);
  };
  const double block = t.block_m * t.block_n * (static_cast<double>(k_slice) + kFillK);
  const double rest = std::fmod(per_sm, full);
  double seconds = per_sm * block / rate(per_sm);
  if (rest > 0 && per_sm > full &&
      (SGEMM_PARTIAL_ROUND == 1 || (SGEMM_PARTIAL_ROUND == 2 && per_sm <= 2 * full))) {
    // Rounds that start together: full ones, then the rest at its own occupancy.
    seconds = (per_sm - rest) * block / rate(full) + rest * block / rate(rest);
  }
  if (splits > 1) seconds += split_k_seconds(p, d, splits);
  if (pad) {
    // B read (N floats a row) and its padded copy written (padded_ld(N) floats a row).
    const double bytes = 4.0 * p.k * (static_cast<double>(p.n) + padded_ld(p.n));
    seconds += kLaunchSeconds + bytes / (d.dram_bytes_per_s * kDramShare);
  }
  return seconds;
}

// Thin problems (is_thin: M <= kThinMax or N <= kFewColsMax) are memory bound: the plan streams
// the larger of A and B once (few rows: B, K x N; few columns: A, M x K), and the model is chapter
// 07's wave model with bytes in place of multiply-adds: the blocks on the busiest SM stream their
// share of the operand at the SM's share of the DRAM bandwidth, so with `slots` blocks resident on
// the GPU
//   time = ceil(blocks / slots) * slots * (bytes / blocks) / DRAM bandwidth  [+ split-K's sums],
// which falls as K slices add blocks until they fill every slot, and the partial sums (written
// and read back, from L2 while they fit) grow with every slice. Nothing measured: the data sheet,
// the kernel's occupancy and the shape decide (README.md, "Thin problems").
constexpr int kThinMaxSplits = 1024;

// Thin: M <= kThinMax, or N <= kThinMax, or (SGEMM_WIDE_FEW_COLS) N <= kFewColsMax.
bool is_thin(const sgemm::Problem& p) {
  return p.m <= kThinMax || p.n <= (SGEMM_WIDE_FEW_COLS ? kFewColsMax : kThinMax);
}

// Which thin kernel streams a thin problem: 1 few rows (B), 2 few columns (A).
int thin_kind(const sgemm::Problem& p) { return p.m <= kThinMax && p.m <= p.n ? 1 : 2; }

// The thin kernel's occupancy and rows or columns of C per block, by its kind (1 few rows,
// 2 few columns) and thin side.
int thin_slots(const Device& d, int kind, int thin) {
  return d.sms * (kind == 1 ? d.few_rows_blocks_per_sm[thin <= 4   ? 0
                                                       : thin <= 8 ? 1
                                                                   : 2]
                            : d.few_cols_blocks_per_sm[few_cols_index(thin)]);
}

double thin_seconds(const sgemm::Problem& p, const Device& d, int kind, int splits) {
  const int thin = kind == 1 ? p.m : p.n;
  const double wide = kind == 1 ? p.n : p.m;
  const int per_block = kind == 1 ? kThinCols : few_cols_rows(p.n);
  const double blocks = static_cast<double>(ceil_div(kind == 1 ? p.n : p.m, per_block)) * splits;
  const double slots = thin_slots(d, kind, thin);
  const double bytes = 4.0 * wide * p.k;  // the streamed operand
  double seconds = std::ceil(blocks / slots) * slots * (bytes / blocks) / d.dram_bytes_per_s;
  if (splits > 1) seconds += split_k_seconds(p, d, splits);
  return seconds;
}

Plan thin_plan(const sgemm::Problem& p, const Device& d, size_t workspace_available) {
  Plan best;
  best.thin = thin_kind(p);
  best.seconds = -1;
  int last_splits = 0;
  for (int wanted = 1; wanted <= kThinMaxSplits;
       wanted = wanted < 8 ? wanted + 1 : wanted * 5 / 4) {
    const int k_slice = slice_for(p, wanted);  // whole float4s of A's rows per slice
    const int splits = ceil_div(p.k, k_slice);
    if (splits == last_splits) continue;
    last_splits = splits;
    // Few columns: a slice shorter than the pipeline (its stages' chunks) never fills it, and
    // each block pays the copies' latency before its first FMA; the slots model does not see it.
    if (SGEMM_FEW_COLS_MIN_SLICE && best.thin == 2 && splits > 1 &&
        k_slice < kFewColsStages * few_cols_chunk(p.n)) {
      break;
    }
    // Few rows: a slice shorter than one pass leaves rows of B unloaded, and each block's fixed
    // trips to memory (A's chunk, the first rows of B, the partial sums) outweigh its share of B.
    if (SGEMM_FEW_ROWS_MIN_SLICE && best.thin == 1 && splits > 1 && k_slice < kFewRowsPass) {
      break;
    }
    if (splits > 1 && (!SGEMM_SPLIT_K || workspace_for(p, splits, false) > kMaxWorkspaceBytes ||
                       workspace_for(p, splits, false) > workspace_available)) {
      break;
    }
    const double seconds = thin_seconds(p, d, best.thin, splits);
    if (best.seconds < 0 || seconds < best.seconds) {
      best.splits = splits;
      best.k_slice = k_slice;
      best.seconds = seconds;
    }
  }
  return best;
}

// The calibration build's plan (SGEMM_FORCED_PLAN): SGEMM_PLAN="tile,splits,pad" (wanted K
// slices, pad 0 or 1; tile kNumTiles: the thin kernel, on shapes is_thin takes), read
// once; main() refuses a malformed one before the first launch.
struct ForcedPlan {
  const char* text = nullptr;  // as given; null: unset, the model plans
  bool valid = false;
  int tile = 0, splits = 1, pad = 0;
};

const ForcedPlan& forced_plan() {
  static const ForcedPlan f = [] {
    ForcedPlan f;
    f.text = std::getenv("SGEMM_PLAN");
    char tail = 0;
    f.valid = f.text != nullptr &&
              std::sscanf(f.text, "%d,%d,%d%c", &f.tile, &f.splits, &f.pad, &tail) == 3 &&
              f.tile >= 0 && f.tile <= kNumTiles && f.splits >= 1 &&
              f.splits <= sgemm::kMaxSplits && (f.pad == 0 || f.pad == 1);
    return f;
  }();
  return f;
}

// The fastest (tile, splits, padded B or not) by the model; split-K and the padded copy only
// when the workspace can hold them.
Plan plan_for(const sgemm::Problem& p, size_t workspace_available) {
  const Device& d = device();
  if (SGEMM_FORCED_PLAN && forced_plan().valid) {
    const ForcedPlan& f = forced_plan();
    const int k_slice = slice_for(p, f.splits);
    const int splits = ceil_div(p.k, k_slice);
    if (f.tile < kNumTiles) {
      return Plan{f.tile, splits, k_slice, f.pad == 1,
                  predict_seconds(p, d, f.tile, splits, k_slice, f.pad == 1)};
    }
    if (is_thin(p)) {
      Plan thin;
      thin.thin = thin_kind(p);
      thin.splits = splits;
      thin.k_slice = k_slice;
      thin.seconds = thin_seconds(p, d, thin.thin, splits);
      return thin;
    }
  }
  if (SGEMM_THIN && is_thin(p)) return thin_plan(p, d, workspace_available);
  Plan best;
  best.seconds = -1;
  static_assert(SGEMM_TILE_COUNT >= 1 && SGEMM_TILE_COUNT <= kNumTiles, "1 to kNumTiles tiles");
  const bool can_pad = SGEMM_PADDED_B && p.n % 2 == 1 && padded_bytes(p) <= kMaxPaddedBytes;
  for (const bool pad : {false, true}) {
    if (pad && !can_pad) break;
    for (int tile = 0; tile < SGEMM_TILE_COUNT; ++tile) {
      int last_splits = 0;
      for (int wanted = 1; wanted <= sgemm::kMaxSplits; ++wanted) {
        const int k_slice = slice_for(p, wanted);
        const int splits = ceil_div(p.k, k_slice);
        if (splits == last_splits) continue;
        last_splits = splits;
        if ((splits > 1 && !SGEMM_SPLIT_K) ||
            workspace_for(p, splits, false) > kMaxWorkspaceBytes ||
            workspace_for(p, splits, pad) > workspace_available) {
          break;
        }
        const double seconds = predict_seconds(p, d, tile, splits, k_slice, pad);
        // Ties go to the earlier candidate: B as it is, the larger tile, the fewer slices.
        if (best.seconds < 0 || seconds < best.seconds) {
          best = Plan{tile, splits, k_slice, pad, seconds};
        }
      }
    }
  }
  // Chapter 06's plan stays unless another is predicted faster by more than the model's own
  // typical error (kKeepMargin): a smaller predicted gain is as likely a loss.
  const Plan base{0, 1, p.k, false, predict_seconds(p, d, 0, 1, p.k, false)};
  return best.seconds * (1.0 + kKeepMargin) > base.seconds ? base : best;
}

// ---- The launcher -----------------------------------------------------------------------------

template <class T, int kVec, int kVecC = kVec>
void launch_slices(const sgemm::Problem& p, const Plan& plan, const float* A, const float* B,
                   int ldb, float* out, float alpha, float beta, int64_t out_slice_stride,
                   cudaStream_t stream) {
  // kVecC != kVec (B padded) is one slice only: launch_tile gives split-K the padded problem.
  auto* kernel = &sgemm_any_shape<T, kVec, kVecC>;
  if constexpr (kVec == kVecC) {
    if (plan.splits > 1) kernel = &sgemm_any_shape_split<T, kVec, kVecC>;
  }
  sgemm::for_each_row_slab(p, T::kBlockM, [&](int64_t row0, int rows) {
    const dim3 grid(ceil_div(p.n, T::kBlockN), ceil_div(rows, T::kBlockM), plan.splits);
    kernel<<<grid, T::kThreads, T::kSmemBytes, stream>>>(rows, p.n, p.k, plan.k_slice, alpha,
                                                         A + row0 * p.k, B, ldb, beta,
                                                         out + row0 * p.n, out_slice_stride);
  });
}

template <class T>
void launch_tile(const sgemm::Problem& p, const Plan& plan, const float* A, const float* B,
                 const float* padded_b, float* out, float alpha, float beta,
                 int64_t out_slice_stride, cudaStream_t stream) {
  // cudaMalloc pointers are 256-byte aligned, so N decides the alignment of every row; the
  // padded copy's rows are padded_ld(N) floats, all 16-byte aligned.
  if (plan.pad && plan.splits > 1) {
    // Split-K's slices may have rows as long as the padded copy's: the product of A and the
    // padded B is then a problem with N % 4 == 0, run by its kernel (the padded columns are
    // zeros, which the reduction leaves out of C).
    sgemm::Problem padded = p;
    padded.n = padded_ld(p.n);
    launch_slices<T, 4>(padded, plan, A, padded_b, padded.n, out, alpha, beta, out_slice_stride,
                        stream);
  } else if (plan.pad) {
    launch_slices<T, 4, 1>(p, plan, A, padded_b, padded_ld(p.n), out, alpha, beta, out_slice_stride,
                           stream);
  } else if (p.n % 4 == 0) {
    launch_slices<T, 4>(p, plan, A, B, p.n, out, alpha, beta, out_slice_stride, stream);
  } else if (SGEMM_EIGHT_BYTE_ROWS && p.n % 2 == 0) {
    launch_slices<T, 2>(p, plan, A, B, p.n, out, alpha, beta, out_slice_stride, stream);
  } else {
    launch_slices<TileFor<T, 1>, 1>(p, plan, A, B, p.n, out, alpha, beta, out_slice_stride, stream);
  }
}

// The thin kernels, by the thin side rounded up (few rows: 4, 8 or 16; few columns: a width of
// kFewColsWidths), and by N % 4 (few rows: float4 rows of B) or K % 4 (few columns: float4 rows of
// A).
template <int kCols>
void launch_few_cols(const sgemm::Problem& p, const Plan& plan, const float* A, const float* B,
                     float* out, float alpha, float beta, int64_t stride, cudaStream_t stream) {
  const dim3 grid(ceil_div(p.m, few_cols_rows(kCols)), 1, plan.splits);
  auto* kernel = p.k % 4 == 0 ? sgemm_few_cols<kCols, true> : sgemm_few_cols<kCols, false>;
  kernel<<<grid, kThinThreads, few_cols_smem_bytes(kCols), stream>>>(
      p.m, p.n, p.k, plan.k_slice, alpha, A, B, beta, out, stride);
}

template <int kThin>
void launch_thin_of(const sgemm::Problem& p, const Plan& plan, const float* A, const float* B,
                    float* out, float alpha, float beta, int64_t stride, cudaStream_t stream) {
  if (plan.thin == 1) {
    const dim3 grid(ceil_div(p.n, kThinCols), 1, plan.splits);
    auto* kernel = p.n % 4 == 0 ? &sgemm_few_rows<kThin, true> : &sgemm_few_rows<kThin, false>;
    kernel<<<grid, kThinThreads, 0, stream>>>(p.m, p.n, p.k, plan.k_slice, alpha, A, B, beta, out,
                                              stride);
  } else {
    launch_few_cols<kThin>(p, plan, A, B, out, alpha, beta, stride, stream);
  }
}

void launch_thin(const sgemm::Problem& p, const Plan& plan, const float* A, const float* B,
                 float* out, float alpha, float beta, int64_t stride, cudaStream_t stream) {
  const int thin = plan.thin == 1 ? p.m : p.n;
  if (thin <= 4) {
    launch_thin_of<4>(p, plan, A, B, out, alpha, beta, stride, stream);
  } else if (thin <= 8) {
    launch_thin_of<8>(p, plan, A, B, out, alpha, beta, stride, stream);
  } else if (thin <= 16) {
    launch_thin_of<16>(p, plan, A, B, out, alpha, beta, stride, stream);
  } else {  // few columns only: few rows stop at kThinMax
    launch_few_cols<kFewColsMax>(p, plan, A, B, out, alpha, beta, stride, stream);
  }
}

// The plan of the last problem is kept: the harness launches the same shape many times, and the
// model's thousands of candidates (every tile, split count and padding) would otherwise add host
// time to every launch.
Plan launch_plan(const sgemm::Problem& p, size_t workspace_available) {
  struct Key {
    int m, n, k;
    bool beta;
    size_t workspace;
  };
  static Key last{0, 0, 0, false, 0};
  static Plan plan;
  const Key key{p.m, p.n, p.k, p.beta != 0.0f, workspace_available};
  if (key.m != last.m || key.n != last.n || key.k != last.k || key.beta != last.beta ||
      key.workspace != last.workspace) {
    plan = plan_for(p, workspace_available);
    last = key;
    if (SGEMM_FORCED_PLAN) {
      // One line per shape for scripts/calibrate_07.py: the plan and what the model predicts.
      const bool thin = plan.thin != 0;
      std::fprintf(stderr,
                   "plan m=%d n=%d k=%d thin=%d tile=%d block_m=%d block_n=%d blocks_per_sm=%d "
                   "splits=%d k_slice=%d pad=%d predicted_us=%.3f\n",
                   p.m, p.n, p.k, plan.thin, thin ? -1 : plan.tile,
                   thin ? 0 : kTileModels[plan.tile].block_m,
                   thin ? 0 : kTileModels[plan.tile].block_n,
                   thin ? 0 : device().blocks_per_sm[plan.tile], plan.splits, plan.k_slice,
                   plan.pad ? 1 : 0, plan.seconds * 1e6);
    }
  }
  return plan;
}

void launch_any_shape(const sgemm::Problem& p, const float* A, const float* B, float* C,
                      cudaStream_t stream) {
  const Plan plan = launch_plan(p, p.workspace ? p.workspace_size : 0);
  // One slice: straight into C. Several: raw partial tiles into the workspace, then the reduction.
  const bool split = plan.splits > 1;
  float* const workspace = static_cast<float*>(p.workspace);
  float* out = split ? workspace : C;
  const float alpha = split ? 1.0f : p.alpha;
  const float beta = split ? 0.0f : p.beta;
  // With the padded copy of B, split-K's slices have its rows (launch_tile): padded_ld(N) floats.
  const bool padded_slices = split && plan.thin == 0 && plan.pad;
  const int64_t stride = padded_slices ? slice_floats(p) : sgemm::split_k_slice_floats(p);
  // N odd and padding pays: B copied into rows of padded_ld(N) floats, after the slices.
  if (plan.thin != 0) {
    launch_thin(p, plan, A, B, out, alpha, beta, stride, stream);
    if (split) sgemm::reduce_split_k_slices(p, plan.splits, out, C, stream);
    return;
  }
  float* padded_b = nullptr;
  if (plan.pad) {
    padded_b = workspace + (split ? plan.splits * stride : 0);
    const dim3 grid(ceil_div(padded_ld(p.n) / 4, kPadThreads), std::min(p.k, 65535));
    pad_rows<<<grid, kPadThreads, 0, stream>>>(p.k, p.n, padded_ld(p.n), B, padded_b);
  }
  switch (plan.tile) {
    case 0:
      launch_tile<LargeTile>(p, plan, A, B, padded_b, out, alpha, beta, stride, stream);
      break;
    case 1:
      launch_tile<MediumTile>(p, plan, A, B, padded_b, out, alpha, beta, stride, stream);
      break;
    case 2:
      launch_tile<SmallTile>(p, plan, A, B, padded_b, out, alpha, beta, stride, stream);
      break;
    case 3:
      launch_tile<TallTile>(p, plan, A, B, padded_b, out, alpha, beta, stride, stream);
      break;
    case 4:
      launch_tile<TinyTile>(p, plan, A, B, padded_b, out, alpha, beta, stride, stream);
      break;
    case 5:
      launch_tile<NarrowTile>(p, plan, A, B, padded_b, out, alpha, beta, stride, stream);
      break;
    default:
      launch_tile<WideTile>(p, plan, A, B, padded_b, out, alpha, beta, stride, stream);
      break;
  }
  if (split) {
    sgemm::reduce_split_k_slices(p, plan.splits, out, C, stream,
                                 padded_slices ? padded_ld(p.n) : 0);
  }
}

// The workspace this problem's plan needs: split-K's slices and the padded copy of B (0 when
// the model does neither). plan_for caps each part itself.
size_t workspace_bytes(const sgemm::Problem& p) {
  const Plan plan = plan_for(p, SIZE_MAX);
  return workspace_for(p, plan.splits, plan.pad);
}

// The tile the launcher takes (given the workspace it asks for), for the harness's traffic model.
sgemm::TileSize tile_for(const sgemm::Problem& p) {
  const Plan plan = plan_for(p, workspace_bytes(p));
  if (plan.thin == 1) return sgemm::TileSize{kThinMax, kThinCols};
  if (plan.thin == 2) {
    const int cols = kFewColsWidths[few_cols_index(p.n)];
    return sgemm::TileSize{few_cols_rows(cols), cols};
  }
  const TileModel& t = kTileModels[plan.tile];
  return sgemm::TileSize{t.block_m, t.block_n};
}

}  // namespace

int main(int argc, char** argv) {
  sgemm::Chapter chapter{"07_any_shape",
                         "any shape: tile chosen by a wave-quantization model, split-K, "
                         "8-byte rows (kernel of chapter 06)",
                         &launch_any_shape,
                         LargeTile::kBlockM,
                         LargeTile::kBlockN,
                         &tile_for};
  chapter.workspace_bytes = &workspace_bytes;
  if (SGEMM_FORCED_PLAN && forced_plan().text && !forced_plan().valid) {
    std::fprintf(stderr,
                 "error: SGEMM_PLAN=%s: expected tile,splits,pad (tile 0-%d, or %d: the thin "
                 "kernel; splits 1-%d, pad 0 or 1)\n",
                 forced_plan().text, kNumTiles - 1, kNumTiles, sgemm::kMaxSplits);
    return sgemm::kExitUsage;
  }
  return sgemm::run_chapter(chapter, argc, argv);
}
