// SPDX-License-Identifier: MIT
// The TF32 rounding of common/tf32.h and the split built on it (split_tf32, chapters 09 and 14), on
// every finite float: big = tf32_value(x) is finite (cvt.rna.tf32.f32 rounds the top 4096 floats to
// Inf), x - big is exact in FP32, and big + small (split_tf32's small as the tensor core reads it:
// its 19 high bits) is x within 2^-23 |x| where x - big is 0 or a normal float (2^105 = 2^-23 2^128 for
// the truncated top values), and within 2^-137 where x - big is subnormal (TF32 keeps subnormals
// only to multiples of 2^-136): 09_3xtf32/README.md, "The range".
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "common/tf32.h"

namespace {

TEST(Tf32Split, EveryFiniteFloat) {
  int64_t nonfinite_big = 0, inexact = 0, over_bound = 0, subnormal_rest = 0;
  for (uint64_t u = 0; u <= 0xFFFFFFFFu; ++u) {
    const float x = sgemm::tf32_float_of(static_cast<uint32_t>(u));
    if (!std::isfinite(x)) continue;
    const float big = sgemm::tf32_value(x);
    if (!std::isfinite(big)) ++nonfinite_big;
    const float rest = x - big;
    const double exact = static_cast<double>(x) - static_cast<double>(big);
    if (static_cast<double>(rest) != exact) ++inexact;
    const sgemm::Tf32Split split = sgemm::split_tf32(x);
    if (split.big != sgemm::tf32_bits_of(big)) ++inexact;
    const double small = sgemm::tf32_float_of(split.small & 0xFFFFE000u);  // what the mma reads
    const double err = std::fabs(exact - small);
    const bool subnormal = rest != 0.0f && std::fabs(rest) < 0x1p-126f;
    subnormal_rest += subnormal;
    // The truncated top values (|x| >= the limit) leave up to 13 bits to small: 2^-23 of 2^128.
    const bool truncated = std::fabs(x) >= sgemm::tf32_float_of(sgemm::kTf32RoundUpLimit);
    const double bound = subnormal   ? 0x1p-137
                         : truncated ? 0x1p105
                                     : 0x1p-23 * std::fabs(static_cast<double>(x));
    if (err > bound) ++over_bound;
  }
  EXPECT_EQ(nonfinite_big, 0);
  EXPECT_EQ(inexact, 0);
  EXPECT_EQ(over_bound, 0);
  EXPECT_GT(subnormal_rest, 0);  // the bound's second case is exercised
}

TEST(Tf32Split, TopValuesTruncateInsteadOfOverflowing) {
  const float limit = sgemm::tf32_float_of(sgemm::kTf32RoundUpLimit);
  EXPECT_EQ(sgemm::tf32_bits_of(sgemm::tf32_value(sgemm::tf32_float_of(0x7F7FD000u))),
            0x7F7FE000u);  // a tie: rounds up
  EXPECT_EQ(sgemm::tf32_bits_of(sgemm::tf32_value(std::nextafter(limit, 0.0f))),
            0x7F7FE000u);  // rounds down
  EXPECT_EQ(sgemm::tf32_bits_of(sgemm::tf32_value(limit)),
            0x7F7FE000u);  // would round up to Inf: truncated
  EXPECT_EQ(sgemm::tf32_bits_of(sgemm::tf32_value(3.4028235e38f)), 0x7F7FE000u);  // FLT_MAX
  EXPECT_EQ(sgemm::tf32_bits_of(sgemm::tf32_value(-3.4028235e38f)), 0xFF7FE000u);
}

TEST(Tf32Split, InfAndNanStayAsTheyAre) {
  for (const uint32_t u : {0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00001u}) {
    EXPECT_EQ(sgemm::tf32_operand(sgemm::tf32_float_of(u)), u) << std::hex << u;
  }
  EXPECT_TRUE(std::isnan(sgemm::tf32_value(sgemm::tf32_float_of(0x7FC00000u))));
}

}  // namespace
