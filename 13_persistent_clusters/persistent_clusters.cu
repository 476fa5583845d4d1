// SPDX-License-Identifier: MIT
// SGEMM tutorial, chapter 13: persistent blocks in clusters (TF32).
//
//   00 naive -> 01 coalescing -> 02 smem tiling -> 03 thread tiling -> 04 vectorized
//   -> 05 bank conflicts -> 06 double buffer -> 07 any shape -> 08 tensor cores -> 09 3xTF32
//   -> 10 wgmma -> 11 TMA -> 12 warp specialization -> [13 persistent clusters]
//
// Chapter 12's block computes one tile and exits; the GPU starts the next block in its place, and
// the order in which tiles start is the hardware's. This chapter decides where the work goes:
// - Persistent blocks: as many as the GPU holds at once, each walking a list of work units (tiles
//   of C, or K slices of them). The producer starts the next unit's copies while the consumers
//   still store the last one, so the ring never drains between tiles.
// - A tile order that keeps A and B in L2: units go out in groups of kGroupRows tile rows, column
//   by column inside a group, so the blocks running at once share few rows of A and columns of B.
// - Clusters of two blocks on neighbouring SMs computing two tiles side by side: they need the same
//   rows of A, and each block's producer copies half of A's box into both blocks' shared memory at
//   once (TMA multicast). A consumer warp hands a stage back to both producers (a remote mbarrier
//   arrival), since both write into it.
// - Chapter 07's lesson on Hopper, the launcher's choice of tile and K slices: where C has few
//   rows, a tile of 128 or 64 rows (wgmma's N), so a decode step multiplies few rows of zeros;
//   where N fits one tile, unpaired blocks; where the big tiles cannot fill the GPU, the tile that
//   the launcher's model (shared-memory traffic, the GPU's data sheet) says is fastest, each with
//   K slices (common/split_k.h's plan) as work units of their own, then the deterministic
//   reduction.
// - A rounded to TF32 by the copy engine as it copies (A's tensor map says TFLOAT32): no pass
//   before the GEMM (12's), no thread rounds A. The copy engine rounds the last 4096 floats below
//   FLT_MAX up to Inf; a tile whose sums this made Inf or NaN is computed again on the CUDA cores.
// Unchanged from 12: the producer and consumer warpgroups, setmaxnreg, C^T = B^T A^T with B^T from
// registers, the 256 x 128 x 32 tile and its 4-stage ring, the epilogue (stores from registers; the
// one through shared memory and TMA stores, SGEMM_EPILOGUE=1, measured slower).
// Precision contract: TF32 (verified with a TF32 tolerance, timed against cuBLAS
// CUBLAS_COMPUTE_32F_FAST_TF32).
// Limits: compute capability 9.0 with code built for sm_90a; elsewhere one error: line, exit 3.
// Example: build/bin/13_persistent_clusters --size 4096

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include <cuda_runtime.h>

#include "common/cluster.h"
#include "common/grid.h"
#include "common/harness.h"
#include "common/roofline.h"
#include "common/split_k.h"
#include "common/tf32.h"
#include "common/tma.h"
#include "common/wgmma.h"

// Tile (BM, consumer warpgroups, STAGES), as in chapter 12. README.md, "Parameters and limits".
#ifndef SGEMM_TILE
#define SGEMM_TILE 256, 2, 4
#endif
// The switches of README.md's attribution, each one part of the chapter:
// SGEMM_PERSISTENT 1: one block per SM slot walks many units; 0: one block per unit (chapter 12).
#ifndef SGEMM_PERSISTENT
#define SGEMM_PERSISTENT 1
#endif
// SGEMM_GROUP_ROWS: tile rows per group of the tile order; 1 is row after row.
#ifndef SGEMM_GROUP_ROWS
#define SGEMM_GROUP_ROWS 8
#endif
// SGEMM_CLUSTER: blocks per cluster sharing A's box by multicast (1 or 2).
#ifndef SGEMM_CLUSTER
#define SGEMM_CLUSTER 2
#endif
// SGEMM_MULTICAST 1: each block of a cluster copies its share of A into both; 0: each block
// copies all of A into its own stage (the cluster without multicast).
#ifndef SGEMM_MULTICAST
#define SGEMM_MULTICAST 1
#endif
// SGEMM_ROUND_A: where A is rounded to TF32: 0 a pass before the GEMM (chapters 11, 12), 1 in
// shared memory by the producer's idle warps, 2 by the copy engine as it copies (A's tensor map
// says TFLOAT32), with the tiles where that overflows computed again (recompute_tile).
#ifndef SGEMM_ROUND_A
#define SGEMM_ROUND_A 2
#endif
// SGEMM_NARROW 1: where N fits one tile, unpaired blocks, and a consumer warpgroup whose columns
// all lie past N skips its wgmma; 0: pairs everywhere, every consumer multiplies.
#ifndef SGEMM_NARROW
#define SGEMM_NARROW 1
#endif
// SGEMM_SHORT_ROWS 1: the 64-row tile where C has at most 64 rows, the 128-row one where it has at
// most 128; 0: the tile of chapter 07's choice (plan_tiles) everywhere.
#ifndef SGEMM_SHORT_ROWS
#define SGEMM_SHORT_ROWS 1
#endif
// SGEMM_PLAN_MODEL 1: where the big tiles cannot fill the GPU, the tile (of three, each with its K
// slices) that the launcher's model says takes least time (plan_clocks); 0: chapter 07's rule
// between the big and the 128-row tile (common/split_k.h, plan_tiles).
#ifndef SGEMM_PLAN_MODEL
#define SGEMM_PLAN_MODEL 1
#endif
// SGEMM_SPLIT_K 1: K slices where a tile's units cannot fill the GPU; 0: never.
#ifndef SGEMM_SPLIT_K
#define SGEMM_SPLIT_K 1
#endif
// SGEMM_EPILOGUE 0: the consumers store C from registers straight to global memory (chapter 12's);
// 1: through shared memory, a TMA store per box, which the copy engine carries out while they go
// on to the next unit. 1 measured 0.5 % slower (README.md, "Attribution"), so 0 stays.
#ifndef SGEMM_EPILOGUE
#define SGEMM_EPILOGUE 0
#endif
// SGEMM_ROUND_TF32 as in chapter 10: 1 sgemm::tf32_operand, 0 no rounding (built only to price it).
#ifndef SGEMM_ROUND_TF32
#define SGEMM_ROUND_TF32 1
#endif

