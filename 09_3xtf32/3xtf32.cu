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
// into separate FP32 accumulators on the CUDA cores and restarted from zero. The pipeline is
// chapter 08's (cp.async, padded shared memory, ldmatrix for A: the wrappers in common/), with
// three changes for speed: each element is split once per block, in shared memory, by the thread
// that copied it, not once per warp that reads it (split_own_chunks()); B sits in "pair rows" so
// that one LDS.128 gives the (b0, b1) register pairs of two mma (Tile::kStrideB); and the warps
// meet at a K tile's end on an mbarrier, arriving once they have split and waiting after the last
// k-step's mma (tile_barrier_arrive/wait), so that no warp idles the tensor cores waiting for the
// slowest one's split. The launcher picks the tile and splits K per shape as chapter 08's does
// (common/split_k.h) and, where K or N is not a multiple of 4 and it pays, first copies A and B
// into rows padded to 4 floats, so that every copy is 16 bytes (chapter 07's padded B;
// padding_for()). Precision contract: FP32 (verified against cuBLAS CUBLAS_COMPUTE_32F, TF32 off,
// with the FP32 tolerance; its speed is compared with that mode) for finite inputs whose products
// and sums are finite in FP32 and whose nonzero elements are at least 2^-114 in magnitude; smaller
// ones have subnormal small parts, which TF32 holds only to multiples of 2^-136 (README.md, "The
// range"). Limits: sm_80 or newer (TF32 mma.sync); every shape.
// Example: build/bin/09_3xtf32 --size 4096

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
// Two sets of accumulators (tensor-core partial sums and FP32 totals) per thread: 64 x 32 warps
// (sB's pair rows take 32-column warps only).
// The tuning build (-DSGEMM_TUNING=ON) compiles this file again with other SGEMM_TILE values.
#ifndef SGEMM_TILE
#define SGEMM_TILE 128, 128, 32, 64, 32, 3
#endif
// Promotion interval: the tensor-core partial sums go into the FP32 accumulators every
// SGEMM_PROMOTE mma k-steps (of 8), 0 = never (plain 3xTF32). README.md, "Promotion", measures
// the speed and error of each.
#ifndef SGEMM_PROMOTE
#define SGEMM_PROMOTE 8
#endif
// SGEMM_SPLIT_IN_SHARED = 0 skips the split in shared memory: shared memory holds the raw tiles
// (half the bytes) and each warp splits the fragment values it reads, in registers, at every
// k-step, as a per-warp split must. README.md, "Attribution and variants", measures both.
#ifndef SGEMM_SPLIT_IN_SHARED
#define SGEMM_SPLIT_IN_SHARED 1
#endif
// SGEMM_TILE_BARRIER: how the warps meet at a tile's end. 1 (default): an mbarrier, each thread
// arriving once it has split its chunks of the next tile and waiting only after it has issued the
// last k-step's mma; 0: __syncthreads() before that k-step's mma (README.md, "Attribution and
// variants": `syncthreads`).
#ifndef SGEMM_TILE_BARRIER
#define SGEMM_TILE_BARRIER 1
#endif
// SGEMM_FRAGMENT_BUFFERS = 2 reads the fragments of k-step s + 1 while the mma of k-step s issue
// (two register sets, CUTLASS's mma_multistage order); 1, the default, reads each k-step's
// fragments at the k-step, one set. On the H100 one set ran 1.2-3.4 % faster (README.md,
// "Attribution and variants": `fragments_ahead`).
#ifndef SGEMM_FRAGMENT_BUFFERS
#define SGEMM_FRAGMENT_BUFFERS 1
#endif
// SGEMM_SPLIT_EARLY = e splits the next tile e k-steps before the current tile's last one, so that
// the split's instructions issue between the mma of the last e k-steps instead of holding up the
// mma of the last one; 0, the default, splits at the last k-step, just before the barrier. Early
// splitting ran slower on the H100 (README.md, "Attribution and variants": `split_early`).
#ifndef SGEMM_SPLIT_EARLY
#define SGEMM_SPLIT_EARLY 0
#endif
// SGEMM_SPLIT_K = 0 never cuts K (README.md, "Every shape", measures what split-K brings; for 09
// it is also the accuracy test's mutant on long K).
#ifndef SGEMM_SPLIT_K
#define SGEMM_SPLIT_K 1
#endif
// SGEMM_CHECK_EVERY_TILE = 1 tests the first tile's bounds at every tile (chapter 08's variant).
#ifndef SGEMM_CHECK_EVERY_TILE
#define SGEMM_CHECK_EVERY_TILE 0
#endif
// SGEMM_SPLIT_ROUNDS = 0 leaves a grid of the big tile that needs no split-K to fill the GPU
// uncut (README.md, "Every shape": split-K for the last round).
#ifndef SGEMM_SPLIT_ROUNDS
#define SGEMM_SPLIT_ROUNDS 1
#endif
// SGEMM_NARROW_TILE = 0 leaves C at most 64 columns wide to the 128-column tiles (README.md,
// "Every shape").
#ifndef SGEMM_NARROW_TILE
#define SGEMM_NARROW_TILE 1
#endif
// SGEMM_PADDED_COPIES = 0 never copies A and B into padded rows (README.md, "Every shape").
#ifndef SGEMM_PADDED_COPIES
#define SGEMM_PADDED_COPIES 1
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

  // A per-warp split costs 5 ALU instructions per value per warp that reads it: every A value is
  // read by kWarpsN warps and every B value by kWarpsM, and this work competes with the mma for
  // issue slots. Split once per block instead, each value by the thread that copied it, the stage
  // holds both parts, and the fragment path is plain loads.
  static constexpr bool kSplitInShared = SGEMM_SPLIT_IN_SHARED;

  // sA[m][k]: rows of kBlockK + 4 floats. The 8 rows an ldmatrix phase reads (16 bytes each) then
  // start 4 banks apart and cover all 32 banks (08's README, "Shared memory without bank
  // conflicts").
  static constexpr int kStrideA = kBlockK + 4;
  static constexpr int kSizeA = kBlockM * kStrideA;
  // sB in pair rows. The mma's b0 = B[t][n] and b1 = B[t + 4][n] must sit in a register pair;
  // from sB[k][n] they come from two LDS.128 of different rows and every mma needs two MOVs to
  // pair them. Pair row P = 4 (k / 8) + k % 4 holds rows k and k + 4 of the tile: for each group
  // of 4 columns c0..c0+3 a 32-byte block, which cp.async fills as [row k: c0..c0+3 | row k + 4:
  // c0..c0+3] and the split rewrites, in place, as [k c0, k+4 c0, k c0+1, k+4 c0+1 | k c0+2, k+4
  // c0+2, k c0+3, k+4 c0+3]: one LDS.128 then gives the pairs (b0, b1) of 2 n-tiles. Pair rows
  // of 2 kBlockN + 4 floats, 4 banks apart: the fragment loads (8 lanes per phase: t = 0..3 pair
  // rows x 2 lane groups g whose blocks are 16 banks apart, see warp_column()) and the copy and
  // split accesses (2 pair rows x 4 blocks per phase) cover 32 banks.
  static constexpr int kStrideB = 2 * kBlockN + 4;  // floats per pair row
  static constexpr int kPairRows = kBlockK / 2;
  static constexpr int kSizeB = kPairRows * kStrideB;
  // A stage: [sA | sB] (the cp.async destination, raw until the split overwrites it with big),
  // then with kSplitInShared [sA small | sB small] in the same layout, kHalfFloats further on.
  static constexpr int kHalfFloats = kSizeA + kSizeB;
  static constexpr int kStageFloats = (kSplitInShared ? 2 : 1) * kHalfFloats;
  static constexpr int kSmemBytes = kStages * kStageFloats * static_cast<int>(sizeof(float));

  // Copy plan for A: rows in 16-byte chunks (4 floats); consecutive threads take consecutive
  // chunks of a row, so a warp reads whole 32-byte sectors of global memory.
  static constexpr int kChunksA = kBlockK / 4;  // chunks per row of the A tile
  static constexpr int kRowsPerPassA = kThreads / kChunksA;
  static constexpr int kPassesA = kBlockM / kRowsPerPassA;
  // B: a thread copies both chunks of a 32-byte block (rows k and k + 4), so that it can split
  // the block in place. Per warp and pass: 2 pair rows x 16 blocks (lanes 0-3 blocks 0-3 of pair
  // row 0, lanes 4-7 blocks 0-3 of pair row 1, lanes 8-15 blocks 4-7, ...): each cp.async
  // instruction reads 256 contiguous bytes of each of 2 rows of B; kWarpsPerRowB warps cover the
  // width of the tile.
  static constexpr int kBlocksPerRowB = kBlockN / 4;
  static constexpr int kWarpsPerRowB = kBlocksPerRowB / 16;
  static constexpr int kPairRowsPerPassB = 2 * (kThreads / 32) / kWarpsPerRowB;
  static constexpr int kPassesB = kPairRows / kPairRowsPerPassB;

  // A 128-thread block may use 255 registers and still fit twice per SM (2 x 128 x 256 = 65536)
  // where its shared memory does; 256-thread blocks of 32 x 32 or 64 x 32 warps (64 or 128
  // accumulators, their fragments twice) need more than 128 and run one per SM.
  static constexpr int kMinBlocksPerSm =
      kThreads <= 128 && 2 * (kSmemBytes + 1024) <= 228 * 1024 ? 2 : 1;

  // Promotion every kPromote k-steps: inside a K tile when it divides the tile's kSteps, else
  // every kPromote / kSteps tiles.
  static constexpr int kSteps = kBlockK / kMmaK;
  static constexpr int kPromote = SGEMM_PROMOTE;
  // The k-step at which each thread splits its chunks of the next tile (SGEMM_SPLIT_EARLY).
  static constexpr int kSplitAt =
      kSteps - 1 > SGEMM_SPLIT_EARLY ? kSteps - 1 - SGEMM_SPLIT_EARLY : 0;

  static_assert(kBlockM % kWarpM == 0 && kBlockN % kWarpN == 0, "warps must tile the block");
  static_assert(kWarpM % kMmaM == 0 && kWarpN % kMmaN == 0, "mma tiles must tile the warp");
  static_assert(kBlockK % kMmaK == 0, "a K tile is a whole number of mma k-steps");
  static_assert(kThreads <= 1024, "at most 1024 threads per block");
  static_assert(kFragsN == 4, "the pair-row layout of sB is worked out for 32-column warp tiles");
  static_assert(kThreads % kChunksA == 0 && kBlockM % kRowsPerPassA == 0,
                "every thread copies the same number of chunks of A");
  static_assert(kBlockN % 64 == 0 && (kThreads / 32) % kWarpsPerRowB == 0 && kBlockK % 8 == 0 &&
                    kPairRows % kPairRowsPerPassB == 0 && kPairRowsPerPassB % 4 == 0,
                "every thread copies the same number of 32-byte blocks of B");
  static_assert(kStages >= 2, "a pipeline needs at least two stages");
  static_assert(kSteps % 2 == 0, "the fragment buffer of a k-step is its parity");
  // Promote inside the K tile (after k-steps kPromote - 1, 2 kPromote - 1, ...) or once every
  // kTilesPerPromote tiles; 0 in both: never.
  static constexpr int kStepsPerPromote = kPromote > 0 && kPromote <= kSteps ? kPromote : 0;
  static constexpr int kTilesPerPromote = kPromote > kSteps ? kPromote / kSteps : 0;
  static_assert(kPromote >= 0 && kSteps % (kStepsPerPromote > 0 ? kStepsPerPromote : 1) == 0 &&
                    (kTilesPerPromote == 0 || kPromote % kSteps == 0),
                "SGEMM_PROMOTE must divide, or be a multiple of, the k-steps of a K tile");
  static_assert(kSmemBytes <= 227 * 1024,
                "shared memory per block is limited to 227 KB: fewer stages or a smaller tile");
};

