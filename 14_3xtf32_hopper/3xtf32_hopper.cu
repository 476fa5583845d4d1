// SPDX-License-Identifier: MIT
// SGEMM tutorial, chapter 14: FP32 accuracy on Hopper's tensor cores (3xTF32).
//
//   00 naive -> 01 coalescing -> 02 smem tiling -> 03 thread tiling -> 04 vectorized
//   -> 05 bank conflicts -> 06 double buffer -> 07 any shape -> 08 tensor cores -> 09 3xTF32
//   -> 10 wgmma -> 11 TMA -> 12 warp specialization -> 13 persistent clusters -> [14 3xTF32 Hopper]
//
// Chapter 09's idea on chapter 13's kernel. Each input x is split into two TF32 numbers, big and
// small (sgemm::split_tf32), and every product becomes three tensor-core products, small*big +
// big*small + big*big; every kPromoteTiles K tiles the tensor cores' partial sums join FP32
// totals on the CUDA cores (promotion), since the tensor cores' own sums keep fewer bits than FP32.
// The chapter's question is where the split happens:
// - B^T is the register operand (C^T = B^T A^T, as in 10-13): each consumer splits the values it
//   loads into two fragments, for free beside its wgmma.
// - A is read by wgmma from shared memory, which must hold both parts. They are written by a
//   pass before the GEMM (A's big and small parts, two tensor maps), by the producer's three idle
//   warps in shared memory (chapter 13's rounding warps, now writing two parts), or by the
//   consumers themselves before their wgmma. SGEMM_SPLIT_A picks; README.md, "Where A is split",
//   measures the three.
// - Promotion with asynchronous wgmma: the warpgroup waits for its wgmma, adds the partial sums,
//   and the next wgmma starts them afresh (scale-d = 0) instead of zeroing 64 registers.
// The stage holds A's two parts: 128 rows of A per tile instead of 13's 256 (the partial sums and
// the totals take 128 registers per thread), and the same 48 KB per stage.
// Unchanged from 13: persistent clusters of two sharing A by multicast, the grouped tile order,
// split-K below one wave, the producer and consumer warpgroups.
// Precision contract: FP32 (verified and timed against cuBLAS FP32).
// Limits: compute capability 9.0 with code built for sm_90a; elsewhere one error: line, exit 3.
// Example: build/bin/14_3xtf32_hopper --size 4096

#include <cstdint>
#include <string>
#include <type_traits>

#include <cuda_runtime.h>

#include "common/cluster.h"
#include "common/grid.h"
#include "common/harness.h"
#include "common/split_k.h"
#include "common/tf32.h"
#include "common/tma.h"
#include "common/wgmma.h"

// Tile (BM, consumer warpgroups, STAGES). README.md, "Parameters and limits".
#ifndef SGEMM_TILE
#define SGEMM_TILE 128, 2, 4
#endif
// SGEMM_SPLIT_A: where A is split: 0 always a pass before the GEMM, 1 always the producer's idle
// warps in shared memory, 2 always the consumers in shared memory, 3 the launcher's rule
// (split_narrow: the producer where N fits one tile, the pass elsewhere).
#ifndef SGEMM_SPLIT_A
#define SGEMM_SPLIT_A 3
#endif
// SGEMM_PROMOTE: k-steps (of 8) between promotions, a multiple of a K tile's 4; 0 = never (the
// partial sums join the totals once per unit: plain 3xTF32, built only to price promotion).
#ifndef SGEMM_PROMOTE
#define SGEMM_PROMOTE 4
#endif
// As in chapter 13: the tile order, clusters and multicast, split-K.
#ifndef SGEMM_GROUP_ROWS
#define SGEMM_GROUP_ROWS 8
#endif
#ifndef SGEMM_CLUSTER
#define SGEMM_CLUSTER 2
#endif
#ifndef SGEMM_MULTICAST
#define SGEMM_MULTICAST 1
#endif
#ifndef SGEMM_SPLIT_K
#define SGEMM_SPLIT_K 1
#endif
// SGEMM_NARROW 1: where N fits one tile, unpaired blocks (the launcher's paired), and a consumer
// warpgroup whose columns all lie past N skips its wgmma (as in chapter 13); 0: pairs everywhere,
// every consumer multiplies.
#ifndef SGEMM_NARROW
#define SGEMM_NARROW 1
#endif
// SGEMM_SHORT_ROWS 1: a 64-row tile where C has at most 64 rows (the launcher's short_rows).
#ifndef SGEMM_SHORT_ROWS
#define SGEMM_SHORT_ROWS 1
#endif

