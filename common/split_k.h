// SPDX-License-Identifier: MIT
// Split-K, as chapter 07 teaches it (07_any_shape/README.md, "Split-K"), for the chapters after
// it: when the blocks of one pass over K cannot fill the GPU, K is cut into slices computed by
// different blocks (blockIdx.z), each writing its raw partial tile into a workspace; a second
// kernel adds the slices in a fixed order and applies alpha and beta. No atomics: for a given
// plan the additions happen in the same order on every run, so C is bit-identical run to run.
// The plan is host code (tests/host/split_k_test.cpp checks it); the reduction is device code.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/grid.h"
#include "common/harness.h"

namespace sgemm {

// More slices than this add little (each slice still streams its own A and B) and cost
// workspace; K of 2^20 cut 256 ways still leaves 4096-deep slices.
inline constexpr int kMaxSplits = 256;

struct SplitK {
  int splits = 1;  // K slices; 1: no split-K
  int k_slice =
      0;  // k per slice, a multiple of the kernel's K tile (the last slice may be shorter)
};

// How many K slices, for `tiles` blocks per pass over K when `slots` blocks run at once
// (SMs x blocks per SM). A grid of at least one wave keeps every SM busy already, and cutting
// it further only adds partial sums to move (2 x M x N x 4 bytes per extra slice): no split.
// A grid under one wave leaves SMs idle for the whole run; floor(slots / tiles) slices keep every
// block in that one wave while each block's K shrinks by the same factor (more slices would make
// a second wave and gain nothing: ceil(tiles x s / slots) x K / s does not fall). A slice is never
// shorter than min_slice_tiles K tiles: a slice shorter than the pipeline never fills it.
inline SplitK plan_split_k(int64_t tiles, int slots, int k, int block_k, int min_slice_tiles) {
  SplitK plan{1, k};
  if (tiles <= 0 || tiles >= slots) return plan;
  const int k_tiles = ceil_div(k, block_k);
  int64_t splits = slots / tiles;
  if (splits > k_tiles / min_slice_tiles) splits = k_tiles / min_slice_tiles;
  if (splits > kMaxSplits) splits = kMaxSplits;
  if (splits < 2) return plan;
  plan.k_slice = ceil_div(k_tiles, static_cast<int>(splits)) * block_k;
  plan.splits = ceil_div(k, plan.k_slice);  // every slice starts below k
  return plan;
}

// What a plan costs, in multiply-adds on the busiest SM (chapter 07, "Waves"): a block runs on
// one SM from start to end, so `tiles` blocks of block_m x block_n, each cut into `splits` K
// slices, take as long as the SM that runs the most of them: ceil(tiles x splits / SMs) blocks of
// block_m x block_n x k_slice. A launcher compares its tiles with it (the split-K reduction,
// at most one wave of partial tiles, is left out). It assumes every tile keeps an SM equally busy:
// no measured speed enters, and a tie goes to the bigger tile.
inline double plan_cost(int64_t tiles, int sms, int block_m, int block_n, const SplitK& split) {
  const int64_t blocks = tiles * split.splits;
  const int64_t per_sm = (blocks + sms - 1) / sms;
  return static_cast<double>(per_sm) * block_m * block_n * split.k_slice;
}

// The launch plan of a chapter with a big and a small tile (08, 09): chapter 07's two decisions,
// the tile and the number of K slices, without 07's fitted model. Each tile gets its split-K plan
// (plan_split_k: slices only when its blocks leave SMs idle). The big tile whenever its blocks fill
// every SM at least once: its last wave then idles part of the GPU for one round at most, and the
// small tile's blocks run slower on an SM (at 8192^3 the small tile's blocks load the busiest SM
// 1.6 % less than the big tile's 15.5 waves; taking them, 08 ran at 107.1 TFLOP/s and 09 at 44.5,
// against 168.7 and 59.6 with the big tile: docs/results/nvidia-h100-80gb-hbm3/tuning_08.md,
// tuning_09.md and tensor_cores/tuning_35dd309.txt, H100). Below one wave, the tile whose
// busiest SM has the least work (plan_cost; a tie keeps the big tile).
struct TileSpec {
  int block_m, block_n, block_k, stages;
  int slots;  // blocks of this tile's kernel the GPU runs at once: SMs x blocks per SM
};
struct TilePlan {
  bool small_tile = false;
  SplitK split;
};

inline int64_t tiles_of(const Problem& p, const TileSpec& t) {
  return static_cast<int64_t>(ceil_div(p.m, t.block_m)) * ceil_div(p.n, t.block_n);
}

inline TilePlan plan_tiles(const Problem& p, const TileSpec& big, const TileSpec& small, int sms,
                           bool split_k) {
  auto split_for = [&](const TileSpec& t) {
    return split_k ? plan_split_k(tiles_of(p, t), t.slots, p.k, t.block_k, t.stages)
                   : SplitK{1, p.k};
  };
  const SplitK big_split = split_for(big);
  if (tiles_of(p, big) >= sms) return {false, big_split};
  const SplitK small_split = split_for(small);
  const double big_cost = plan_cost(tiles_of(p, big), sms, big.block_m, big.block_n, big_split);
  const double small_cost =
      plan_cost(tiles_of(p, small), sms, small.block_m, small.block_n, small_split);
  return small_cost < big_cost ? TilePlan{true, small_split} : TilePlan{false, big_split};
}

// Above one wave (chapter 07, "Waves"), a grid of `tiles` blocks runs in ceil(tiles / slots)
// rounds, the last one partly idle (1536^3 in 128 x 128 tiles: 144 blocks on 132 slots, a second
// round of 12). Cutting K into s slices makes s x tiles blocks each 1/s as long:
// ceil(s x tiles / slots) rounds of k_slice. That pays when the rounds take less time by more
// than the slices cost to write and to add up: 2 s x M x N floats through DRAM at `bytes_per_s`,
// and the reduction's launch. The time of a round: `slots` blocks of 2 x block_m x block_n x
// k_slice FLOP at the kernel's `flops_per_s` (the whole GPU). The fewest slices of the least
// time; a slice is never shorter than min_slice_tiles K tiles. Chapter 09 asks it
// (09_3xtf32/README.md, "Every shape").
inline SplitK plan_split_k_rounds(const Problem& p, int64_t tiles, int slots, int block_m,
                                  int block_n, int block_k, int min_slice_tiles, double flops_per_s,
                                  double bytes_per_s, double launch_seconds) {
  const int k_tiles = ceil_div(p.k, block_k);
  auto seconds = [&](int splits, int k_slice) {
    const int64_t rounds = (tiles * splits + slots - 1) / slots;
    const double compute =
        static_cast<double>(rounds) * slots * 2.0 * block_m * block_n * k_slice / flops_per_s;
    if (splits == 1) return compute;
    return compute + launch_seconds + 2.0 * splits * p.m * p.n * sizeof(float) / bytes_per_s;
  };
  SplitK best{1, p.k};
  double best_seconds = seconds(1, p.k);
  const int most = k_tiles / min_slice_tiles < kMaxSplits ? k_tiles / min_slice_tiles : kMaxSplits;
  for (int s = 2; s <= most; ++s) {
    const int k_slice = ceil_div(k_tiles, s) * block_k;
    if (ceil_div(p.k, k_slice) != s) continue;  // the same slices as a smaller s
    const double t = seconds(s, k_slice);
    if (t < best_seconds) {
      best = {s, k_slice};
      best_seconds = t;
    }
  }
  return best;
}

// Floats per slice in the workspace: M x N rounded up to a float4, so every slice starts on 16
// bytes.
inline int64_t split_k_slice_floats(const Problem& p) {
  return (static_cast<int64_t>(p.m) * p.n + 3) / 4 * 4;
}

// A launcher that keeps more than the slices in its workspace (09's padded copies, 08's prepared
// operands) starts each region on 256 bytes, as cudaMalloc's own pointers.
inline size_t whole_256(size_t bytes) { return (bytes + 255) / 256 * 256; }

inline size_t split_k_workspace_bytes(const Problem& p, const SplitK& plan) {
  return plan.splits > 1
             ? static_cast<size_t>(plan.splits) * split_k_slice_floats(p) * sizeof(float)
             : 0;
}

#if defined(__CUDACC__)

// The signature of a kernel that computes one K slice per blockIdx.z: slice z covers k in
// [z * k_slice, min(k, (z + 1) * k_slice)) and writes C + z * c_slice (the launcher passes the
// workspace, alpha = 1 and beta = 0 when there are several slices); A keeps its leading
// dimension k, B has rows of ldb floats (N, or more for a padded copy), C rows of N floats. One
// slice: gridDim.z = 1, k_slice = k, straight into C.
using SlicedKernel = void(int m, int n, int k, int k_slice, float alpha, const float* A,
                          const float* B, int ldb, float beta, float* C, int64_t c_slice);

inline constexpr int kReduceThreads = 256;

// C = alpha * (sum of the slices) + beta * C over the M x N elements of C, read as one flat
// array (C is dense). Each thread owns one float4 of C; the block's threads form kGroups groups,
// group g adding slices g, g + kGroups, ... in that order, then group 0 adding the groups' sums
// in the order 1, 2, ... . Many slices and few elements (K = 2^20, 64 x 64) would otherwise leave
// one thread walking 256 slices. The elements past the last whole float4 go one by one. Chapter
// 07 taught this reduction; 07, 08 and 09 all launch it through reduce_split_k_slices.
// kPadded: the slices have rows of `ld` floats, N rounded up to a float4 (chapter 07's split-K
// with a padded copy of B, whose slices have the copy's rows), and C rows of n; `count` is
// M x ld, and a thread's float4 of a slice row lands on the at most four of its columns C has.
template <int kGroups, bool kPadded = false>
__global__ void __launch_bounds__(kReduceThreads)
    reduce_split_k(int64_t count, int splits, int64_t slice_floats, float alpha,
                   const float* __restrict__ partial, float beta, float* __restrict__ C, int n = 0,
                   int ld = 0) {
  constexpr int kColumns = kReduceThreads / kGroups;  // float4s of C per block
  __shared__ float4 group_sum[kGroups][kColumns];
  const int column = threadIdx.x % kColumns;
  const int group = threadIdx.x / kColumns;
  const int64_t i = 4 * (static_cast<int64_t>(blockIdx.x) * kColumns + column);
  const bool whole = i + 4 <= count;
  // Each group starts from its first slice, not from 0 + it: a sum of -0.0 stays -0.0.
  float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (whole && group < splits) {
    sum = *reinterpret_cast<const float4*>(partial + group * slice_floats + i);
#pragma unroll 4
    for (int z = group + kGroups; z < splits; z += kGroups) {
      const float4 v = *reinterpret_cast<const float4*>(partial + z * slice_floats + i);
      sum.x += v.x;
      sum.y += v.y;
      sum.z += v.z;
      sum.w += v.w;
    }
  }
  if constexpr (kGroups > 1) {
    group_sum[group][column] = sum;
    __syncthreads();
    if (group != 0) return;
    for (int g = 1; g < kGroups && g < splits; ++g) {
      sum.x += group_sum[g][column].x;
      sum.y += group_sum[g][column].y;
      sum.z += group_sum[g][column].z;
      sum.w += group_sum[g][column].w;
    }
  }
  if constexpr (kPadded) {
    if (!whole) return;  // count is whole float4s: only threads past the end
    const int64_t row = i / ld;
    const int col = static_cast<int>(i - row * ld);
    float* const c = C + row * n + col;
    const float v[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      // beta == 0: C is not read (it may hold NaN).
      if (col + j < n) c[j] = beta != 0.0f ? alpha * v[j] + beta * c[j] : alpha * v[j];
    }
  } else if (whole) {
    // beta == 0: C is not read (it may hold NaN).
    float4 out = make_float4(alpha * sum.x, alpha * sum.y, alpha * sum.z, alpha * sum.w);
    if (beta != 0.0f) {
      const float4 old = *reinterpret_cast<const float4*>(C + i);
      out.x += beta * old.x;
      out.y += beta * old.y;
      out.z += beta * old.z;
      out.w += beta * old.w;
    }
    *reinterpret_cast<float4*>(C + i) = out;
  } else if (group == 0) {
    for (int64_t e = i; e < count; ++e) {
      float last = partial[e];
      for (int z = 1; z < splits; ++z) last += partial[z * slice_floats + e];
      C[e] = beta != 0.0f ? alpha * last + beta * C[e] : alpha * last;
    }
  }
}

// Adds the plan's slices (the workspace) into C. Groups per block (1, 4, 16 or 64): the fewest
// that still give every SM two blocks, never more groups than slices. ld: 0 for slices laid out
// like C (split_k_slice_floats apart), else the slices' row length (N rounded up to a float4,
// M x ld floats apart; reduce_split_k's kPadded).
inline void reduce_split_k_slices(const Problem& p, int splits, const float* partial, float* C,
                                  cudaStream_t stream, int ld = 0) {
  const int64_t count = static_cast<int64_t>(p.m) * (ld > 0 ? ld : p.n);
  const int64_t float4s = (count + 3) / 4;
  int groups = 1;
  while (groups < 64 && groups * 4 <= splits &&
         (float4s + kReduceThreads / groups - 1) / (kReduceThreads / groups) < 2 * sm_count()) {
    groups *= 4;
  }
  const int64_t columns = kReduceThreads / groups;
  const unsigned blocks = static_cast<unsigned>((float4s + columns - 1) / columns);
  const int64_t stride = ld > 0 ? count : split_k_slice_floats(p);
  auto launch = [&](auto* kernel) {
    kernel<<<blocks, kReduceThreads, 0, stream>>>(count, splits, stride, p.alpha, partial, p.beta,
                                                  C, p.n, ld);
  };
  const bool padded = ld > 0;
  switch (groups) {
    case 1:
      launch(padded ? &reduce_split_k<1, true> : &reduce_split_k<1>);
      break;
    case 4:
      launch(padded ? &reduce_split_k<4, true> : &reduce_split_k<4>);
      break;
    case 16:
      launch(padded ? &reduce_split_k<16, true> : &reduce_split_k<16>);
      break;
    default:
      launch(padded ? &reduce_split_k<64, true> : &reduce_split_k<64>);
      break;
  }
}

// Blocks of `kernel` one SM holds (registers, shared memory).
inline int blocks_per_sm(SlicedKernel* kernel, int threads, int smem_bytes) {
  int blocks = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, smem_bytes);
  return blocks > 0 ? blocks : 1;
}

