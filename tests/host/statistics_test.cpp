// SPDX-License-Identifier: MIT
// The timing summary: the median and the (p90 - p10) / median noise of a sample.
#include "common/statistics.h"

#include <gtest/gtest.h>

#include <vector>

namespace sgemm {
namespace {

TEST(Statistics, MedianOfOddAndEvenSamples) {
  EXPECT_DOUBLE_EQ(summarize({3.0f, 1.0f, 2.0f}).median_ms, 2.0);
  EXPECT_DOUBLE_EQ(summarize({4.0f, 1.0f, 2.0f, 3.0f}).median_ms, 2.5);
}

TEST(Statistics, NoiseIsTheSpreadOfTheMiddleEightyPercent) {
  std::vector<float> ms;
  for (int i = 0; i <= 10; ++i) ms.push_back(static_cast<float>(10 + i));  // 10 .. 20
  const Timing t = summarize(ms);
  EXPECT_EQ(t.samples, 11);
  EXPECT_DOUBLE_EQ(t.median_ms, 15.0);
  EXPECT_NEAR(t.noise, (19.0 - 11.0) / 15.0, 1e-12);
}

TEST(Statistics, EmptySampleIsZero) {
  const Timing t = summarize({});
  EXPECT_EQ(t.samples, 0);
  EXPECT_EQ(t.median_ms, 0.0);
}

}  // namespace
}  // namespace sgemm