struct TileShape {
  int block_m, block_n, block_k, warp_m, warp_n, stages;
};
constexpr TileShape kTile{SGEMM_TILE};
using MainTile =
    Tile<kTile.block_m, kTile.block_n, kTile.block_k, kTile.warp_m, kTile.warp_n, kTile.stages>;
// For problems whose big tiles would leave SMs idle (README.md, "Every shape"): the main tile's
// 64 x 32 warps, 4 of them, and 2 stages, so that two blocks fit an SM (2 x 103,424 bytes of
// shared memory, 2 x 128 threads x at most 255 registers): 8 warps per SM, as the main tile.
// SGEMM_SMALL_TILE = 64, 128, 32, 32, 32, 3 is the earlier small tile, 8 warps of 32 x 32 and
// one block per SM (the variant small_warps_32).
#ifndef SGEMM_SMALL_TILE
#define SGEMM_SMALL_TILE 64, 128, 32, 64, 32, 2
#endif
using SmallTile = Tile<SGEMM_SMALL_TILE>;
// For C at most 64 columns wide, which fills half of the other tiles' 128 columns: four warps of
// 64 x 32, 128 threads, and 16-deep K tiles so that two blocks fit an SM (README.md, "Every
// shape").
using NarrowTile = Tile<128, 64, 16, 64, 32, 3>;