namespace {

using sgemm::ceil_div;

// The producer warpgroup's warps other than the one that issues the copies: with kInShared they
// round A in shared memory.
constexpr int kRoundingWarps = 3;

// Who rounds the operands to TF32 (README.md, "Where A is rounded"), a kernel's template argument.
// kByPass: a pass writes A rounded before the GEMM, the consumers round B^T in registers (12).
// kInShared: the producer's three idle warps round each stage of A where it landed; B^T as 12.
// kByCopyEngine: A's tensor map says TFLOAT32, and TMA rounds every element of A to the nearest
//   TF32 value as it copies: no thread rounds A. B^T stays rounded in registers, as in 12 (the
//   copy engine rounding B too measured the same, and with no instruction between the fragment
//   loads and the wgmma ptxas serializes the 128-row tile's wgmma, C7513). Like cvt.rna (and
//   cuBLAS TF32) the copy engine rounds the last 4096 floats below FLT_MAX up to Inf, so a tile
//   whose sums are not all finite is computed again on the CUDA cores (recompute_tile).
// kNone: nothing is rounded, the tensor cores truncate (SGEMM_ROUND_TF32=0, built only to price
//   the rounding; it breaks the TF32 contract).
enum Rounding { kByPass, kInShared, kByCopyEngine, kNone };
constexpr int kRounding = !SGEMM_ROUND_TF32    ? kNone
                          : SGEMM_ROUND_A == 0 ? kByPass
                          : SGEMM_ROUND_A == 1 ? kInShared
                                               : kByCopyEngine;

template <int kBlockM_, int kConsumers_, int kStages_, int kCluster_ = SGEMM_CLUSTER>
struct PersistentTile {
  static constexpr int kBlockM = kBlockM_;        // rows of C per tile
  static constexpr int kConsumers = kConsumers_;  // consumer warpgroups
  static constexpr int kWgmmaM = 64;              // wgmma.m64n128k8: columns of C (rows of C^T) ...
  static constexpr int kBlockN = kWgmmaM * kConsumers;  // columns of C per tile
  static constexpr int kBlockK = 32;  // depth of one K tile: a 128-byte row of floats
  static constexpr int kWgmmaN = kBlockM < 128 ? kBlockM : 128;  // ... rows of C (64 or 128) ...
  static constexpr int kWgmmaK = 8;                              // ... and k per instruction
  static constexpr int kRowBlocks = kBlockM / kWgmmaN;
  static constexpr int kAccumulators = kWgmmaN / 2;  // per thread and row block
  static constexpr int kKSteps = kBlockK / kWgmmaK;
  static constexpr int kThreads = 128 * (1 + kConsumers);  // the producer, then the consumers
  static constexpr int kCluster = kCluster_;               // blocks sharing A
  static constexpr int kGroupRows = SGEMM_GROUP_ROWS;

  // A stage as in 12: sA (kBlockM rows of 128 bytes), then B's 32 x 32 boxes. Each block of a
  // cluster copies kBoxRowsA of A's rows into every block.
  static constexpr int kBoxRowsA = SGEMM_MULTICAST ? kBlockM / kCluster : kBlockM;
  static constexpr int kBoxN = 32;
  static constexpr int kBoxesB = kBlockN / kBoxN;
  static constexpr int kSizeA = kBlockM * kBlockK;
  static constexpr int kSizeBoxB = kBlockK * kBoxN;
  static constexpr int kStageFloats = kSizeA + kBlockN * kBlockK;
  static constexpr int kStageBytes = kStageFloats * static_cast<int>(sizeof(float));
  // The epilogue through shared memory: each consumer stores C kStoreRows rows at a time, from two
  // buffers in turn, each as two 32-column boxes laid out as TMA reads them (the 128-byte swizzle).
  static constexpr int kStoreRows = 32;
  static constexpr int kStoreBoxFloats = kStoreRows * kBoxN;
  static constexpr int kStoreBufferFloats = kWgmmaM / kBoxN * kStoreBoxFloats;
  static constexpr int kStoreBytes =
      SGEMM_EPILOGUE ? kConsumers * 2 * kStoreBufferFloats * static_cast<int>(sizeof(float)) : 0;
  // The ring: kStages_, or one stage fewer where the store buffers would not fit beside them all
  // (with SGEMM_EPILOGUE=1, the 64-row tile's ninth).
  static constexpr int kStages =
      kStages_ * kStageBytes + kStoreBytes + 1024 > 227 * 1024 ? kStages_ - 1 : kStages_;
  static constexpr int kSmemBytes = kStages * kStageBytes + kStoreBytes + 1024;

  // setmaxnreg as in chapter 12.
  static constexpr int kLaunchRegisters = (65536 / kThreads > 255 ? 255 : 65536 / kThreads) / 8 * 8;
  static constexpr int kProducerRegisters = 40;
  static constexpr int kConsumerRegisters =
      ((1 + kConsumers) * kLaunchRegisters - kProducerRegisters) / kConsumers / 8 * 8 > 240
          ? 240
          : ((1 + kConsumers) * kLaunchRegisters - kProducerRegisters) / kConsumers / 8 * 8;

