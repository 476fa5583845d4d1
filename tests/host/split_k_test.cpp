// SPDX-License-Identifier: MIT
// The split-K plan of the tensor-core chapters (common/split_k.h): no split for a grid of at
// least one wave, one wave's worth of slices under it, never a slice shorter than the pipeline,
// every slice starting below K.
#include "common/split_k.h"

#include <gtest/gtest.h>

namespace {

using sgemm::plan_split_k;
using sgemm::SplitK;

// The slices cover [0, K) exactly once: every slice starts below K, the last one may be short.
void expect_covers(const SplitK& s, int k) {
  ASSERT_GE(s.splits, 1);
  EXPECT_LT(static_cast<int64_t>(s.splits - 1) * s.k_slice, k);
  EXPECT_GE(static_cast<int64_t>(s.splits) * s.k_slice, k);
}

TEST(SplitK, AFullWaveIsNotSplit) {
  const SplitK s = plan_split_k(/*tiles=*/132, /*slots=*/132, /*k=*/8192, /*block_k=*/32, 3);
  EXPECT_EQ(s.splits, 1);
  EXPECT_EQ(s.k_slice, 8192);
  EXPECT_EQ(plan_split_k(1000, 132, 8192, 32, 3).splits, 1);
}

TEST(SplitK, UnderOneWaveFillsIt) {
  // 8192 x 128 x 8192 in 128 x 256 tiles: 64 blocks, 132 slots -> 2 slices of 4096.
  const SplitK s = plan_split_k(64, 132, 8192, 32, 3);
  EXPECT_EQ(s.splits, 2);
  EXPECT_EQ(s.k_slice, 4096);
  expect_covers(s, 8192);
  // One block: as many slices as slots, each a whole number of K tiles.
  const SplitK t = plan_split_k(1, 264, 1 << 20, 32, 3);
  EXPECT_EQ(t.splits, 256);  // kMaxSplits
  EXPECT_EQ(t.k_slice % 32, 0);
  expect_covers(t, 1 << 20);
}

TEST(SplitK, SlicesNeverShorterThanThePipeline) {
  // 16 K tiles, 3 stages: at most 5 slices however many slots are idle.
  const SplitK s = plan_split_k(4, 264, 512, 32, 3);
  EXPECT_LE(s.splits, 5);
  EXPECT_GE(s.k_slice, 3 * 32);
  expect_covers(s, 512);
  // K shorter than two pipelines: no split.
  EXPECT_EQ(plan_split_k(1, 264, 150, 32, 3).splits, 1);
}

TEST(SplitK, OddKIsCoveredExactly) {
  for (int k : {97, 1000, 4099, 65537, 262143}) {
    const SplitK s = plan_split_k(2, 132, k, 32, 3);
    expect_covers(s, k);
    if (s.splits > 1) EXPECT_EQ(s.k_slice % 32, 0) << k;
    if (k >= 4099) EXPECT_GT(s.splits, 1) << k;
  }
}

TEST(SplitK, WorkspaceHoldsEverySliceOnSixteenBytes) {
  sgemm::Problem p;
  p.m = 5;
  p.n = 3;
  p.k = 1 << 16;
  EXPECT_EQ(sgemm::split_k_slice_floats(p), 16);
  EXPECT_EQ(sgemm::split_k_workspace_bytes(p, SplitK{1, p.k}), 0u);
  EXPECT_EQ(sgemm::split_k_workspace_bytes(p, SplitK{4, 16384}), 4u * 16 * sizeof(float));
}

// The busiest SM's work decides: 128 blocks of 128 x 256 on 132 SMs cost one block each, the
// same as 512 blocks of 64 x 128 (4 per SM), so the tie keeps the big tile; 72 big blocks
// (1536^3) cost one big block, 288 small ones three small blocks: less.
TEST(SplitK, PlanCostIsTheBusiestSmsWork) {
  const SplitK whole{1, 2048};
  EXPECT_EQ(sgemm::plan_cost(128, 132, 128, 256, whole),
            sgemm::plan_cost(512, 132, 64, 128, whole));
  EXPECT_LT(sgemm::plan_cost(288, 132, 64, 128, SplitK{1, 1536}),
            sgemm::plan_cost(72, 132, 128, 256, SplitK{1, 1536}));
  // Slices multiply the blocks and divide their K.
  EXPECT_EQ(sgemm::plan_cost(64, 132, 128, 256, SplitK{2, 4096}), 128.0 * 256 * 4096);
}

// 08's tiles on the H100: 128 x 256 x 16 (4 stages, one block per SM) and 64 x 128 x 32 (3
// stages, two per SM), 132 SMs.
sgemm::Problem shape(int m, int n, int k) {
  sgemm::Problem p;
  p.m = m;
  p.n = n;
  p.k = k;
  return p;
}
constexpr sgemm::TileSpec kBig{128, 256, 16, 4, 132};
constexpr sgemm::TileSpec kSmall{64, 128, 32, 3, 264};

TEST(SplitK, TheBigTileWhenItFillsEverySm) {
  const sgemm::TilePlan plan = sgemm::plan_tiles(shape(8192, 8192, 8192), kBig, kSmall, 132, true);
  EXPECT_FALSE(plan.small_tile);  // 2048 big blocks; the small tile's count is 1.6 % lower
  EXPECT_EQ(plan.split.splits, 1);
}

TEST(SplitK, BelowOneWaveTheLighterBusiestSm) {
  // 2048^3: 128 big blocks (one each) against 512 small ones (4 on the busiest SM): a tie.
  EXPECT_FALSE(sgemm::plan_tiles(shape(2048, 2048, 2048), kBig, kSmall, 132, true).small_tile);
  // 1536^3: 72 big blocks against 288 small ones, 3 on the busiest SM: less work.
  EXPECT_TRUE(sgemm::plan_tiles(shape(1536, 1536, 1536), kBig, kSmall, 132, true).small_tile);
  // N = 128 fills half a big tile: the small tile, and two K slices fill its 264 slots.
  const sgemm::TilePlan skinny = sgemm::plan_tiles(shape(8192, 128, 8192), kBig, kSmall, 132, true);
  EXPECT_TRUE(skinny.small_tile);
  EXPECT_EQ(skinny.split.splits, 2);
  // One block of either tile: as many slices as slots allow.
  const sgemm::TilePlan deep = sgemm::plan_tiles(shape(64, 64, 1 << 20), kBig, kSmall, 132, true);
  EXPECT_TRUE(deep.small_tile);
  EXPECT_EQ(deep.split.splits, 256);
  EXPECT_EQ(sgemm::plan_tiles(shape(64, 64, 1 << 20), kBig, kSmall, 132, false).split.splits, 1);
}

// Split-K for the last round (chapter 09's big tile, 128 x 128 x 32, 3 stages, one block per SM;
// the H100's rates as 09 passes them). 1536^3: 144 blocks on 132 slots, a second round of 12;
// four slices make five rounds of a quarter of K. 1001 x 3003 x 5008: 192 blocks, two slices fill
// three rounds of half. 4096^3 (7.76 rounds) and 8192^3 (31.03): more slices shorten no round by
// more than the partial sums cost. K = 256 over a 4096 x 4096 C: the partial sums cost more than
// the K they save.
TEST(SplitK, RoundsCutKWhereTheLastRoundIdles) {
  const double flops = 0.87 * 66.9e12, bytes = 0.90 * 3352e9, launch = 1.9e-6;
  auto plan = [&](int m, int n, int k) {
    const sgemm::Problem p = shape(m, n, k);
    const sgemm::TileSpec big{128, 128, 32, 3, 132};
    const SplitK s = sgemm::plan_split_k_rounds(p, sgemm::tiles_of(p, big), 132, 128, 128, 32, 3,
                                                flops, bytes, launch);
    expect_covers(s, k);
    if (s.splits > 1) EXPECT_EQ(s.k_slice % 32, 0);
    return s;
  };
  EXPECT_EQ(plan(1536, 1536, 1536).splits, 4);
  EXPECT_EQ(plan(1536, 1536, 1536).k_slice, 384);
  EXPECT_EQ(plan(1001, 3003, 5008).splits, 2);
  EXPECT_EQ(plan(4096, 4096, 4096).splits, 1);
  EXPECT_EQ(plan(8192, 8192, 8192).splits, 1);
  EXPECT_EQ(plan(4096, 4096, 256).splits, 1);
  // Never a slice shorter than the pipeline: K = 64 is two K tiles.
  EXPECT_EQ(plan(1664, 1664, 64).splits, 1);
}

}  // namespace