// ---- The tensor-core side ----------------------------------------------------------------------
// cp.async (common/cp_async.h), ldmatrix and mma.sync (common/mma_sync.h) as in chapter 08.

// Column of a warp's C tile (and of its B tile) that holds column x (0..7) of mma n-tile j. The
// mma does not care which columns of B it is given, as long as C's columns follow the same map:
// 4 p(x) + j, so lane group g = x finds its 4 values of a k row in one block of 4 columns (08's
// SGEMM_VECTOR_B layout); p swaps bits 0 and 1 of x, which puts the blocks of the two lane
// groups of one LDS.128 phase (g, g + 1 for even g) 2 blocks, 16 banks, apart in a pair row.
__host__ __device__ constexpr int warp_column(int j, int x) {
  const int p = (x & 4) | ((x & 1) << 1) | ((x >> 1) & 1);
  return 4 * p + j;
}

// x as two mma operands, big + small: sgemm::split_tf32 (common/tf32.h; README.md, "The split"
// and "The range").
using sgemm::split_tf32;
using Split = sgemm::Tf32Split;

// The tile's end as an mbarrier (SGEMM_TILE_BARRIER = 1): 8 bytes of shared memory that complete a
// phase when all kThreads threads have arrived. Arriving does not wait: the thread goes on issuing
// mma and waits for the phase later. Arrive has release and test_wait acquire semantics, so the
// shared-memory writes (the split) and reads (the fragments) a thread made before arriving are
// ordered before whatever another thread does after its wait returns. sm_80 and newer.
[[maybe_unused]] __device__ __forceinline__ void tile_barrier_init(uint32_t bar, uint32_t threads) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(bar), "r"(threads) : "memory");
}
[[maybe_unused]] __device__ __forceinline__ uint64_t tile_barrier_arrive(uint32_t bar) {
  uint64_t phase;
  asm volatile("mbarrier.arrive.shared.b64 %0, [%1];\n" : "=l"(phase) : "r"(bar) : "memory");
  return phase;
}
[[maybe_unused]] __device__ __forceinline__ void tile_barrier_wait(uint32_t bar, uint64_t phase) {
  uint32_t done;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.test_wait.shared.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, "
        "p;\n}\n"
        : "=r"(done)
        : "r"(bar), "l"(phase)
        : "memory");
  } while (!done);
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

// What one thread copies of every K tile (chapter 08's plan): the bounds are checked once, a row
// of A past M or a column of B past N zero-filled on every tile from an address clamped into the
// matrix, and the partial K tile, if any, comes first (the slice's tiles start at k0 = k_len -
// num_tiles * kBlockK), so a full tile's copies test nothing.
template <class T>
struct CopyPlan {
  const float* a[T::kPassesA];  // A at (the row of pass i, the current tile's first k + a_col)
  const float* b;               // B at (the current tile's row b_row, column b_src or 0)
  int64_t b_four;               // 4 rows of B (a block's second chunk), in floats
  int64_t b_pass;               // 2 kPairRowsPerPassB rows of B, in floats
  int a_col;                    // its first k inside the A tile (a multiple of 4)
  int a_dst;                    // sA offset of its first chunk
  int b_row;                    // its first row inside the B tile (its second chunk: b_row + 4)
  int b_dst;                    // sB offset of its first 32-byte block
  bool a_ok[T::kPassesA];       // the row of pass i lies inside A
  bool b_ok[4];                 // column b_src + j lies inside B (N % 4 == 0: all four alike)
  int b_off[4];                 // j, or back to column 0 where column b_src + j lies outside
};

// This thread's share of every K tile's copies, at tile 0: chunk c of a row of A goes to chunk c
// of its padded row in shared memory; B as Tile's copy plan says.
template <class T>
__device__ __forceinline__ CopyPlan<T> make_copy_plan(int tid, const float* A, const float* B,
                                                      int m, int n, int k, int ldb, int k0,
                                                      int block_row, int block_col) {
  CopyPlan<T> plan;
  const int a_row = tid / T::kChunksA;
  plan.a_col = (tid % T::kChunksA) * 4;
  plan.a_dst = a_row * T::kStrideA + plan.a_col;
#pragma unroll
  for (int i = 0; i < T::kPassesA; ++i) {
    const int row = block_row + a_row + i * T::kRowsPerPassA;
    plan.a_ok[i] = row < m;
    plan.a[i] = A + static_cast<int64_t>(min(row, m - 1)) * k + (k0 + plan.a_col);
  }
  const int warp = tid / 32, lane = tid % 32;
  const int block = lane % 4 + 4 * (lane / 8) + 16 * (warp % T::kWarpsPerRowB);
  const int pair_row = 2 * (warp / T::kWarpsPerRowB) + (lane / 4) % 2;
  plan.b_row = 8 * (pair_row / 4) + pair_row % 4;
  plan.b_dst = pair_row * T::kStrideB + 8 * block;
  const int b_src = block_col + 4 * block;
  const int col0 = b_src < n ? b_src : 0;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    plan.b_ok[j] = b_src + j < n;
    plan.b_off[j] = plan.b_ok[j] ? j : -col0;
  }
  plan.b_four = 4 * static_cast<int64_t>(ldb);
  plan.b_pass = 2 * T::kPairRowsPerPassB * static_cast<int64_t>(ldb);
  plan.b = B + static_cast<int64_t>(k0 + plan.b_row) * ldb + col0;
  return plan;
}