  static_assert(kProducerRegisters + kConsumers * kConsumerRegisters <=
                    (1 + kConsumers) * kLaunchRegisters,
                "the consumers take no more registers than the producer hands back");
  static_assert(kCluster == 1 || kCluster == 2, "one block, or a pair sharing A");
  static_assert(kBoxRowsA % 8 == 0, "each share of A is whole 1024-byte swizzle atoms");
  static_assert(kBlockM % kWgmmaN == 0, "whole wgmma tiles per block");
  static_assert(kWgmmaN % kStoreRows == 0, "whole store chunks per wgmma tile");
  static_assert(kBlockM <= 256, "a TMA box is at most 256 rows");
  static_assert(kStageBytes % 1024 == 0, "every stage starts on 1024 bytes");
  static_assert(kStages >= 2, "a ring");
  static_assert(kGroupRows >= 1, "a group holds at least one tile row");
  static_assert(kSmemBytes <= 227 * 1024, "shared memory per block is limited to 227 KB");
};

// The tiles the launcher picks from (with_tile). The big one:
using MainTile = PersistentTile<SGEMM_TILE>;
// Half its rows, for C of at most 128 rows (half as many rows of zeros), and where the big tiles
// leave SMs idle.
using SmallTile = PersistentTile<128, 2, 6>;
// Where C has one column of tiles (N <= 128), the second block of every pair would compute only
// zeros: half the GPU. Such problems run unpaired blocks.
using SoloTile = PersistentTile<SGEMM_TILE, 1>;
// Where C has at most 64 rows (a decode step: M = tokens), a 64-row tile (wgmma's N = 64): a
// quarter of the big tile's rows of zeros. Its stage is 24 KiB, so nine fit (eight beside the
// epilogue's buffers, SGEMM_EPILOGUE=1); unpaired, since A's share of a stage is a third of it and
// the pair would save little.
using ShortTile = PersistentTile<64, 2, 9, 1>;

// The work of one launch: tiles_m x tiles_n tiles of C, each cut into `splits` K slices of
// k_slice. A unit is a cluster's: kCluster tiles side by side in one tile row (one K slice of
// each). Units are numbered slice by slice; inside a slice, by groups of group_rows tile rows,
// and inside a group column after column (chapter 01's grouped order, in tiles).
struct Schedule {
  int tiles_m, pairs_n;  // tile rows; cluster-wide columns of tiles (ceil(tiles_n / kCluster))
  int splits, k_slice;
  int group_rows;

  __host__ __device__ int units() const { return tiles_m * pairs_n * splits; }