// Launches `kernel` (block_m x block_n tiles of C) over every slice of the plan, then the
// reduction when there are several. The grid: x over N, y over M (in slabs of 65535 block rows,
// common/grid.h), z over the slices. A has rows of p.k floats, B of ldb floats.
inline void launch_split_k(const Problem& p, const SplitK& split, SlicedKernel* kernel, int block_m,
                           int block_n, int threads, int smem_bytes, const float* A, const float* B,
                           int ldb, float* C, cudaStream_t stream) {
  const bool sliced = split.splits > 1;
  float* const out = sliced ? static_cast<float*>(p.workspace) : C;
  const int64_t slice = sliced ? split_k_slice_floats(p) : 0;
  for_each_row_slab(p, block_m, [&](int64_t row0, int rows) {
    const dim3 grid(ceil_div(p.n, block_n), ceil_div(rows, block_m), split.splits);
    kernel<<<grid, threads, smem_bytes, stream>>>(rows, p.n, p.k, split.k_slice,
                                                  sliced ? 1.0f : p.alpha, A + row0 * p.k, B, ldb,
                                                  sliced ? 0.0f : p.beta, out + row0 * p.n, slice);
  });
  if (sliced) reduce_split_k_slices(p, split.splits, out, C, stream);
}

#endif  // __CUDACC__

}  // namespace sgemm