// Issues the copies of the K tile whose first k is k_at (relative to the slice) into the stage
// at sA (sB follows at kSizeA) and moves the plan on to the next tile. kCheck: the tile may hold
// positions before the slice's start (k_at < 0, tile 0 only), zero-filled from a valid address.
template <class T, bool kAlignedK, bool kAlignedB, bool kCheck>
__device__ __forceinline__ void issue_tile(float* sA, CopyPlan<T>& p, const float* A,
                                           const float* B, int k_at) {
  float* const sB = sA + T::kSizeA;
#pragma unroll
  for (int i = 0; i < T::kPassesA; ++i) {
    float* dst = sA + p.a_dst + i * T::kRowsPerPassA * T::kStrideA;
    if (kAlignedK) {
      // K % 4 == 0: a chunk of 4 k values lies wholly inside or wholly outside the slice.
      const bool ok = p.a_ok[i] && (!kCheck || k_at + p.a_col >= 0);
      sgemm::cp_async_16(dst, !kCheck || ok ? p.a[i] : A, ok);
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const bool ok = p.a_ok[i] && (!kCheck || k_at + p.a_col + j >= 0);
        sgemm::cp_async_4(dst + j, !kCheck || ok ? p.a[i] + j : A, ok);
      }
    }
    p.a[i] += T::kBlockK;
  }
#pragma unroll
  for (int c = 0; c < T::kPassesB; ++c) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      // Pair row P + c * kPairRowsPerPassB is k row b_row + 2 c kPairRowsPerPassB (+ 4 h).
      const float* src = h == 0 ? p.b : p.b + p.b_four;
      float* dst = sB + p.b_dst + c * T::kPairRowsPerPassB * T::kStrideB + 4 * h;
      const bool row_ok = !kCheck || k_at + p.b_row + 2 * c * T::kPairRowsPerPassB + 4 * h >= 0;
      if (kAlignedB) {
        // ldb % 4 == 0: the chunk lies wholly inside or wholly outside B's rows (a padded copy's
        // columns past N are zeros).
        const bool ok = row_ok && p.b_ok[0];
        sgemm::cp_async_16(dst, !kCheck || ok ? src : B, ok);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const bool ok = row_ok && p.b_ok[j];
          sgemm::cp_async_4(dst + j, !kCheck || ok ? src + p.b_off[j] : B, ok);
        }
      }
    }
    p.b += p.b_pass;  // after kPassesB passes: the next tile's row b_row
  }
}

// Splits the 16-byte chunk at p in place: big over the raw value, small at the same offset
// kHalfFloats further on. One LDS.128, 4 x 5 ALU instructions, two STS.128.
template <class T>
__device__ __forceinline__ void split_chunk(float* p) {
  const float4 v = *reinterpret_cast<const float4*>(p);
  const Split x = split_tf32(v.x), y = split_tf32(v.y), z = split_tf32(v.z), w = split_tf32(v.w);
  *reinterpret_cast<uint4*>(p) = make_uint4(x.big, y.big, z.big, w.big);
  *reinterpret_cast<uint4*>(p + T::kHalfFloats) = make_uint4(x.small, y.small, z.small, w.small);
}

// After cp.async.wait_group says this thread's copies of a tile have landed (they are then
// visible to this thread, PTX ISA "cp.async.wait_group"), the thread splits exactly the chunks it
// copied: the kPassesA + kPassesB positions copy_tile() writes, whether as one 16-byte copy or
// four 4-byte ones (K % 4 != 0, N % 4 != 0), and whether zero-filled past an edge or not. Every
// position a fragment load reads is one of them, so after the barrier that follows (the tile's-end
// mbarrier, or __syncthreads()), the stage holds big and small for every element. No other thread
// touches these chunks between the wait and that barrier: the fragment loads of the stage's
// previous tile ended before an earlier barrier, and no thread reads the stage before the next
// one.
template <class T>
__device__ __forceinline__ void split_own_chunks(float* stage, const CopyPlan<T>& p) {
#pragma unroll
  for (int i = 0; i < T::kPassesA; ++i) {
    split_chunk<T>(stage + p.a_dst + i * T::kRowsPerPassA * T::kStrideA);
  }
#pragma unroll
  for (int c = 0; c < T::kPassesB; ++c) {
    // The 32-byte block: rows k (u) and k + 4 (v) as landed, rewritten as (k, k + 4) pairs.
    float* q = stage + T::kSizeA + p.b_dst + c * T::kPairRowsPerPassB * T::kStrideB;
    const float4 u = *reinterpret_cast<const float4*>(q);
    const float4 v = *reinterpret_cast<const float4*>(q + 4);
    const Split u0 = split_tf32(u.x), u1 = split_tf32(u.y), u2 = split_tf32(u.z),
                u3 = split_tf32(u.w);
    const Split v0 = split_tf32(v.x), v1 = split_tf32(v.y), v2 = split_tf32(v.z),
                v3 = split_tf32(v.w);
    *reinterpret_cast<uint4*>(q) = make_uint4(u0.big, v0.big, u1.big, v1.big);
    *reinterpret_cast<uint4*>(q + 4) = make_uint4(u2.big, v2.big, u3.big, v3.big);
    *reinterpret_cast<uint4*>(q + T::kHalfFloats) =
        make_uint4(u0.small, v0.small, u1.small, v1.small);
    *reinterpret_cast<uint4*>(q + T::kHalfFloats + 4) =
        make_uint4(u2.small, v2.small, u3.small, v3.small);
  }
}