  struct Unit {
    int tile_m, pair_n, slice;
  };
  __device__ Unit unit(int u) const {
    const int per_slice = tiles_m * pairs_n;
    Unit w;
    w.slice = u / per_slice;
    const int r = u % per_slice;
    const int first_row = r / (group_rows * pairs_n) * group_rows;
    const int rows = tiles_m - first_row < group_rows ? tiles_m - first_row : group_rows;
    const int inside = r - first_row * pairs_n;
    w.tile_m = first_row + inside % rows;
    w.pair_n = inside / rows;
    return w;
  }
};

// B^T's register operand: rounded here, unless nothing is rounded.
template <int kMode>
__device__ __forceinline__ uint32_t round_operand(float x) {
  if constexpr (kMode == kNone) return __float_as_uint(x);
  return sgemm::tf32_operand(x);
}

// Where a lane's register operand lies in a stage's B boxes: chapter 11, make_fragment_plan.
struct FragmentPlan {
  int lo;
  int hi;
  int col;
};

template <class T>
__device__ __forceinline__ FragmentPlan make_fragment_plan(int consumer, int warp, int g, int t) {
  const int h = g / 2;
  const int q = 4 * (h % 2) + h / 2 + 2 * (warp % 2);
  const int box = 2 * consumer + warp / 2;
  const int base = box * T::kSizeBoxB + 2 * (g % 2);
  FragmentPlan plan;
  plan.lo = base + t * T::kBoxN + 4 * (q ^ t);
  plan.hi = base + (t + 4) * T::kBoxN + 4 * (q ^ (t + 4));
  plan.col = T::kBoxN * box + 4 * q + 2 * (g % 2);
  return plan;
}

// Where a unit puts this block (rank in its cluster): its tile's first row and column of C, and
// its slice's K tiles [k_begin, k_begin + k_tiles * kBlockK), the last one cut by k.
struct UnitPlace {
  int block_row, block_col, slice, k_begin, k_tiles;
};

template <class T>
__device__ __forceinline__ UnitPlace place_of(const Schedule& s, int u, uint32_t rank, int k) {
  const Schedule::Unit w = s.unit(u);
  UnitPlace place;
  place.block_row = w.tile_m * T::kBlockM;
  place.block_col = (w.pair_n * T::kCluster + static_cast<int>(rank)) * T::kBlockN;
  place.slice = w.slice;
  place.k_begin = w.slice * s.k_slice;
  const int k_end = k - place.k_begin < s.k_slice ? k : place.k_begin + s.k_slice;
  place.k_tiles = ceil_div(k_end - place.k_begin, T::kBlockK);
  return place;
}

// Whether `p` holds in any thread of the consumer warpgroups (barrier 1; barrier 0 is
// __syncthreads', which the producer warpgroup would have to join).
template <class T>
__device__ __forceinline__ bool consumers_any(bool p) {
  uint32_t any;
  asm volatile(
      "{\n.reg .pred p, q;\nsetp.ne.u32 p, %1, 0;\nbar.red.or.pred q, 1, %2, p;\n"
      "selp.u32 %0, 1, 0, q;\n}\n"
      : "=r"(any)
      : "r"(static_cast<uint32_t>(p)), "n"(128 * T::kConsumers)
      : "memory");
  // The same in every thread, but the compiler cannot tell from the asm: through a shuffle it
  // knows, and a branch on it stays uniform (as `idle` in the kernel, and for the same reason).
  return __shfl_sync(0xffffffffu, any, 0) != 0;
}

// The 128 threads of consumer warpgroup `consumer` wait for each other (barrier 2 + consumer).
__device__ __forceinline__ void consumer_sync(int consumer) {
  asm volatile("bar.sync %0, 128;\n" ::"r"(2 + consumer) : "memory");
}

// The copy engine rounds like cvt.rna: a finite element of A within 2^-11 of FLT_MAX becomes Inf,
// and the sums it enters Inf or NaN, where TF32's contract wants the sums of the operands rounded
// without overflow. This thread's part of the tile again, on the CUDA cores, stored as the
// epilogue stores it: each operand rounded by sgemm::tf32_value (which truncates such an element
// instead), the products added in FP32 in the order of k. Slow (no tensor core, no shared memory),
// and only for tiles of such inputs; on any other input the check that leads here costs one
// compare per sum. Not inlined: the accumulators of the wgmma stay out of it.
template <class T>
__device__ __noinline__ void recompute_tile(const float* __restrict__ A,
                                            const float* __restrict__ B, int m, int n, int k,
                                            const UnitPlace& place, int col, int t, float alpha,
                                            float beta, float* out) {
  if (col >= n) return;
  const int k_end = k < place.k_begin + place.k_tiles * T::kBlockK
                        ? k
                        : place.k_begin + place.k_tiles * T::kBlockK;
  const bool second = col + 1 < n;
  // Eight of this thread's rows at a time (rows 8j + 2t + e of the epilogue, j in four
  // consecutive values), each against its two columns: 16 independent sums, 10 loads per 16 FMA.
  for (int i = 0; i < T::kRowBlocks; ++i) {
    for (int j0 = 0; j0 < T::kWgmmaN / 8; j0 += 4) {
      int rows[8];
      float sums[8][2] = {};
      for (int r = 0; r < 8; ++r) {
        const int row = place.block_row + i * T::kWgmmaN + 8 * (j0 + r / 2) + 2 * t + r % 2;
        rows[r] = row < m ? row : m - 1;  // a row past M is read as row M - 1, and not stored
      }
      for (int kk = place.k_begin; kk < k_end; ++kk) {
        const float* b = B + static_cast<int64_t>(kk) * n + col;
        const float b0 = sgemm::tf32_value(b[0]);
        const float b1 = second ? sgemm::tf32_value(b[1]) : 0.0f;
#pragma unroll
        for (int r = 0; r < 8; ++r) {
          const float x = sgemm::tf32_value(A[static_cast<int64_t>(rows[r]) * k + kk]);
          sums[r][0] = fmaf(x, b0, sums[r][0]);
          sums[r][1] = fmaf(x, b1, sums[r][1]);
        }
      }
      for (int r = 0; r < 8; ++r) {
        const int row = place.block_row + i * T::kWgmmaN + 8 * (j0 + r / 2) + 2 * t + r % 2;
        if (row >= m) continue;
        for (int c = 0; c < 2 && col + c < n; ++c) {
          float* o = out + static_cast<int64_t>(row) * n + col + c;
          *o = beta != 0.0f ? alpha * sums[r][c] + beta * *o : alpha * sums[r][c];
        }
      }
    }
  }
}

// How the epilogue stores C: kScalar one float at a time (N odd), kPairs two at a time (N even),
// from registers to global memory; kByTma through shared memory, a TMA store per box (map_c: N a
// multiple of 4, C 16-byte aligned).
enum Store { kScalar, kPairs, kByTma };

// gridDim.x blocks (a multiple of kCluster) walk the schedule's units: cluster c takes units c,
// c + clusters, ... . Slice z of the units writes C + z * c_slice (the launcher passes the split-K
// workspace, alpha = 1 and beta = 0 when there are several slices); with kByTma, map_c holds the
// same slices.
// With kByCopyEngine, A and B are also read as they are (A dense, M x K; B dense, K x N) by a tile
// whose sums the copy engine's rounding made Inf or NaN (recompute_tile).
template <class T, int kStore, int kMode>
__global__ void __launch_bounds__(T::kThreads, 1)
    sgemm_persistent(const __grid_constant__ CUtensorMap map_a,
                     const __grid_constant__ CUtensorMap map_b,
                     const __grid_constant__ CUtensorMap map_c, int m, int n, int k,
                     const Schedule schedule, float alpha, float beta, float* __restrict__ C,
                     int64_t c_slice, const float* __restrict__ A, const float* __restrict__ B) {
#if !SGEMM_SM90A_BUILT
  __trap();  // built without sm_90a code: the harness exits 3 before any launch (unsupported)
#endif
  constexpr bool kRoundInShared = kMode == kInShared;
  extern __shared__ float4 smem_raw[];
  // Per stage: full (its bytes landed: one arrival, this block's producer's, plus the byte count,
  // which the other block's multicast adds to) and empty (every consumer warp of every block of
  // the cluster is done with it: both producers write into it).
  __shared__ uint64_t full[T::kStages], empty[T::kStages];
  // With kRoundInShared, A's part of a stage rounded to TF32 in place (one arrival per rounding
  // warp): the consumers wait for this instead of full.
  __shared__ uint64_t rounded[T::kStages];
  const uint32_t raw_base = sgemm::smem_address(smem_raw);
  const uint32_t pad = (1024 - raw_base % 1024) % 1024;
  float* const smem = reinterpret_cast<float*>(reinterpret_cast<char*>(smem_raw) + pad);
  const uint32_t smem_base = raw_base + pad;

  const int tid = threadIdx.x;
  const int warpgroup = tid / 128;
  const int warp = (tid % 128) / 32;  // inside the warpgroup
  const int lane = tid % 32;
  const uint32_t rank = T::kCluster > 1 ? sgemm::cluster_rank() : 0;
  const int first_unit = blockIdx.x / T::kCluster;
  const int unit_step = gridDim.x / T::kCluster;
  const int units = schedule.units();

  if (tid == 0) {
    for (int s = 0; s < T::kStages; ++s) {
      sgemm::mbarrier_init(&full[s], 1);
      sgemm::mbarrier_init(&rounded[s], kRoundingWarps);
      sgemm::mbarrier_init(&empty[s], 4 * T::kConsumers * T::kCluster);
    }
    sgemm::fence_mbarrier_init();
  }
  // The other block's producer may copy into this block's stages (and its consumers arrive on this
  // block's barriers) only once they are initialized.
  if constexpr (T::kCluster > 1) {
    sgemm::cluster_sync();
  } else {
    __syncthreads();
  }

  if (warpgroup == 0) {
    // ---- The producer warpgroup: one thread issues every unit's copies, into one ring ----
    sgemm::setmaxnreg_dec<T::kProducerRegisters>();
    if (tid == 0) {
      int it = 0;  // K tiles copied so far, over all units: stage it % kStages, use it / kStages
      for (int u = first_unit; u < units; u += unit_step) {
        const UnitPlace place = place_of<T>(schedule, u, rank, k);
        for (int kt = 0; kt < place.k_tiles; ++kt, ++it) {
          const int stage = it % T::kStages;
          if (it >= T::kStages) {
            sgemm::mbarrier_wait(&empty[stage], (it / T::kStages - 1) % 2);
          }
          float* sA = smem + stage * T::kStageFloats;
          const int k0 = place.k_begin + kt * T::kBlockK;
          sgemm::mbarrier_arrive_expect_tx(&full[stage], T::kStageBytes);
          if constexpr (T::kCluster > 1 && SGEMM_MULTICAST) {
            // This block's share of A's rows, into the same place in both blocks.
            sgemm::tma_load_2d_multicast(sA + rank * T::kBoxRowsA * T::kBlockK, &map_a,
                                         place.block_row + static_cast<int>(rank) * T::kBoxRowsA,
                                         k0, &full[stage], (1u << T::kCluster) - 1);
          } else {
            sgemm::tma_load_2d(sA, &map_a, place.block_row, k0, &full[stage]);
          }
#pragma unroll
          for (int j = 0; j < T::kBoxesB; ++j) {
            sgemm::tma_load_2d(sA + T::kSizeA + j * T::kSizeBoxB, &map_b, k0,
                               place.block_col + j * T::kBoxN, &full[stage]);
          }
        }
      }
    } else if (kRoundInShared && warp > 0) {
      // The other three warps round A's rows of each stage to TF32 where they landed (the
      // swizzle moves whole float4s, so any float4 of the box is rounded as it is), then make
      // their writes visible to wgmma (the async proxy) and hand the stage to the consumers.
      int it = 0;
      for (int u = first_unit; u < units; u += unit_step) {
        const int k_tiles = place_of<T>(schedule, u, rank, k).k_tiles;
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int stage = it % T::kStages;
          sgemm::mbarrier_wait(&full[stage], (it / T::kStages) % 2);
          float4* sA = reinterpret_cast<float4*>(smem + stage * T::kStageFloats);
#pragma unroll 4
          for (int i = tid - 32; i < T::kSizeA / 4; i += 32 * kRoundingWarps) {
            const float4 v = sA[i];
            sA[i] = make_float4(sgemm::tf32_value(v.x), sgemm::tf32_value(v.y),
                                sgemm::tf32_value(v.z), sgemm::tf32_value(v.w));
          }
          sgemm::fence_proxy_async();
          __syncwarp();
          if (lane == 0) sgemm::mbarrier_arrive(&rounded[stage]);
        }
      }
    }
  } else {
    // ---- The consumer warpgroups ----
    sgemm::setmaxnreg_inc<T::kConsumerRegisters>();
    const int consumer = warpgroup - 1;
    const int g = lane / 4;
    const int t = lane % 4;
    const FragmentPlan frag_plan = make_fragment_plan<T>(consumer, warp, g, t);
    float acc[T::kRowBlocks][T::kAccumulators];
    uint32_t frag[2][T::kKSteps][4];
    // kByTma: this consumer's two store buffers, and the chunks it has stored so far (chunk c
    // goes through buffer c % 2). Its first thread issues the stores and waits for them.
    float* const store_buffers =
        smem + T::kStages * T::kStageFloats + consumer * 2 * T::kStoreBufferFloats;
    int chunks = 0;
    const bool store_leader = tid % 128 == 0;

    // A stage goes back to the producers of the cluster: one arrival per warp on each block's
    // empty barrier (lane r arrives on rank r's).
    auto release = [&](int stage) {
      if constexpr (T::kCluster > 1) {
        if (lane < T::kCluster) sgemm::mbarrier_arrive_cluster(&empty[stage], lane);
      } else {
        if (lane == 0) sgemm::mbarrier_arrive(&empty[stage]);
      }
    };

    auto step = [&](int it, bool first, auto parity) {
      constexpr int P = decltype(parity)::value;
      const int stage = it % T::kStages;
      float* sA = smem + stage * T::kStageFloats;
      sgemm::mbarrier_wait(kRoundInShared ? &rounded[stage] : &full[stage], (it / T::kStages) % 2);
      const float* b_stage = sA + T::kSizeA;
#pragma unroll
      for (int s = 0; s < T::kKSteps; ++s) {
        const float2 lo =
            *reinterpret_cast<const float2*>(b_stage + frag_plan.lo + 8 * s * T::kBoxN);
        const float2 hi =
            *reinterpret_cast<const float2*>(b_stage + frag_plan.hi + 8 * s * T::kBoxN);
        frag[P][s][0] = round_operand<kMode>(lo.x);
        frag[P][s][1] = round_operand<kMode>(lo.y);
        frag[P][s][2] = round_operand<kMode>(hi.x);
        frag[P][s][3] = round_operand<kMode>(hi.y);
      }
      const uint64_t desc =
          sgemm::smem_descriptor_sw128(smem_base + stage * T::kStageFloats * sizeof(float));
      uint64_t descs[T::kKSteps][T::kRowBlocks];
#pragma unroll
      for (int s = 0; s < T::kKSteps; ++s) {
#pragma unroll
        for (int i = 0; i < T::kRowBlocks; ++i) {
          descs[s][i] = desc + (i * T::kWgmmaN * T::kBlockK + T::kWgmmaK * s) * sizeof(float) / 16;
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
          sgemm::wgmma_tf32<T::kWgmmaN>(acc[i], frag[P][s], descs[s][i]);
        }
      }
      sgemm::wgmma_commit();
      // The previous K tile's wgmma are done (this one's may run on): its stage goes back.
      sgemm::wgmma_wait<1>();
      if (!first) release((it - 1) % T::kStages);
    };

    int it = 0;  // K tiles consumed so far, over all units (the producer's count)
    for (int u = first_unit; u < units; u += unit_step) {
      const UnitPlace place = place_of<T>(schedule, u, rank, k);
#pragma unroll
      for (int i = 0; i < T::kRowBlocks; ++i) {
#pragma unroll
        for (int e = 0; e < T::kAccumulators; ++e) acc[i][e] = 0.0f;
      }
      // The unit's K tiles are the ring's uses first .. first + k_tiles - 1 on either path below.
      const int first = it;
      // Whether every column of this warpgroup lies past N (N narrower than the tile). The same
      // in every lane, but the compiler cannot tell from `consumer`: without the shuffle the
      // branch counts as divergent, and the stage descriptors below leave the uniform registers
      // (an R2UR and 64-bit adds per wgmma, 30 % more instructions at 4096^3).
      const bool idle =
          __shfl_sync(0xffffffffu, SGEMM_NARROW && place.block_col + consumer * T::kWgmmaM >= n, 0);
      if (idle) {
        // Nothing to multiply or store. It still takes each stage and hands it back, as the
        // producers count on, and its zero sums join the check below.
        for (int use = first; use < first + place.k_tiles; ++use) {
          sgemm::mbarrier_wait(
              kRoundInShared ? &rounded[use % T::kStages] : &full[use % T::kStages],
              (use / T::kStages) % 2);
          release(use % T::kStages);
        }
      } else {
        for (int kt = 0; kt < place.k_tiles; kt += 2) {
          step(first + kt, kt == 0, std::integral_constant<int, 0>{});
          if (kt + 1 < place.k_tiles) step(first + kt + 1, false, std::integral_constant<int, 1>{});
        }
        sgemm::wgmma_wait<0>();
        release((first + place.k_tiles - 1) % T::kStages);
      }
      it = first + place.k_tiles;
#pragma unroll
      for (int i = 0; i < T::kRowBlocks; ++i) sgemm::pin(acc[i]);
      if constexpr (kMode == kByCopyEngine) {
        // An element the copy engine rounded up to Inf makes its sums Inf or NaN: the consumers
        // compute this tile again without it (a sum that overflows on its own comes out the same).
        bool finite = true;
#pragma unroll
        for (int i = 0; i < T::kRowBlocks; ++i) {
#pragma unroll
          for (int e = 0; e < T::kAccumulators; ++e) finite &= isfinite(acc[i][e]);
        }
        if (consumers_any<T>(!finite)) {
          recompute_tile<T>(A, B, m, n, k, place, place.block_col + frag_plan.col, t, alpha, beta,
                            C + place.slice * c_slice);
          continue;
        }
      }

      // Epilogue, into this unit's slice. Meanwhile the producer fills the ring with the next
      // unit's first K tiles.
      float* const out = C + place.slice * c_slice;
      const int col = place.block_col + frag_plan.col;
      if constexpr (kStore == kByTma) {
        if (idle) continue;  // all its columns lie past N: nothing to store
        // kStoreRows rows at a time: each thread writes its sums into the chunk's buffer where
        // the box's swizzle puts them (two 8-byte stores per bank row of a warp: no conflicts
        // beyond the two a warp's 256 bytes need), the leader sends the two boxes to C and the
        // consumers go on, to the next chunk or the next unit's K loop, while the copy engine
        // writes them. Before a buffer is written again its store must have read it: the leader
        // waits for its last store before the barrier that starts the next chunk's stores.
        const int box_col = frag_plan.col % T::kBoxN;  // this thread's columns inside its box
#pragma unroll
        for (int i = 0; i < T::kRowBlocks; ++i) {
#pragma unroll
          for (int chunk = 0; chunk < T::kWgmmaN / T::kStoreRows; ++chunk, ++chunks) {
            float* const buffer = store_buffers + chunks % 2 * T::kStoreBufferFloats;
            float* const box = buffer + warp / 2 * T::kStoreBoxFloats;
#pragma unroll
            for (int jj = 0; jj < T::kStoreRows / 8; ++jj) {
              const int j = chunk * T::kStoreRows / 8 + jj;
#pragma unroll
              for (int e = 0; e < 2; ++e) {
                const int r = 8 * jj + 2 * t + e;  // row inside the chunk
                float2 o = make_float2(alpha * acc[i][4 * j + e], alpha * acc[i][4 * j + e + 2]);
                const int row = place.block_row + i * T::kWgmmaN + 8 * j + 2 * t + e;
                if (beta != 0.0f && row < m && col < n) {
                  const float2 old =
                      *reinterpret_cast<const float2*>(out + static_cast<int64_t>(row) * n + col);
                  o.x += beta * old.x;
                  o.y += beta * old.y;
                }
                *reinterpret_cast<float2*>(box + r * T::kBoxN + 4 * ((box_col / 4) ^ (r % 8)) +
                                           box_col % 4) = o;
              }
            }
            sgemm::fence_proxy_async();
            sgemm::bulk_wait_read<0>();
            consumer_sync(consumer);
            const int row0 = place.block_row + i * T::kWgmmaN + chunk * T::kStoreRows;
#pragma unroll
            for (int b = 0; b < T::kWgmmaM / T::kBoxN; ++b) {
              sgemm::tma_store_3d(store_leader, &map_c, buffer + b * T::kStoreBoxFloats,
                                  place.slice, row0,
                                  place.block_col + consumer * T::kWgmmaM + b * T::kBoxN);
            }
            sgemm::bulk_commit();
          }
        }
      } else {
#pragma unroll
        for (int i = 0; i < T::kRowBlocks; ++i) {
#pragma unroll
          for (int j = 0; j < T::kWgmmaN / 8; ++j) {
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const int row = place.block_row + i * T::kWgmmaN + 8 * j + 2 * t + e;
              if (row >= m || col >= n) continue;
              float* c = out + static_cast<int64_t>(row) * n + col;
              const float v0 = alpha * acc[i][4 * j + e];
              const float v1 = alpha * acc[i][4 * j + e + 2];
              if (kStore == kPairs) {
                float2 o = make_float2(v0, v1);
                if (beta != 0.0f) {
                  const float2 old = *reinterpret_cast<const float2*>(c);
                  o.x += beta * old.x;
                  o.y += beta * old.y;
                }
                *reinterpret_cast<float2*>(c) = o;
              } else {
                c[0] = beta != 0.0f ? v0 + beta * c[0] : v0;
                if (col + 1 < n) c[1] = beta != 0.0f ? v1 + beta * c[1] : v1;
              }
            }
          }
        }
      }
    }
  }
  // A block leaves only when its stores are written, and the other block of its cluster is done
  // arriving on its barriers and copying into its stages.
  if (kStore == kByTma && warpgroup > 0 && tid % 128 == 0) sgemm::bulk_wait<0>();
  if constexpr (T::kCluster > 1) sgemm::cluster_sync();
}

