// SPDX-License-Identifier: MIT
// The roofline arithmetic against the figures of the source analysis (seed 003, RTX 4090).
#include "common/roofline.h"

#include <gtest/gtest.h>

#include <string>

namespace sgemm {
namespace {

TEST(Roofline, IdealGemmRatioMatchesSource) {
  // 2MNK / ((MK + KN + 2MN) * 4): 128 at 1024^3 and 256 at 2048^3.
  EXPECT_DOUBLE_EQ(ratio(gemm_flops(1024, 1024, 1024), ideal_bytes(1024, 1024, 1024)), 128.0);
  EXPECT_DOUBLE_EQ(ratio(gemm_flops(2048, 2048, 2048), ideal_bytes(2048, 2048, 2048)), 256.0);
}

TEST(Roofline, RidgeOfTheSourceGpu) {
  // 82 TFLOP/s over 1008 GB/s: 81.3 FLOP/byte.
  EXPECT_NEAR(ridge_point(82e12, 1008e9), 81.3, 0.05);
}

TEST(Roofline, NaiveKernelRatio) {
  // Each of the MN threads reads K of A, K of B, and reads and writes one C: 2MN(K+1) words.
  // tile 1x1 is exactly that; the source's figure is 0.25 at 1024^3.
  const double bytes = tiled_bytes(1024, 1024, 1024, 1, 1);
  EXPECT_DOUBLE_EQ(bytes, 2.0 * 1024 * 1024 * (1024 + 1) * 4);
  EXPECT_NEAR(ratio(gemm_flops(1024, 1024, 1024), bytes), 0.25, 0.001);
}

TEST(Roofline, BlockTiling32x32) {
  // MNK(1/32 + 1/32) + 2MN words. The source quotes 8 at 1024^3: that is the ratio without the
  // 2MN term of C (2 * 1024 / (64 * 4)); with it the model gives 7.76, and 8 as K grows.
  const double flops = gemm_flops(1024, 1024, 1024);
  EXPECT_NEAR(ratio(flops, tiled_bytes(1024, 1024, 1024, 32, 32)), 7.76, 0.005);
  const double without_c = 4.0 * 1024.0 * 1024 * 1024 * (1.0 / 32 + 1.0 / 32);
  EXPECT_DOUBLE_EQ(ratio(flops, without_c), 8.0);
  const int64_t big_k = int64_t{1} << 30;
  EXPECT_NEAR(ratio(gemm_flops(1024, 1024, big_k), tiled_bytes(1024, 1024, big_k, 32, 32)), 8.0,
              0.001);
}

TEST(Roofline, ThreadTiling16x16Threads4x4Each) {
  // 16x16 threads computing 4x4 each: a 64x64 tile, 15.1 at 1024^3 in the source.
  EXPECT_NEAR(ratio(gemm_flops(1024, 1024, 1024), tiled_bytes(1024, 1024, 1024, 64, 64)), 15.1,
              0.05);
}

TEST(Roofline, PartialTilesAreCountedWhole) {
  // 129 rows need two 128-row tiles: B is read twice, as the kernel does.
  const double bytes = tiled_bytes(129, 128, 64, 128, 128);
  EXPECT_DOUBLE_EQ(bytes, 4.0 * (129.0 * 64 * 1 + 64.0 * 128 * 2 + 2.0 * 129 * 128));
}

TEST(Roofline, PeaksFromDeviceAttributes) {
  // H100 SXM: 132 SMs x 128 lanes x 2 x 1980 MHz; HBM3 2619 MHz x 5120 bit x 2.
  EXPECT_NEAR(fp32_peak_flops(132, 128, 1980e6) / 1e12, 66.9, 0.05);
  EXPECT_NEAR(dram_bandwidth_bytes(2619e6, 5120) / 1e9, 3352.3, 0.1);
  // RTX 4090: GDDR6X reports 10501 MHz on a 384-bit bus: the source's 1008 GB/s.
  EXPECT_NEAR(dram_bandwidth_bytes(10501e6, 384) / 1e9, 1008.1, 0.1);
}

TEST(Roofline, LanesTable) {
  EXPECT_EQ(fp32_lanes_per_sm(9, 0), 128);
  EXPECT_EQ(fp32_lanes_per_sm(8, 0), 64);
  EXPECT_EQ(fp32_lanes_per_sm(8, 6), 128);
  EXPECT_EQ(fp32_lanes_per_sm(8, 9), 128);
  EXPECT_EQ(fp32_lanes_per_sm(7, 0), 64);
  EXPECT_EQ(fp32_lanes_per_sm(3, 5), 0);
}

TEST(Roofline, BoundComparesWithRidge) {
  EXPECT_EQ(std::string(bound(0.25, 20.0)), "memory");
  EXPECT_EQ(std::string(bound(32.0, 20.0)), "compute");
}

}  // namespace
}  // namespace sgemm