// kAlignedK: K % 4 == 0 (rows of A start on 16 bytes); kAlignedB: ldb % 4 == 0 (rows of B);
// kAlignedC: N % 4 == 0 (rows of C). B has rows of ldb floats: N, or padded_ld(N) for the
// launcher's padded copy, whose columns past N are zeros. Split-K (chapter 07, common/split_k.h):
// block z covers k in [z * k_slice, min(k, (z + 1) * k_slice)) and writes C + z * c_slice; A keeps
// its leading dimension k. Without split-K, gridDim.z = 1 and k_slice = k. Each slice is promoted
// on its own and the reduction adds the slices in FP32, so a long K is summed in shorter chains
// (README.md, "Every shape").
template <class T, bool kAlignedK, bool kAlignedB, bool kAlignedC>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocksPerSm)
    sgemm_3xtf32(int m, int n, int k, int k_slice, float alpha, const float* __restrict__ A,
                 const float* __restrict__ B, int ldb, float beta, float* __restrict__ C,
                 int64_t c_slice) {
  extern __shared__ float4 smem_raw[];  // float4: 16-byte aligned for cp.async and ldmatrix
  float* const smem = reinterpret_cast<float*>(smem_raw);
  // Stage s: sA = smem + s * kStageFloats (kBlockM x kStrideA), sB right after it (kPairRows x
  // kStrideB); with kSplitInShared their small parts kHalfFloats further on.

  // The slice, never empty (the launcher starts every slice below k); k_slice is a multiple of
  // kBlockK, so a slice of A starts on 16 bytes whenever K % 4 == 0.
  const int k_begin = blockIdx.z * k_slice;
  const int k_len = min(k_slice, k - k_begin);
  A += k_begin;
  B += static_cast<int64_t>(k_begin) * ldb;
  C += blockIdx.z * c_slice;

  const int tid = threadIdx.x;
  const int block_row = blockIdx.y * T::kBlockM;  // < 65535 * kBlockM: the launcher's slabs
  const int block_col = blockIdx.x * T::kBlockN;
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
  CopyPlan<T> plan = make_copy_plan<T>(tid, A, B, m, n, k, ldb, k0, block_row, block_col);

  // Fragment addresses inside a stage. ldmatrix: lane l gives the address of row l % 8 of tile
  // l / 8, i.e. row (l % 8) + 8 * ((l / 8) % 2), k 4 * (l / 16) of each 16 x 8 block of A.
  const uint32_t smem_base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const int ld_row = warp_row + (lane % 8) + 8 * ((lane / 8) % 2);
  const int ld_col = 4 * (lane / 16);
  const uint32_t a_frag = smem_base + (ld_row * T::kStrideA + ld_col) * sizeof(float);
  // B: pair row t of each k-step, the block of 4 columns warp_column(0, g) (2 floats a column).
  const int b_frag = T::kSizeA + t * T::kStrideB + 2 * (warp_col + warp_column(0, g));

  auto issue = [&](int tile, int stage) {
    float* const sA = smem + stage * T::kStageFloats;
    if (SGEMM_CHECK_EVERY_TILE || tile == 0) {
      issue_tile<T, kAlignedK, kAlignedB, true>(sA, plan, A, B, k0 + tile * T::kBlockK);
    } else {
      issue_tile<T, kAlignedK, kAlignedB, false>(sA, plan, A, B, k0 + tile * T::kBlockK);
    }
  };

  float acc[T::kFragsM][T::kFragsN][4] = {};   // FP32 totals (CUDA-core adds)
  float part[T::kFragsM][T::kFragsN][4] = {};  // tensor-core partial sums since the last promotion

  // Fragments of one k-step: [0] big (raw without kSplitInShared), [1] small. load_frags reads
  // the big parts of A and both parts of B; A's small parts (load_a_small) are read at the k-step
  // itself, which keeps one set of them in registers, not two.
  constexpr uint32_t kHalfBytes = T::kHalfFloats * sizeof(float);
  auto load_a_small = [&](int stage, int kk, uint32_t(&ra)[T::kFragsM][4]) {
    const uint32_t a_stage = a_frag + stage * T::kStageFloats * sizeof(float) + kHalfBytes;
#pragma unroll
    for (int i = 0; i < T::kFragsM; ++i) {
      sgemm::ldmatrix_x4(ra[i], a_stage + (i * kMmaM * T::kStrideA + kk) * sizeof(float));
    }
  };
  auto load_frags = [&](int stage, int kk, uint32_t(&ra)[2][T::kFragsM][4],
                        uint32_t(&rb)[2][T::kFragsN][2]) {
    const uint32_t a_stage = a_frag + stage * T::kStageFloats * sizeof(float);
#pragma unroll
    for (int i = 0; i < T::kFragsM; ++i) {
      sgemm::ldmatrix_x4(ra[0][i], a_stage + (i * kMmaM * T::kStrideA + kk) * sizeof(float));
    }
#pragma unroll
    for (int h = 0; h < (T::kSplitInShared ? 2 : 1); ++h) {
      // Pair row kk / 2 + t, two LDS.128: split, (b0, b1) of n-tiles 0, 1 then 2, 3; raw, b0 of
      // n-tiles 0-3 (row k) then their b1 (row k + 4).
      const float* src =
          smem + stage * T::kStageFloats + b_frag + h * T::kHalfFloats + (kk / 2) * T::kStrideB;
      const uint4 w = *reinterpret_cast<const uint4*>(src);
      const uint4 x = *reinterpret_cast<const uint4*>(src + 4);
      if constexpr (T::kSplitInShared) {
        rb[h][0][0] = w.x, rb[h][0][1] = w.y, rb[h][1][0] = w.z, rb[h][1][1] = w.w;
        rb[h][2][0] = x.x, rb[h][2][1] = x.y, rb[h][3][0] = x.z, rb[h][3][1] = x.w;
      } else {
        rb[0][0][0] = w.x, rb[0][1][0] = w.y, rb[0][2][0] = w.z, rb[0][3][0] = w.w;
        rb[0][0][1] = x.x, rb[0][1][1] = x.y, rb[0][2][1] = x.z, rb[0][3][1] = x.w;
      }
    }
  };
  // Without kSplitInShared: the raw values of a k-step's fragments, split by every warp that
  // reads them.
  auto split_in_registers = [](uint32_t(&ra)[2][T::kFragsM][4], uint32_t(&rb)[2][T::kFragsN][2]) {
#pragma unroll
    for (int i = 0; i < T::kFragsM * 4; ++i) {
      const Split v = split_tf32(__uint_as_float(ra[0][i / 4][i % 4]));
      ra[0][i / 4][i % 4] = v.big, ra[1][i / 4][i % 4] = v.small;
    }
#pragma unroll
    for (int j = 0; j < T::kFragsN * 2; ++j) {
      const Split v = split_tf32(__uint_as_float(rb[0][j / 2][j % 2]));
      rb[0][j / 2][j % 2] = v.big, rb[1][j / 2][j % 2] = v.small;
    }
  };
  // The two small cross terms first, then big * big, all into the same partial sums.
  auto mma_step = [&](const uint32_t(&ra)[2][T::kFragsM][4],
                      const uint32_t(&rb)[2][T::kFragsN][2]) {
#pragma unroll
    for (int i = 0; i < T::kFragsM; ++i) {
#pragma unroll
      for (int j = 0; j < T::kFragsN; ++j) {
        sgemm::mma_tf32(part[i][j], ra[1][i], rb[0][j]);
        sgemm::mma_tf32(part[i][j], ra[0][i], rb[1][j]);
        sgemm::mma_tf32(part[i][j], ra[0][i], rb[0][j]);
      }
    }
  };
  auto split_stage = [&](int stage) {
    if constexpr (T::kSplitInShared) split_own_chunks<T>(smem + stage * T::kStageFloats, plan);
  };

  // Prologue 2: start the first kStages tiles, one commit group each (empty past the last tile),
  // then split tile 0.
#pragma unroll
  for (int s = 0; s < T::kStages; ++s) {
    if (s < num_tiles) issue(s, s);
    sgemm::cp_async_commit();
  }
  // Fragments: [buffer][big, small]; with two buffers, buffer = k-step parity.
  constexpr int kBuffers = SGEMM_FRAGMENT_BUFFERS;
  static_assert(kBuffers == 1 || kBuffers == 2, "SGEMM_FRAGMENT_BUFFERS is 1 or 2");
  uint32_t fa[kBuffers][2][T::kFragsM][4];
  uint32_t fb[kBuffers][2][T::kFragsN][2];
  sgemm::cp_async_wait<T::kStages - 1>();
  split_stage(0);
  __syncthreads();
  if constexpr (kBuffers == 2) load_frags(0, 0, fa[0], fb[0]);

  // Main loop. Each k-step reads its fragments and issues its 3 kFragsM kFragsN mma; the other
  // warps' mma cover the loads' latency (with two buffers, the fragments of k-step s + 1 are read
  // before the mma of k-step s issue instead). At a tile's last k-step this thread waits for its
  // copies of the next tile (at most kStages - 2 groups pending: every boundary commits one group)
  // and splits them (SGEMM_SPLIT_EARLY moves this earlier); the barrier then publishes the whole
  // split stage. It also says every warp has read all of tile t's fragments (the last k-step's
  // were read before it), so tile t's stage takes tile t + kStages: all kStages stages are in
  // flight. With the mbarrier the thread arrives there and waits only after the last k-step's
  // mma, so a warp that reaches the tile's end early keeps the tensor cores busy meanwhile.
  constexpr bool kMbarrier = SGEMM_TILE_BARRIER == 1;
  __shared__ uint64_t tile_end;  // the mbarrier
  const uint32_t barrier = static_cast<uint32_t>(__cvta_generic_to_shared(&tile_end));
  if constexpr (kMbarrier) {
    if (tid == 0) tile_barrier_init(barrier, T::kThreads);
    __syncthreads();
  }
  int read_stage = 0;
  // After the barrier: tile t's stage takes tile t + kStages.
  auto refill = [&](int tile, int cur, int next_stage) {
    if (tile + T::kStages < num_tiles) issue(tile + T::kStages, read_stage);
    sgemm::cp_async_commit();
    if constexpr (kBuffers == 2) load_frags(next_stage, 0, fa[cur ^ 1], fb[cur ^ 1]);
  };
  for (int tile = 0; tile < num_tiles; ++tile) {
    const int next_stage = read_stage + 1 == T::kStages ? 0 : read_stage + 1;
#pragma unroll
    for (int s = 0; s < T::kSteps; ++s) {
      const int cur = kBuffers == 2 ? s % 2 : 0;
      if constexpr (kBuffers == 1) load_frags(read_stage, s * kMmaK, fa[0], fb[0]);
      // A's small parts of this k-step, read here: one set of them in registers, not two.
      if constexpr (T::kSplitInShared) load_a_small(read_stage, s * kMmaK, fa[cur][1]);
      if constexpr (kBuffers == 2) {
        if (s + 1 < T::kSteps) load_frags(read_stage, (s + 1) * kMmaK, fa[cur ^ 1], fb[cur ^ 1]);
      }
      if (s == T::kSplitAt && tile + 1 < num_tiles) {
        sgemm::cp_async_wait<T::kStages - 2>();
        split_stage(next_stage);
      }
      const bool tile_end_step = s + 1 == T::kSteps && tile + 1 < num_tiles;
      uint64_t phase = 0;
      if (tile_end_step) {
        if constexpr (kMbarrier) {
          phase = tile_barrier_arrive(barrier);
        } else {
          __syncthreads();
          refill(tile, cur, next_stage);
        }
      }
      if constexpr (!T::kSplitInShared) split_in_registers(fa[cur], fb[cur]);
      mma_step(fa[cur], fb[cur]);
      if constexpr (T::kStepsPerPromote > 0) {
        if ((s + 1) % T::kStepsPerPromote == 0) promote<T>(acc, part);
      }
      if constexpr (kMbarrier) {
        if (tile_end_step) {
          tile_barrier_wait(barrier, phase);
          refill(tile, cur, next_stage);
        }
      }
    }
    if constexpr (T::kTilesPerPromote > 0) {
      if ((tile + 1) % T::kTilesPerPromote == 0) promote<T>(acc, part);
    }
    read_stage = next_stage;
  }

  // What is left since the last promotion (all of it when kPromote == 0; 0 + x is exact).
  promote<T>(acc, part);

  // Epilogue: C = alpha * acc + beta * C. With beta == 0, C is never read (it may hold NaN).
  // acc[i][j] holds rows 16i + g (registers 0, 1) and 16i + g + 8 (2, 3), columns
  // warp_column(j, 2t) (registers 0, 2) and warp_column(j, 2t + 1) (1, 3): the 4 values of one
  // row and one e = 0, 1 are 4 consecutive columns, one float4 store.
#pragma unroll
  for (int i = 0; i < T::kFragsM; ++i) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = block_row + warp_row + i * kMmaM + g + 8 * half;
      if (row >= m) continue;
      float* c_row = C + static_cast<int64_t>(row) * n;
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int col = block_col + warp_col + warp_column(0, 2 * t + e);
        float v[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) v[u] = alpha * acc[i][u][2 * half + e];
        if constexpr (kAlignedC) {
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
            if (col + u < n) c_row[col + u] = beta != 0.0f ? v[u] + beta * c_row[col + u] : v[u];
          }
        }
      }
    }
  }
}