using Kernel = void(CUtensorMap, CUtensorMap, CUtensorMap, int, int, int, Schedule, float, float,
                    float*, int64_t, const float*, const float*);

// The kernels of tile T, one per Store (kByTma built only where SGEMM_EPILOGUE asks for it).
template <class T>
constexpr Kernel* tma_store_kernel() {
  if constexpr (SGEMM_EPILOGUE) return &sgemm_persistent<T, kByTma, kRounding>;
  return &sgemm_persistent<T, kPairs, kRounding>;
}
template <class T>
Kernel* const kKernels[3] = {&sgemm_persistent<T, kScalar, kRounding>,
                             &sgemm_persistent<T, kPairs, kRounding>, tma_store_kernel<T>()};

// Clusters of T's kernel the GPU runs at once (one block per SM, the cluster's blocks in one
// GPC): what a persistent launch starts, and the slots the split-K plan fills.
template <class T>
int resident_clusters() {
  static const int clusters = [] {
    for (Kernel* kernel : kKernels<T>) {
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes);
    }
    const sgemm::ClusterLaunch launch(T::kCluster * sgemm::sm_count(), T::kThreads, T::kSmemBytes,
                                      T::kCluster);
    int most = 0;
    if (cudaOccupancyMaxActiveClusters(&most, kKernels<T>[1], &launch.config) != cudaSuccess ||
        most < 1) {
      (void)cudaGetLastError();
      most = sgemm::sm_count() / T::kCluster;
    }
    return most;
  }();
  return clusters;
}