namespace {

using sgemm::ceil_div;

// Where A is split: the kernel's template argument.
enum SplitWhere { kSplitPass = 0, kSplitProducer = 1, kSplitConsumers = 2 };
static_assert(SGEMM_SPLIT_A >= 0 && SGEMM_SPLIT_A <= 3, "SGEMM_SPLIT_A is 0, 1, 2 or 3");
// Where C has several columns of tiles, and where N fits one (the launcher's split_narrow).
constexpr int kSplitWide = SGEMM_SPLIT_A == 3 ? kSplitPass : SGEMM_SPLIT_A;
constexpr int kSplitNarrow = SGEMM_SPLIT_A == 3 ? kSplitProducer : SGEMM_SPLIT_A;

// The producer warpgroup's warps other than the one that issues the copies.
constexpr int kSplittingWarps = 3;

template <int kBlockM_, int kConsumers_, int kStages_, int kCluster_>
struct SplitTile {
  static constexpr int kBlockM = kBlockM_;        // rows of C per tile
  static constexpr int kConsumers = kConsumers_;  // consumer warpgroups
  static constexpr int kWgmmaM = 64;              // wgmma.m64n128k8: columns of C (rows of C^T) ...
  static constexpr int kBlockN = kWgmmaM * kConsumers;  // columns of C per tile
  static constexpr int kBlockK = 32;        // depth of one K tile: a 128-byte row of floats
  static constexpr int kStages = kStages_;  // the ring
  static constexpr int kWgmmaN = kBlockM < 128 ? kBlockM : 128;  // ... rows of C (64 or 128) ...
  static constexpr int kWgmmaK = 8;                              // ... and k per instruction
  static constexpr int kRowBlocks = kBlockM / kWgmmaN;
  static constexpr int kAccumulators = kWgmmaN / 2;  // per thread and row block
  static constexpr int kKSteps = kBlockK / kWgmmaK;
  static constexpr int kThreads = 128 * (1 + kConsumers);  // the producer, then the consumers
  static constexpr int kCluster = kCluster_;               // blocks sharing A
  static constexpr int kGroupRows = SGEMM_GROUP_ROWS;
  // K tiles between promotions; 0: once per unit (its end).
  static constexpr int kPromoteTiles = SGEMM_PROMOTE / kKSteps;