// The kernel for K % 4 and N % 4 (16-byte or 4-byte copies), its shared memory allowed once;
// a padded copy of B (ldb = padded_ld(N)) with N % 4 != 0 takes 16-byte copies of B and stores C
// float by float.
template <class T>
sgemm::SlicedKernel* kernel_for(const sgemm::Problem& p, int ldb) {
  // [K % 4 == 0][N % 4 == 0], then the padded B with N % 4 != 0
  static sgemm::SlicedKernel* const kernels[5] = {
      &sgemm_3xtf32<T, false, false, false>, &sgemm_3xtf32<T, false, true, true>,
      &sgemm_3xtf32<T, true, false, false>, &sgemm_3xtf32<T, true, true, true>,
      &sgemm_3xtf32<T, true, true, false>};
  static const bool raised = [] {
    // Above 48 KB, dynamic shared memory must be allowed explicitly, once per kernel.
    for (sgemm::SlicedKernel* kernel : kernels) {
      CUDA_CHECK(
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes));
    }
    return true;
  }();
  (void)raised;
  if (ldb % 4 == 0 && p.n % 4 != 0) return kernels[4];
  return kernels[2 * (p.k % 4 == 0) + (p.n % 4 == 0)];  // cudaMalloc pointers: 256-byte aligned
}