template <class T>
sgemm::TileSpec spec_of() {
  return {T::kBlockM, T::kBlockN, T::kBlockK, T::kStages, resident_clusters<T>() * T::kCluster};
}

// Chapter 07's second decision (common/split_k.h): K slices where T's units leave SMs idle.
template <class T>
sgemm::SplitK split_k_of(const sgemm::Problem& p) {
  if (!SGEMM_SPLIT_K) return sgemm::SplitK{1, p.k};
  const sgemm::TileSpec spec = spec_of<T>();
  return sgemm::plan_split_k(sgemm::tiles_of(p, spec), spec.slots, p.k, spec.block_k, spec.stages);
}

// The launcher's model of how long tile T takes on p, in SM clocks (README.md, "Choosing the
// tile"), from the tile's parameters and the GPU's data sheet, nothing measured:
// - the busiest SM's multiply-adds (common/split_k.h, plan_cost) at the tile's rate: at most
//   kTensorFlopPerClock (H100 SXM: 494.7 dense TF32 TFLOP/s = 132 SMs x 1830 MHz x 2048), and at
//   most as fast as shared memory moves the tile's bytes (kSharedBytesPerClock per SM): 2048 FLOP
//   per clock for the big tile, 1638 for the 128-row one, 1170 for the 64-row one;
// - C through DRAM: written once, or with K slices each slice written and read back and C written.
constexpr double kTensorFlopPerClock = 2048;  // TF32, dense, per SM
constexpr double kSharedBytesPerClock = 128;  // per SM
// A K step of tile T: its FLOP, and the bytes it moves through shared memory (each consumer's
// wgmma read its A^T rows, its fragment loads its B^T columns, and TMA writes a quarter stage).
template <class T>
constexpr double tile_rate() {
  const double flop = 2.0 * T::kBlockM * T::kBlockN * T::kWgmmaK;
  const double bytes = T::kConsumers * (T::kBlockM + T::kWgmmaM) * T::kWgmmaK * sizeof(float) +
                       T::kStageBytes / T::kKSteps;
  return std::min(kTensorFlopPerClock, kSharedBytesPerClock * flop / bytes);
}
static_assert(tile_rate<PersistentTile<256, 2, 4>>() == 2048 &&
                  static_cast<int>(tile_rate<SmallTile>()) == 1638 &&
                  static_cast<int>(tile_rate<ShortTile>()) == 1170,
              "the rates the comments quote (the big tile's: the default SGEMM_TILE's)");