  // A stage: A's big part (kBlockM rows of 128 bytes), A's small part (the same layout), then B's
  // 32 x 32 boxes. With the pass, TMA brings both parts; otherwise it brings the raw A into the
  // big part's place and the split writes big over it and small beside it.
  static constexpr int kBoxRowsA = SGEMM_MULTICAST ? kBlockM / kCluster : kBlockM;
  static constexpr int kBoxN = 32;
  static constexpr int kBoxesB = kBlockN / kBoxN;
  static constexpr int kSizeA = kBlockM * kBlockK;  // floats of one part
  static constexpr int kSizeBoxB = kBlockK * kBoxN;
  static constexpr int kStageFloats = 2 * kSizeA + kBlockN * kBlockK;
  static constexpr int kStageBytes = kStageFloats * static_cast<int>(sizeof(float));
  static constexpr int kSmemBytes = kStages * kStageBytes + 1024;

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
  static_assert(SGEMM_PROMOTE % kKSteps == 0, "promotion between K tiles");
  static_assert(kCluster == 1 || kCluster == 2, "one block, or a pair sharing A");
  static_assert(kBoxRowsA % 8 == 0, "each share of A is whole 1024-byte swizzle atoms");
  static_assert(kBlockM % kWgmmaN == 0, "whole wgmma tiles per block");
  static_assert(kStageBytes % 1024 == 0 && kSizeA * sizeof(float) % 1024 == 0,
                "every stage and part starts on 1024 bytes");
  static_assert(kStages >= 2, "a ring");
  static_assert(kSmemBytes <= 227 * 1024, "shared memory per block is limited to 227 KB");
};

// Clusters of two compute two tiles side by side; where C has one column of tiles, the second
// block of every pair would compute nothing (half the GPU), so those problems run unpaired
// blocks (the launcher's paired).
using PairTile = SplitTile<SGEMM_TILE, SGEMM_CLUSTER>;
using SoloTile = SplitTile<SGEMM_TILE, 1>;
// Where C has at most 64 rows (a decode step: M = tokens), the 128-row tile multiplies at least as
// many rows of zeros as of A; a 64-row tile (wgmma's N = 64) halves them. Its stage is 32 KB, so
// six fit (the launcher's short_rows).
using ShortPairTile = SplitTile<64, 2, 6, SGEMM_CLUSTER>;
using ShortSoloTile = SplitTile<64, 2, 6, 1>;

// The work of one launch, as in chapter 13: units numbered slice by slice, by groups of
// group_rows tile rows, column after column inside a group.
struct Schedule {
  int tiles_m, pairs_n;
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

struct FragmentPlan {
  int lo;
  int hi;
  int col;
};

// Where a lane's register operand lies in a stage's B boxes: chapter 11, make_fragment_plan.
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

// Splits the raw A of a stage in place: big over each float4 (the swizzle moves whole float4s, so
// the parts keep the layout), small at the same offset in the small part. Threads `first`,
// `first + step`, ... of the float4s.
template <class T>
__device__ __forceinline__ void split_stage_a(float* stage, int first, int step) {
  uint4* big = reinterpret_cast<uint4*>(stage);
  uint4* small = reinterpret_cast<uint4*>(stage + T::kSizeA);
#pragma unroll 4
  for (int i = first; i < T::kSizeA / 4; i += step) {
    const float4 v = reinterpret_cast<const float4*>(big)[i];
    const sgemm::Tf32Split x = sgemm::split_tf32(v.x), y = sgemm::split_tf32(v.y),
                           z = sgemm::split_tf32(v.z), w = sgemm::split_tf32(v.w);
    big[i] = make_uint4(x.big, y.big, z.big, w.big);
    small[i] = make_uint4(x.small, y.small, z.small, w.small);
  }
}

// The consumer warpgroups' own barrier (barrier 0 is __syncthreads'): every consumer thread's
// split of a stage is done before any consumer's wgmma reads it.
template <class T>
__device__ __forceinline__ void consumers_sync() {
  asm volatile("bar.sync 1, %0;\n" ::"n"(128 * T::kConsumers) : "memory");
}

// gridDim.x blocks (a multiple of kCluster) walk the schedule's units as in chapter 13. map_a
// holds A's big part (the pass) or A itself; map_small A's small part (the pass only).
template <class T, bool kEvenN, int kSplit>
__global__ void __launch_bounds__(T::kThreads, 1)
    sgemm_3xtf32_hopper(const __grid_constant__ CUtensorMap map_a,
                        const __grid_constant__ CUtensorMap map_small,
                        const __grid_constant__ CUtensorMap map_b, int m, int n, int k,
                        const Schedule schedule, float alpha, float beta, float* __restrict__ C,
                        int64_t c_slice) {
#if !SGEMM_SM90A_BUILT
  __trap();  // built without sm_90a code: the harness exits 3 before any launch (unsupported)
#endif
  extern __shared__ float4 smem_raw[];
  // full: the stage's bytes landed; split (kSplitProducer): A's parts are written, one arrival
  // per splitting warp; empty: every consumer warp of every block of the cluster is done with it.
  __shared__ uint64_t full[T::kStages], split[T::kStages], empty[T::kStages];
  const uint32_t raw_base = sgemm::smem_address(smem_raw);
  const uint32_t pad = (1024 - raw_base % 1024) % 1024;
  float* const smem = reinterpret_cast<float*>(reinterpret_cast<char*>(smem_raw) + pad);
  const uint32_t smem_base = raw_base + pad;

  const int tid = threadIdx.x;
  const int warpgroup = tid / 128;
  const int warp = (tid % 128) / 32;
  const int lane = tid % 32;
  const uint32_t rank = T::kCluster > 1 ? sgemm::cluster_rank() : 0;
  const int first_unit = blockIdx.x / T::kCluster;
  const int unit_step = gridDim.x / T::kCluster;
  const int units = schedule.units();

  if (tid == 0) {
    for (int s = 0; s < T::kStages; ++s) {
      sgemm::mbarrier_init(&full[s], 1);
      sgemm::mbarrier_init(&split[s], kSplittingWarps);
      sgemm::mbarrier_init(&empty[s], 4 * T::kConsumers * T::kCluster);
    }
    sgemm::fence_mbarrier_init();
  }
  if constexpr (T::kCluster > 1) {
    sgemm::cluster_sync();
  } else {
    __syncthreads();
  }

  if (warpgroup == 0) {
    // ---- The producer warpgroup ----
    sgemm::setmaxnreg_dec<T::kProducerRegisters>();
    if (tid == 0) {
      int it = 0;
      for (int u = first_unit; u < units; u += unit_step) {
        const UnitPlace place = place_of<T>(schedule, u, rank, k);
        for (int kt = 0; kt < place.k_tiles; ++kt, ++it) {
          const int stage = it % T::kStages;
          if (it >= T::kStages) {
            sgemm::mbarrier_wait(&empty[stage], (it / T::kStages - 1) % 2);
          }
          float* sA = smem + stage * T::kStageFloats;
          const int k0 = place.k_begin + kt * T::kBlockK;
          // Every byte of the stage, but the small part where the kernel splits A itself.
          sgemm::mbarrier_arrive_expect_tx(
              &full[stage], T::kStageBytes - (kSplit == kSplitPass ? 0 : T::kSizeA * 4));
          // A's part(s): this block's share of the rows into both blocks (chapter 13).
          auto load_a = [&](float* dst, const CUtensorMap* map) {
            if constexpr (T::kCluster > 1 && SGEMM_MULTICAST) {
              sgemm::tma_load_2d_multicast(dst + rank * T::kBoxRowsA * T::kBlockK, map,
                                           place.block_row + static_cast<int>(rank) * T::kBoxRowsA,
                                           k0, &full[stage], (1u << T::kCluster) - 1);
            } else {
              sgemm::tma_load_2d(dst, map, place.block_row, k0, &full[stage]);
            }
          };
          load_a(sA, &map_a);
          if constexpr (kSplit == kSplitPass) load_a(sA + T::kSizeA, &map_small);
#pragma unroll
          for (int j = 0; j < T::kBoxesB; ++j) {
            sgemm::tma_load_2d(sA + 2 * T::kSizeA + j * T::kSizeBoxB, &map_b, k0,
                               place.block_col + j * T::kBoxN, &full[stage]);
          }
        }
      }
    } else if (kSplit == kSplitProducer && warp > 0) {
      // The other three warps split A where it landed, make their writes visible to wgmma (the
      // async proxy) and hand the stage to the consumers.
      int it = 0;
      for (int u = first_unit; u < units; u += unit_step) {
        const int k_tiles = place_of<T>(schedule, u, rank, k).k_tiles;
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int stage = it % T::kStages;
          sgemm::mbarrier_wait(&full[stage], (it / T::kStages) % 2);
          split_stage_a<T>(smem + stage * T::kStageFloats, tid - 32, 32 * kSplittingWarps);
          sgemm::fence_proxy_async();
          __syncwarp();
          if (lane == 0) sgemm::mbarrier_arrive(&split[stage]);
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
    float acc[T::kRowBlocks][T::kAccumulators];   // the FP32 totals
    float part[T::kRowBlocks][T::kAccumulators];  // the tensor cores' partial sums since the last
                                                  // promotion
    uint32_t big[2][T::kKSteps][4], small[2][T::kKSteps][4];  // B^T's fragments, split

    auto release = [&](int stage) {
      if constexpr (T::kCluster > 1) {
        if (lane < T::kCluster) sgemm::mbarrier_arrive_cluster(&empty[stage], lane);
      } else {
        if (lane == 0) sgemm::mbarrier_arrive(&empty[stage]);
      }
    };

    // Waits until K tile `it` is ready for wgmma: landed, and A split (by the producer's warps, or
    // here by all consumer threads together).
    auto ready = [&](int it) {
      const int stage = it % T::kStages;
      const int phase = (it / T::kStages) % 2;
      if constexpr (kSplit == kSplitProducer) {
        sgemm::mbarrier_wait(&split[stage], phase);
      } else {
        sgemm::mbarrier_wait(&full[stage], phase);
      }
      if constexpr (kSplit == kSplitConsumers) {
        split_stage_a<T>(smem + stage * T::kStageFloats, tid - 128, 128 * T::kConsumers);
        sgemm::fence_proxy_async();
        consumers_sync<T>();
      }
    };

    // One K tile: three wgmma per k-step and row block into the partial sums. `fresh`: the first
    // of them starts the partial sums afresh (scale-d = 0).
    auto step = [&](int it, bool fresh, auto parity) {
      constexpr int P = decltype(parity)::value;
      const int stage = it % T::kStages;
      float* sA = smem + stage * T::kStageFloats;
      ready(it);
      const float* b_stage = sA + 2 * T::kSizeA;
#pragma unroll
      for (int s = 0; s < T::kKSteps; ++s) {
        const float2 lo =
            *reinterpret_cast<const float2*>(b_stage + frag_plan.lo + 8 * s * T::kBoxN);
        const float2 hi =
            *reinterpret_cast<const float2*>(b_stage + frag_plan.hi + 8 * s * T::kBoxN);
        const float v[4] = {lo.x, lo.y, hi.x, hi.y};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const sgemm::Tf32Split x = sgemm::split_tf32(v[j]);
          big[P][s][j] = x.big;
          small[P][s][j] = x.small;
        }
      }
      const uint64_t desc_big =
          sgemm::smem_descriptor_sw128(smem_base + stage * T::kStageFloats * sizeof(float));
      const uint64_t desc_small = desc_big + T::kSizeA * sizeof(float) / 16;
#pragma unroll
      for (int s = 0; s < T::kKSteps; ++s) {
        sgemm::pin(big[P][s]);
        sgemm::pin(small[P][s]);
      }
#pragma unroll
      for (int i = 0; i < T::kRowBlocks; ++i) sgemm::pin(part[i]);
      sgemm::wgmma_fence();
#pragma unroll
      for (int s = 0; s < T::kKSteps; ++s) {
#pragma unroll
        for (int i = 0; i < T::kRowBlocks; ++i) {
          const uint64_t offset =
              (i * T::kWgmmaN * T::kBlockK + T::kWgmmaK * s) * sizeof(float) / 16;
          // The small products first: they are the smallest terms of the partial sums.
          sgemm::wgmma_tf32<T::kWgmmaN>(part[i], small[P][s], desc_big + offset,
                                        !(fresh && s == 0));
          sgemm::wgmma_tf32<T::kWgmmaN>(part[i], big[P][s], desc_small + offset);
          sgemm::wgmma_tf32<T::kWgmmaN>(part[i], big[P][s], desc_big + offset);
        }
      }
      sgemm::wgmma_commit();
    };

    int it = 0;  // K tiles consumed so far, over all units (the producer's count)
    for (int u = first_unit; u < units; u += unit_step) {
      const UnitPlace place = place_of<T>(schedule, u, rank, k);
      if (SGEMM_NARROW && place.block_col + consumer * T::kWgmmaM >= n) {
        // Every column of this warpgroup lies past N: nothing to multiply or store. It still takes
        // each stage and hands it back, as the producer counts on.
        for (int kt = 0; kt < place.k_tiles; ++kt, ++it) {
          ready(it);
          release(it % T::kStages);
        }
        continue;
      }
#pragma unroll
      for (int i = 0; i < T::kRowBlocks; ++i) {
#pragma unroll
        for (int e = 0; e < T::kAccumulators; ++e) acc[i][e] = 0.0f;
      }
      bool fresh = true;
      int held = -1;  // the stage whose wgmma may still run
      auto after = [&](int stage, int kt) {
        const bool promote =
            (T::kPromoteTiles > 0 && (kt + 1) % T::kPromoteTiles == 0) || kt + 1 == place.k_tiles;
        if (promote) {
          // Promotion: every wgmma of this warpgroup done, both stages go back, and the partial
          // sums join the totals in FP32; the next wgmma starts them afresh.
          sgemm::wgmma_wait<0>();
          if (held >= 0) release(held);
          release(stage);
          held = -1;
#pragma unroll
          for (int i = 0; i < T::kRowBlocks; ++i) {
            sgemm::pin(part[i]);
#pragma unroll
            for (int e = 0; e < T::kAccumulators; ++e) acc[i][e] += part[i][e];
          }
          fresh = true;
        } else {
          // The previous K tile's wgmma are done (this one's may run on): its stage goes back.
          sgemm::wgmma_wait<1>();
          if (held >= 0) release(held);
          held = stage;
          fresh = false;
        }
      };
      for (int kt = 0; kt < place.k_tiles; kt += 2) {
        step(it, fresh, std::integral_constant<int, 0>{});
        after(it++ % T::kStages, kt);
        if (kt + 1 < place.k_tiles) {
          step(it, fresh, std::integral_constant<int, 1>{});
          after(it++ % T::kStages, kt + 1);
        }
      }
      // The last K tile promoted (its wait is this one's), but ptxas cannot see that every path
      // here waited: without this it inserts its own wait, with a warning (C7517).
      sgemm::wgmma_wait<0>();

      // Epilogue, as in 13, into this unit's slice.
      float* const out = C + place.slice * c_slice;
      const int col = place.block_col + frag_plan.col;
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
            if (kEvenN) {
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
  if constexpr (T::kCluster > 1) sgemm::cluster_sync();
}

using Kernel = void(CUtensorMap, CUtensorMap, CUtensorMap, int, int, int, Schedule, float, float,
                    float*, int64_t);

// The kernels of tile T: [N fits one tile][N even].
template <class T>
Kernel* const kKernels[2][2] = {
    {&sgemm_3xtf32_hopper<T, false, kSplitWide>, &sgemm_3xtf32_hopper<T, true, kSplitWide>},
    {&sgemm_3xtf32_hopper<T, false, kSplitNarrow>, &sgemm_3xtf32_hopper<T, true, kSplitNarrow>}};

// The pass: big (rows x cols, rows tma_row_stride(cols) floats apart) and small (the same) = the
// two TF32 parts of src (dense). One pass, 16-byte accesses where the rows allow them.
__global__ void split_to_tma_rows(const float* __restrict__ src, uint32_t* __restrict__ big,
                                  uint32_t* __restrict__ small, int64_t rows, int64_t cols) {
  const int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  if (cols % 4 == 0) {
    const int64_t total = rows * cols / 4;
    for (int64_t i = first; i < total; i += step) {
      const float4 v = reinterpret_cast<const float4*>(src)[i];
      const sgemm::Tf32Split x = sgemm::split_tf32(v.x), y = sgemm::split_tf32(v.y),
                             z = sgemm::split_tf32(v.z), w = sgemm::split_tf32(v.w);
      reinterpret_cast<uint4*>(big)[i] = make_uint4(x.big, y.big, z.big, w.big);
      reinterpret_cast<uint4*>(small)[i] = make_uint4(x.small, y.small, z.small, w.small);
    }
    return;
  }
  const int64_t stride = sgemm::tma_row_stride(cols);
  const int64_t total = rows * cols;
  for (int64_t i = first; i < total; i += step) {
    const sgemm::Tf32Split x = sgemm::split_tf32(src[i]);
    const int64_t at = (i / cols) * stride + i % cols;
    big[at] = x.big;
    small[at] = x.small;
  }
}

template <class T>
int resident_clusters() {
  static const int clusters = [] {
    for (const auto& kernels : kKernels<T>) {
      for (Kernel* kernel : kernels) {
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes);
      }
    }
    const sgemm::ClusterLaunch launch(T::kCluster * sgemm::sm_count(), T::kThreads, T::kSmemBytes,
                                      T::kCluster);
    int most = 0;
    if (cudaOccupancyMaxActiveClusters(&most, kKernels<T>[0][1], &launch.config) != cudaSuccess ||
        most < 1) {
      (void)cudaGetLastError();
      most = sgemm::sm_count() / T::kCluster;
    }
    return most;
  }();
  return clusters;
}

// Pairs (PairTile) where C has two or more columns of tiles; unpaired blocks (SoloTile) where it
// has one.
bool paired(const sgemm::Problem& p) {
  return PairTile::kCluster > 1 && (!SGEMM_NARROW || p.n > PairTile::kBlockN);
}

// Where A is split (SGEMM_SPLIT_A 3): by the producer where N fits one tile, by the pass elsewhere.
// The pass reads A and writes its two parts (12 bytes per element), which the GEMM then reads
// (8 bytes per element and column of tiles): where C has one column of tiles that is more than
// the GEMM's own traffic; where it has many, a fraction of it, and the pass leaves the producer
// nothing to do in the GEMM (README.md, "Where A is split").
bool split_narrow(const sgemm::Problem& p) { return p.n <= PairTile::kBlockN; }

// Chapter 07's decisions (common/split_k.h): one tile here, and K slices below one wave.
template <class T>
sgemm::TilePlan plan_for(const sgemm::Problem& p) {
  const sgemm::TileSpec spec{T::kBlockM, T::kBlockN, T::kBlockK, T::kStages,
                             resident_clusters<T>() * T::kCluster};
  return sgemm::plan_tiles(p, spec, spec, sgemm::sm_count(), SGEMM_SPLIT_K != 0);
}

// The 64-row tile where C has at most 64 rows (SGEMM_SHORT_ROWS 1).
bool short_rows(const sgemm::Problem& p) { return SGEMM_SHORT_ROWS && p.m <= 64; }

// Calls f(T{}) for the tile type the launcher picks for p.
template <class F>
auto with_tile(const sgemm::Problem& p, F f) {
  if (short_rows(p)) return paired(p) ? f(ShortPairTile{}) : f(ShortSoloTile{});
  return paired(p) ? f(PairTile{}) : f(SoloTile{});
}

sgemm::SplitK split_k_of(const sgemm::Problem& p) {
  return with_tile(p, [&](auto tile) { return plan_for<decltype(tile)>(p).split; });
}

size_t split_bytes(const sgemm::Problem& p, const sgemm::SplitK& split) {
  return (sgemm::split_k_workspace_bytes(p, split) + 255) / 256 * 256;
}

bool splits_by_pass(const sgemm::Problem& p) {
  return (split_narrow(p) ? kSplitNarrow : kSplitWide) == kSplitPass;
}

// The workspace: the split-K slices; with the pass, A's two parts, else A's padded copy when
// K % 4 != 0; B's padded copy when N % 4 != 0 (chapter 11).
size_t workspace_bytes(const sgemm::Problem& p) {
  const size_t a_bytes = splits_by_pass(p) ? 2 * sgemm::tma_copy_bytes(p.m, p.k, true)
                                           : sgemm::tma_copy_bytes(p.m, p.k, false);
  return split_bytes(p, split_k_of(p)) + a_bytes + sgemm::tma_copy_bytes(p.k, p.n, false);
}

template <class T>
void launch_tile(const sgemm::Problem& p, const float* A, const float* B, float* C,
                 cudaStream_t stream) {
  const sgemm::SplitK split = plan_for<T>(p).split;
  char* workspace = static_cast<char*>(p.workspace);
  float* const partial = reinterpret_cast<float*>(workspace);
  workspace += split_bytes(p, split);
  const float* a = nullptr;
  const float* a_small = nullptr;
  if (splits_by_pass(p)) {
    uint32_t* big = reinterpret_cast<uint32_t*>(workspace);
    workspace += sgemm::tma_copy_bytes(p.m, p.k, true);
    uint32_t* small = reinterpret_cast<uint32_t*>(workspace);
    workspace += sgemm::tma_copy_bytes(p.m, p.k, true);
    split_to_tma_rows<<<1056, 256, 0, stream>>>(A, big, small, p.m, p.k);
    a = reinterpret_cast<const float*>(big);
    a_small = reinterpret_cast<const float*>(small);
  } else {
    a = sgemm::tma_readable(A, p.m, p.k, false, &workspace, stream);
    a_small = a;  // not read: the kernel writes the small part itself
  }
  const float* b = sgemm::tma_readable(B, p.k, p.n, false, &workspace, stream);
  const uint64_t a_stride = sgemm::tma_row_stride(p.k);
  const CUtensorMap map_a = sgemm::tensor_map_2d(a, p.m, p.k, a_stride, T::kBoxRowsA, T::kBlockK);
  const CUtensorMap map_small =
      sgemm::tensor_map_2d(a_small, p.m, p.k, a_stride, T::kBoxRowsA, T::kBlockK);
  const CUtensorMap map_b =
      sgemm::tensor_map_2d(b, p.k, p.n, sgemm::tma_row_stride(p.n), T::kBlockK, T::kBoxN);

  Schedule schedule;
  schedule.tiles_m = ceil_div(p.m, T::kBlockM);
  schedule.pairs_n = ceil_div(ceil_div(p.n, T::kBlockN), T::kCluster);
  schedule.splits = split.splits;
  schedule.k_slice = split.k_slice;
  schedule.group_rows = T::kGroupRows;
  const int units = schedule.units();
  const int clusters = units > resident_clusters<T>() ? resident_clusters<T>() : units;

  const bool sliced = split.splits > 1;
  const sgemm::ClusterLaunch launch(clusters * T::kCluster, T::kThreads, T::kSmemBytes, T::kCluster,
                                    stream);
  cudaLaunchKernelEx(&launch.config, kKernels<T>[split_narrow(p)][p.n % 2 == 0], map_a, map_small,
                     map_b, p.m, p.n, p.k, schedule, sliced ? 1.0f : p.alpha,
                     sliced ? 0.0f : p.beta, sliced ? partial : C,
                     sliced ? sgemm::split_k_slice_floats(p) : int64_t{0});
  if (sliced) sgemm::reduce_split_k_slices(p, split.splits, partial, C, stream);
}

void launch_3xtf32(const sgemm::Problem& p, const float* A, const float* B, float* C,
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
  static const char* const where[] = {"a pass before the GEMM", "the producer's idle warps",
                                      "the consumers",
                                      "a pass (N > 128) or the producer's idle warps (N <= 128)"};
  static const std::string title =
      std::string("3xTF32 on chapter 13's persistent clusters: A split by ") +
      where[SGEMM_SPLIT_A] + ", B^T in registers, promoted every " + std::to_string(SGEMM_PROMOTE) +
      " k-steps; BM x BN x BK = " + std::to_string(PairTile::kBlockM) + "x" +
      std::to_string(PairTile::kBlockN) + "x" + std::to_string(PairTile::kBlockK) + ", " +
      std::to_string(PairTile::kStages) +
      " stages (64 rows, 6 stages where M <= 64), clusters of " +
      std::to_string(PairTile::kCluster) + " where the columns of tiles pair up";
  sgemm::Chapter chapter{"14_3xtf32_hopper", title.c_str(),     &launch_3xtf32,
                         PairTile::kBlockM,  PairTile::kBlockN, &tile_for};
  chapter.precision = sgemm::Precision::kFp32;
  chapter.workspace_bytes = &workspace_bytes;
  chapter.unsupported = &sgemm::sm90a_unsupported;
  return sgemm::run_chapter(chapter, argc, argv);
}