// ---- Padded copies (chapter 07's padded B, here for A and B; README.md, "Every shape") ------
// With K % 4 != 0 or N % 4 != 0 the rows of A or B do not start on 16 bytes and their copies go
// 4 bytes at a time, 15-30 % slower on the H100. Where it pays, the launcher first copies A into
// rows of padded_ld(K) floats (zeros past K) and B into padded_ld(K) rows of padded_ld(N) floats
// (zeros past row K and column N); the kernel multiplies over padded_ld(K), the zeros adding
// nothing, with 16-byte copies only.
int padded_ld(int x) { return (x + 3) / 4 * 4; }

// The copies' share of the multiply's time: ridge * bytes / flops, the copies moving their bytes
// at DRAM bandwidth and the multiply near the FP32 peak (the ridge is their ratio, FLOP per
// byte). Padding pays where that is below what the 4-byte copies cost: kFourByteLoss, the
// smallest loss measured against the nearest aligned shape, 14.8 % at 8191^3 (README.md, "Every
// shape"; docs/results/nvidia-h100-80gb-hbm3/tensor_cores/four_byte_copies_020e16e.txt).
constexpr double kFourByteLoss = 0.15;
constexpr size_t kMaxPaddedBytes = size_t{1} << 30;  // padded A and B together, at most

struct Padding {
  bool a = false;  // A copied into rows of padded_ld(K) floats
  bool b = false;  // B copied into padded_ld(K) rows of padded_ld(N) floats
};

size_t padded_a_bytes(const sgemm::Problem& p) {
  return static_cast<size_t>(p.m) * padded_ld(p.k) * sizeof(float);
}
size_t padded_b_bytes(const sgemm::Problem& p) {
  return static_cast<size_t>(padded_ld(p.k)) * padded_ld(p.n) * sizeof(float);
}
// Each region of the workspace starts on 256 bytes (sgemm::whole_256, common/split_k.h): a padded
// copy that started on 16 bytes only would cost its rows an extra 32-byte sector per K tile (2049 x
// 2051 x 1023 with two K slices: 78.2 % of cuBLAS FP32 with the copies right after the slices,
// 80.2 % on 256 bytes; H100).
using sgemm::whole_256;
// The GPU's FP32 peak and DRAM bandwidth: sgemm::current_device() (common/device.h).
using sgemm::current_device;

Padding padding_for(const sgemm::Problem& p) {
  const double ridge = current_device().ridge;
  Padding pad;
  if (!SGEMM_PADDED_COPIES || (p.k % 4 == 0 && p.n % 4 == 0)) return pad;
  pad.a = p.k % 4 != 0;
  pad.b = true;  // K % 4 != 0 adds rows to B, N % 4 != 0 columns
  // Bytes read and written: A's M x K and its copy, B's K x N and its copy.
  const double bytes =
      (pad.a ? 4.0 * p.m * p.k + padded_a_bytes(p) : 0.0) + 4.0 * p.k * p.n + padded_b_bytes(p);
  const double flops = 2.0 * p.m * p.n * p.k;
  const size_t total = (pad.a ? padded_a_bytes(p) : 0) + padded_b_bytes(p);
  if (ridge * bytes / flops >= kFourByteLoss || total > kMaxPaddedBytes) return Padding{};
  return pad;
}

// The problem the kernel sees: K rounded up to 4 where A is padded.
sgemm::Problem kernel_problem(const sgemm::Problem& p, const Padding& pad) {
  sgemm::Problem q = p;
  if (pad.a) q.k = padded_ld(p.k);
  return q;
}

// dst (rows_dst x ld_dst floats) = src (rows x cols, dense), zeros elsewhere.
// One thread per 4 floats of a row: its 4-byte reads coalesce with its neighbours', its write is
// one float4. Rows run along y (grid-stride past 65535 rows).
constexpr int kPadThreads = 256;

__global__ void __launch_bounds__(kPadThreads)
    pad_copy(int rows, int cols, const float* __restrict__ src, int rows_dst, int ld_dst,
             float* __restrict__ dst) {
  const int col = 4 * (blockIdx.x * kPadThreads + threadIdx.x);
  if (col >= ld_dst) return;
  for (int64_t row = blockIdx.y; row < rows_dst; row += gridDim.y) {
    float v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      v[j] = row < rows && col + j < cols ? src[row * cols + col + j] : 0.0f;
    }
    *reinterpret_cast<float4*>(dst + row * ld_dst + col) = make_float4(v[0], v[1], v[2], v[3]);
  }
}

void launch_pad_copy(int rows, int cols, const float* src, int rows_dst, int ld_dst, float* dst,
                     cudaStream_t stream) {
  const dim3 grid(ceil_div(ld_dst / 4, kPadThreads), std::min(rows_dst, 65535));
  pad_copy<<<grid, kPadThreads, 0, stream>>>(rows, cols, src, rows_dst, ld_dst, dst);
}

// How the launcher cuts a problem (README.md, "Every shape"): chapter 07's two decisions, the
// tile and the number of K slices, by sgemm::plan_tiles (common/split_k.h): the big tile whenever
// its blocks fill every SM once, else the tile whose busiest SM has the least work, and split-K
// for the tile's blocks when they leave SMs idle; first, padded copies where they pay.
template <class T>
sgemm::TileSpec spec_of(const sgemm::Problem& p) {
  static const int slots =
      sgemm::sm_count() * sgemm::blocks_per_sm(kernel_for<T>(p, p.n), T::kThreads, T::kSmemBytes);
  return {T::kBlockM, T::kBlockN, T::kBlockK, T::kStages, slots};
}