template <class T>
double plan_clocks(const sgemm::Problem& p) {
  const sgemm::SplitK split = split_k_of<T>(p);
  const double rate = tile_rate<T>();
  const sgemm::TileSpec spec = spec_of<T>();
  const double macs =
      sgemm::plan_cost(sgemm::tiles_of(p, spec), sgemm::sm_count(), T::kBlockM, T::kBlockN, split);
  static const double dram_bytes_per_clock = [] {
    int device = 0, sm_khz = 0, mem_khz = 0, bus_bits = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, device);
    cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device);
    cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device);
    return sgemm::dram_bandwidth_bytes(1e3 * mem_khz, bus_bits) / (1e3 * sm_khz);
  }();
  const double c_bytes = (split.splits > 1 ? 2.0 * split.splits + 1 : 1.0) * p.m * p.n * 4;
  return 2 * macs / rate + c_bytes / dram_bytes_per_clock;
}

// Calls f(T{}) for the tile the launcher picks for p (README.md, "Choosing the tile"):
// - C of at most 64 rows, or at most 128 and one column of tiles: the 64-row tile, unpaired;
// - one column of tiles (N <= 128): the big tile, unpaired (a pair's second block would compute
//   only zeros);
// - C of at most 128 rows: the 128-row tile (the big one would multiply at least as many rows of
//   zeros as of A, which costs more than the 128-row tile's lower rate: 2048 / 1638 FLOP per
//   clock);
// - big tiles enough for every SM: the big tile;
// - fewer: the tile of the three that plan_clocks says takes least time, each with its K slices.
template <class F>
auto with_tile(const sgemm::Problem& p, F f) {
  const bool one_column = SGEMM_NARROW && p.n <= MainTile::kBlockN;
  if (SGEMM_SHORT_ROWS &&
      (p.m <= ShortTile::kBlockM || (one_column && p.m <= SmallTile::kBlockM))) {
    return f(ShortTile{});
  }
  if (one_column) return f(SoloTile{});
  if (SGEMM_SHORT_ROWS && p.m <= SmallTile::kBlockM) return f(SmallTile{});
  if (sgemm::tiles_of(p, spec_of<MainTile>()) >= sgemm::sm_count()) return f(MainTile{});
  if (!SGEMM_PLAN_MODEL) {
    const bool small = sgemm::plan_tiles(p, spec_of<MainTile>(), spec_of<SmallTile>(),
                                         sgemm::sm_count(), SGEMM_SPLIT_K != 0)
                           .small_tile;
    return small ? f(SmallTile{}) : f(MainTile{});
  }
  const double main = plan_clocks<MainTile>(p);
  const double small = plan_clocks<SmallTile>(p);
  const double shorter = SGEMM_SHORT_ROWS ? plan_clocks<ShortTile>(p) : main + small;
  if (shorter < main && shorter < small) return f(ShortTile{});
  return small < main ? f(SmallTile{}) : f(MainTile{});
}