// For plan_split_k_rounds: 09's speed as a share of the FP32 peak, 58.55 and 58.89 TFLOP/s at
// 4096^3 and 8192^3 against a peak of 66.9 (the tour of 3693d0e, H100); the reduction's bandwidth
// as a share of the data sheet's and a launch, as chapter 07's calibration measured them
// (docs/results/nvidia-h100-80gb-hbm3/calibration_07.md: kDramShare, kLaunchSeconds).
constexpr double kFp32PeakShare = 0.87;
constexpr double kDramShare = 0.90;
constexpr double kLaunchSeconds = 1.9e-6;

enum class Which { kMain, kSmall, kNarrow };
struct Plan {
  Which tile = Which::kMain;
  sgemm::SplitK split;
};

// The plan for the problem the kernel sees (kernel_problem): chapter 08's big or small tile by
// sgemm::plan_tiles; for C at most 64 columns wide, the narrow tile where its busiest SM has less
// work (sgemm::plan_cost); and where the big tile stays uncut, its last round may leave most SMs
// idle: sgemm::plan_split_k_rounds cuts K where the rounds' time falls by more than the slices
// cost (README.md, "Every shape").
Plan plan_for(const sgemm::Problem& q) {
  const sgemm::TileSpec big = spec_of<MainTile>(q);
  const int sms = sgemm::sm_count();
  const sgemm::TileSpec small = spec_of<SmallTile>(q);
  const sgemm::TilePlan two = sgemm::plan_tiles(q, big, small, sms, SGEMM_SPLIT_K);
  Plan plan{two.small_tile ? Which::kSmall : Which::kMain, two.split};
  if (SGEMM_NARROW_TILE && q.n <= NarrowTile::kBlockN) {
    const sgemm::TileSpec narrow = spec_of<NarrowTile>(q);
    const int64_t tiles = sgemm::tiles_of(q, narrow);
    const sgemm::SplitK split =
        SGEMM_SPLIT_K ? sgemm::plan_split_k(tiles, narrow.slots, q.k, narrow.block_k, narrow.stages)
                      : sgemm::SplitK{1, q.k};
    const sgemm::TileSpec& chosen = two.small_tile ? small : big;
    if (sgemm::plan_cost(tiles, sms, narrow.block_m, narrow.block_n, split) <
        sgemm::plan_cost(sgemm::tiles_of(q, chosen), sms, chosen.block_m, chosen.block_n,
                         two.split)) {
      return Plan{Which::kNarrow, split};
    }
  }
  if (SGEMM_SPLIT_K && SGEMM_SPLIT_ROUNDS && plan.tile == Which::kMain && plan.split.splits == 1) {
    plan.split = sgemm::plan_split_k_rounds(
        q, sgemm::tiles_of(q, big), big.slots, big.block_m, big.block_n, big.block_k, big.stages,
        kFp32PeakShare * current_device().fp32_peak_tflops * 1e12,
        kDramShare * current_device().dram_bandwidth_gbs * 1e9, kLaunchSeconds);
  }
  return plan;
}

template <class T>
void launch_tile(const sgemm::Problem& q, const sgemm::SplitK& split, const float* A,
                 const float* B, int ldb, float* C, cudaStream_t stream) {
  sgemm::launch_split_k(q, split, kernel_for<T>(q, ldb), T::kBlockM, T::kBlockN, T::kThreads,
                        T::kSmemBytes, A, B, ldb, C, stream);
}

// The workspace: the split-K slices first (launch_split_k's), then the padded copies of A and B.
size_t workspace_for(const sgemm::Problem& p, const Padding& pad, const sgemm::SplitK& split) {
  return whole_256(sgemm::split_k_workspace_bytes(kernel_problem(p, pad), split)) +
         (pad.a ? whole_256(padded_a_bytes(p)) : 0) + (pad.b ? padded_b_bytes(p) : 0);
}

void launch_3xtf32(const sgemm::Problem& p, const float* A, const float* B, float* C,
                   cudaStream_t stream) {
  Padding pad = padding_for(p);
  sgemm::Problem q = kernel_problem(p, pad);
  Plan plan = plan_for(q);
  // The harness allocates workspace_bytes(p); should it hold less, no copies and one pass over K.
  if (workspace_for(p, pad, plan.split) > p.workspace_size) {
    pad = Padding{};
    q = p;
    plan = plan_for(q);
    plan.split = {1, p.k};
  }
  int ldb = p.n;
  if (pad.b) {
    float* padded = static_cast<float*>(p.workspace) +
                    whole_256(sgemm::split_k_workspace_bytes(q, plan.split)) / sizeof(float);
    if (pad.a) {
      launch_pad_copy(p.m, p.k, A, p.m, q.k, padded, stream);
      A = padded;
      padded += whole_256(padded_a_bytes(p)) / sizeof(float);
    }
    ldb = padded_ld(p.n);
    launch_pad_copy(p.k, p.n, B, q.k, ldb, padded, stream);
    B = padded;
  }
  switch (plan.tile) {
    case Which::kSmall:
      launch_tile<SmallTile>(q, plan.split, A, B, ldb, C, stream);
      break;
    case Which::kNarrow:
      launch_tile<NarrowTile>(q, plan.split, A, B, ldb, C, stream);
      break;
    default:
      launch_tile<MainTile>(q, plan.split, A, B, ldb, C, stream);
  }
}

size_t workspace_bytes(const sgemm::Problem& p) {
  const Padding pad = padding_for(p);
  return workspace_for(p, pad, plan_for(kernel_problem(p, pad)).split);
}

// The tile the launcher takes for this problem, for the harness's traffic model.
sgemm::TileSize tile_for(const sgemm::Problem& p) {
  switch (plan_for(kernel_problem(p, padding_for(p))).tile) {
    case Which::kSmall:
      return {SmallTile::kBlockM, SmallTile::kBlockN};
    case Which::kNarrow:
      return {NarrowTile::kBlockM, NarrowTile::kBlockN};
    default:
      return {MainTile::kBlockM, MainTile::kBlockN};
  }
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
  sgemm::Chapter chapter{"09_3xtf32",   title.c_str(), &launch_3xtf32,
                         kTile.block_m, kTile.block_n, &tile_for};
  chapter.workspace_bytes = &workspace_bytes;
  return sgemm::run_chapter(chapter, argc, argv);
}