// The launcher's workspace: the split-K slices, A's rounded copy (kByPass) or padded one
// (K % 4 != 0), and B's padded one when N % 4 != 0 (chapter 11), each starting on 256 bytes.
size_t split_bytes(const sgemm::Problem& p, const sgemm::SplitK& split) {
  return (sgemm::split_k_workspace_bytes(p, split) + 255) / 256 * 256;
}

size_t workspace_bytes(const sgemm::Problem& p) {
  return with_tile(p, [&](auto tile) {
    return split_bytes(p, split_k_of<decltype(tile)>(p)) +
           sgemm::tma_copy_bytes(p.m, p.k, kRounding == kByPass) +
           sgemm::tma_copy_bytes(p.k, p.n, false);
  });
}

template <class T>
void launch_tile(const sgemm::Problem& p, const float* A, const float* B, float* C,
                 cudaStream_t stream) {
  const sgemm::SplitK split = split_k_of<T>(p);
  char* workspace = static_cast<char*>(p.workspace);
  float* const partial = reinterpret_cast<float*>(workspace);
  workspace += split_bytes(p, split);
  const float* a = sgemm::tma_readable(A, p.m, p.k, kRounding == kByPass, &workspace, stream);
  const float* b = sgemm::tma_readable(B, p.k, p.n, false, &workspace, stream);
  // A's map: rounded by the copy engine (kByCopyEngine), or as it is.
  const CUtensorMap map_a =
      sgemm::tensor_map_2d(a, p.m, p.k, sgemm::tma_row_stride(p.k), T::kBoxRowsA, T::kBlockK,
                           kRounding == kByCopyEngine ? CU_TENSOR_MAP_DATA_TYPE_TFLOAT32
                                                      : CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  const CUtensorMap map_b =
      sgemm::tensor_map_2d(b, p.k, p.n, sgemm::tma_row_stride(p.n), T::kBlockK, T::kBoxN);

  Schedule schedule;
  schedule.tiles_m = ceil_div(p.m, T::kBlockM);
  schedule.pairs_n = ceil_div(ceil_div(p.n, T::kBlockN), T::kCluster);
  schedule.splits = split.splits;
  schedule.k_slice = split.k_slice;
  schedule.group_rows = T::kGroupRows;
  const int units = schedule.units();
  const int clusters =
      SGEMM_PERSISTENT && units > resident_clusters<T>() ? resident_clusters<T>() : units;

  const bool sliced = split.splits > 1;
  float* const out = sliced ? partial : C;
  const int64_t c_slice = sliced ? sgemm::split_k_slice_floats(p) : 0;
  // The epilogue through TMA where its map can hold C: rows of whole 16-byte units, aligned.
  const Store store = p.n % 2 != 0 ? kScalar
                      : SGEMM_EPILOGUE && p.n % 4 == 0 && reinterpret_cast<uintptr_t>(out) % 16 == 0
                          ? kByTma
                          : kPairs;
  const CUtensorMap map_c =
      store == kByTma
          ? sgemm::tensor_map_slices(out, split.splits, p.m, p.n, sgemm::split_k_slice_floats(p),
                                     T::kStoreRows, T::kBoxN)
          : CUtensorMap{};
  const sgemm::ClusterLaunch launch(clusters * T::kCluster, T::kThreads, T::kSmemBytes, T::kCluster,
                                    stream);
  cudaLaunchKernelEx(&launch.config, kKernels<T>[store], map_a, map_b, map_c, p.m, p.n, p.k,
                     schedule, sliced ? 1.0f : p.alpha, sliced ? 0.0f : p.beta, out, c_slice, A, B);
  if (sliced) sgemm::reduce_split_k_slices(p, split.splits, partial, C, stream);
}

void launch_persistent(const sgemm::Problem& p, const float* A, const float* B, float* C,
                       cudaStream_t stream) {
  with_tile(p, [&](auto tile) { launch_tile<decltype(tile)>(p, A, B, C, stream); });
}

// The tile of the traffic model (the harness's roofline ratio): the one the launcher picks.
sgemm::TileSize tile_for(const sgemm::Problem& p) {
  return with_tile(p, [](auto tile) {
    return sgemm::TileSize{decltype(tile)::kBlockM, decltype(tile)::kBlockN};
  });
}

}  // namespace

int main(int argc, char** argv) {
  static const std::string title =
      std::string(SGEMM_PERSISTENT ? "persistent" : "one block per tile") +
      " blocks in clusters of " + std::to_string(MainTile::kCluster) +
      " sharing A by TMA multicast, tiles in groups of " + std::to_string(MainTile::kGroupRows) +
      " rows, split-K below one wave; BM x BN x BK = " + std::to_string(MainTile::kBlockM) + "x" +
      std::to_string(MainTile::kBlockN) + "x" + std::to_string(MainTile::kBlockK) + ", " +
      std::to_string(MainTile::kStages) + " stages";
  sgemm::Chapter chapter{"13_persistent_clusters", title.c_str(),     &launch_persistent,
                         MainTile::kBlockM,        MainTile::kBlockN, &tile_for};
  chapter.precision = sgemm::Precision::kTf32;
  chapter.workspace_bytes = &workspace_bytes;
  chapter.unsupported = &sgemm::sm90a_unsupported;
  return sgemm::run_chapter(chapter, argc, argv);
}
