// SPDX-License-Identifier: MIT
// The verification logic: NaN and Inf never pass, the tolerance grows with K, the first mismatch
// is located, and the CPU reference computes alpha*A*B + beta*C.
#include "common/verify.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "common/fill.h"

namespace sgemm {
namespace {

std::vector<float> random_matrix(int64_t rows, int64_t cols, uint64_t stream) {
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < v.size(); ++i) v[i] = uniform_pm1(7, stream, i);
  return v;
}

TEST(Verify, IdenticalPasses) {
  const auto c = random_matrix(5, 7, 1);
  const VerifyResult r = verify(c.data(), c.data(), 5, 7, 100, 16.0);
  EXPECT_TRUE(r.pass);
  EXPECT_EQ(r.mismatches, 0);
  EXPECT_EQ(r.max_abs_err, 0.0);
  EXPECT_EQ(r.rel_fro_err, 0.0);
}

TEST(Verify, NaNNeverPasses) {
  auto want = random_matrix(4, 4, 1);
  auto got = want;
  got[6] = std::numeric_limits<float>::quiet_NaN();
  const VerifyResult r = verify(got.data(), want.data(), 4, 4, 1 << 20, 1e9);  // huge tolerance
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_EQ(r.first_row, 1);
  EXPECT_EQ(r.first_col, 2);
  EXPECT_TRUE(std::isnan(r.first_got));
  EXPECT_TRUE(std::isnan(r.max_abs_err));
}

TEST(Verify, PoisonedOutputFailsEverywhere) {
  // What the harness sees when a kernel writes nothing: every element is the NaN poison.
  const auto want = random_matrix(3, 3, 1);
  std::vector<float> got(9, std::numeric_limits<float>::quiet_NaN());
  const VerifyResult r = verify(got.data(), want.data(), 3, 3, 8, 16.0);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.mismatches, 9);
  EXPECT_EQ(r.first_row, 0);
  EXPECT_EQ(r.first_col, 0);
}

TEST(Verify, InfNeverPasses) {
  auto want = random_matrix(2, 3, 1);
  auto got = want;
  got[5] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(verify(got.data(), want.data(), 2, 3, 64, 1e9).pass);
  // An Inf in the reference cannot vouch for anything either.
  auto bad_want = want;
  bad_want[0] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(verify(bad_want.data(), bad_want.data(), 2, 3, 64, 16.0).pass);
}

TEST(Verify, ToleranceGrowsWithSqrtK) {
  // All ones: rms 1, so the bound of an element is tol * eps * sqrt(K) * 2.
  std::vector<float> want(4, 1.0f), got(4, 1.0f);
  const double err = 16.0 * FLT_EPSILON * std::sqrt(100.0) * 2.0 * 1.5;  // 1.5x the K=100 bound
  got[3] = static_cast<float>(1.0 + err);
  EXPECT_FALSE(verify(got.data(), want.data(), 2, 2, 100, 16.0).pass);
  EXPECT_TRUE(verify(got.data(), want.data(), 2, 2, 400, 16.0).pass);  // sqrt(4) = 2x the bound
}

TEST(Verify, Tf32InputRoundingWidensTheBoundByTheResultScale) {
  // A TF32 chapter's products err by up to 2^-10 of themselves: the bound gains tol * 2^-11 *
  // (|want| + rms), independent of K. All ones: rms 1.
  std::vector<float> want(4, 1.0f), got(4, 1.0f);
  got[1] = 1.0f + 16.0f * 2.0f / 2048.0f * 0.9f;  // 90% of the TF32 term alone
  EXPECT_FALSE(verify(got.data(), want.data(), 2, 2, 64, 16.0).pass);  // FP32 contract: fails
  EXPECT_TRUE(verify(got.data(), want.data(), 2, 2, 64, 16.0, kTf32InputRounding).pass);
  got[1] = 1.0f + 16.0f * 2.0f * (1.0f / 2048.0f + FLT_EPSILON * 8.0f) * 1.1f;  // 110%
  EXPECT_FALSE(verify(got.data(), want.data(), 2, 2, 64, 16.0, kTf32InputRounding).pass);
}

TEST(Verify, ReportsFirstMismatchInRowMajorOrder) {
  auto want = random_matrix(6, 5, 1);
  auto got = want;
  got[3 * 5 + 4] += 1.0f;  // (3, 4)
  got[5 * 5 + 0] += 1.0f;  // (5, 0)
  const VerifyResult r = verify(got.data(), want.data(), 6, 5, 32, 16.0);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.mismatches, 2);
  EXPECT_EQ(r.first_row, 3);
  EXPECT_EQ(r.first_col, 4);
  EXPECT_FLOAT_EQ(r.first_got, want[19] + 1.0f);
  EXPECT_FLOAT_EQ(r.first_want, want[19]);
  EXPECT_NEAR(r.max_abs_err, 1.0, 1e-6);
}

TEST(Verify, NearZeroElementsUseTheRmsScale) {
  // An element whose true value is ~0 gets an absolute bound set by the matrix's rms, so the
  // rounding noise of a correct kernel does not fail it.
  std::vector<float> want = {100.0f, -100.0f, 1e-6f, 100.0f};
  std::vector<float> got = want;
  got[2] = 1e-6f + 1e-3f;
  EXPECT_TRUE(verify(got.data(), want.data(), 2, 2, 4096, 16.0).pass);
}

TEST(Verify, RelativeFrobeniusError) {
  std::vector<float> want = {3.0f, 4.0f};  // norm 5
  std::vector<float> got = {3.0f, 4.5f};
  EXPECT_NEAR(verify(got.data(), want.data(), 1, 2, 1, 16.0).rel_fro_err, 0.1, 1e-9);
}

TEST(CpuReference, SmallProductByHand) {
  // A = [1 2; 3 4; 5 6] (3x2), B = [1 0 2; 0 1 3] (2x3).
  const std::vector<float> A = {1, 2, 3, 4, 5, 6};
  const std::vector<float> B = {1, 0, 2, 0, 1, 3};
  std::vector<float> C(9, std::numeric_limits<float>::quiet_NaN());
  gemm_reference_cpu(3, 3, 2, 1.0f, A.data(), B.data(), 0.0f, C.data());  // beta 0: C not read
  const std::vector<float> expected = {1, 2, 8, 3, 4, 18, 5, 6, 28};
  EXPECT_EQ(C, expected);
}

TEST(CpuReference, AlphaAndBeta) {
  const std::vector<float> A = {1, 2};  // 1x2
  const std::vector<float> B = {3, 4};  // 2x1
  std::vector<float> C = {10};
  gemm_reference_cpu(1, 1, 2, 2.0f, A.data(), B.data(), -0.5f, C.data());
  EXPECT_FLOAT_EQ(C[0], 2.0f * 11.0f - 5.0f);
}

TEST(CpuReference, AgreesWithVerifyOnRandomData) {
  const int64_t m = 33, n = 17, k = 257;
  const auto A = random_matrix(m, k, 1), B = random_matrix(k, n, 2);
  std::vector<float> ref(static_cast<size_t>(m * n)), naive(static_cast<size_t>(m * n));
  gemm_reference_cpu(m, n, k, 1.0f, A.data(), B.data(), 0.0f, ref.data());
  // A plain FP32 dot product per element (another summation order) must pass the tolerance.
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t p = 0; p < k; ++p) acc += A[i * k + p] * B[p * n + j];
      naive[i * n + j] = acc;
    }
  }
  EXPECT_TRUE(verify(naive.data(), ref.data(), m, n, k, 16.0).pass);
  // Dropping one term of one element must not.
  naive[5] -= A[0 * k + k - 1] * B[(k - 1) * n + 5];
  EXPECT_FALSE(verify(naive.data(), ref.data(), m, n, k, 16.0).pass);
}

TEST(Fill, UniformInRangeDeterministicAndNotDegenerate) {
  double sum = 0.0;
  int zeros = 0;
  for (uint64_t i = 0; i < 100000; ++i) {
    const float v = uniform_pm1(2026, 1, i);
    ASSERT_GE(v, -1.0f);
    ASSERT_LT(v, 1.0f);
    EXPECT_EQ(v, uniform_pm1(2026, 1, i));
    sum += v;
    zeros += v == 0.0f;
  }
  EXPECT_NEAR(sum / 100000, 0.0, 0.01);
  EXPECT_LT(zeros, 5);
  EXPECT_NE(uniform_pm1(2026, 1, 0), uniform_pm1(2026, 2, 0));  // streams differ
  EXPECT_NE(uniform_pm1(2026, 1, 0), uniform_pm1(2027, 1, 0));  // seeds differ
  EXPECT_EQ(draw(Distribution::kUniform, 2026, 1, 17), uniform_pm1(2026, 1, 17));
}

TEST(Fill, NormalHasMeanZeroAndVarianceOne) {
  double sum = 0.0, sum_sq = 0.0;
  constexpr int kCount = 200000;
  for (uint64_t i = 0; i < kCount; ++i) {
    const float v = draw(Distribution::kNormal, 2026, 1, i);
    ASSERT_TRUE(std::isfinite(v));
    sum += v;
    sum_sq += static_cast<double>(v) * v;
  }
  EXPECT_NEAR(sum / kCount, 0.0, 0.01);
  EXPECT_NEAR(sum_sq / kCount, 1.0, 0.02);
}

TEST(Fill, WideSpansTheExponentRangeWithBothSigns) {
  int min_exp = 1000, max_exp = -1000, negative = 0;
  constexpr int kCount = 100000;
  for (uint64_t i = 0; i < kCount; ++i) {
    const float v = draw(Distribution::kWide, 2026, 2, i);
    int e = 0;
    const float mantissa = std::frexp(std::fabs(v), &e);  // |v| = mantissa * 2^e, in [0.5, 1)
    ASSERT_GE(mantissa, 0.5f);
    min_exp = std::min(min_exp, e - 1);  // as 1.x * 2^(e-1)
    max_exp = std::max(max_exp, e - 1);
    negative += v < 0;
  }
  EXPECT_EQ(min_exp, kWideMinExponent);
  EXPECT_EQ(max_exp, kWideMaxExponent);
  EXPECT_NEAR(static_cast<double>(negative) / kCount, 0.5, 0.01);
}

TEST(Fill, ExtremePutsANextToFltMaxAndBNear2ToTheMinus113) {
  int negative_a = 0, tf32_rounds_to_inf = 0;
  for (uint64_t i = 0; i < 100000; ++i) {
    const float a = draw(Distribution::kExtreme, 2026, kStreamA, i);
    const float b = draw(Distribution::kExtreme, 2026, kStreamB, i);
    ASSERT_TRUE(std::isfinite(a)) << i;
    ASSERT_GE(std::fabs(a), FLT_MAX / 2) << i;  // 2^127
    ASSERT_GE(std::fabs(b), std::ldexp(1.0f, -113)) << i;
    ASSERT_LT(std::fabs(b), std::ldexp(1.0f, -112)) << i;
    const double product = static_cast<double>(a) * b;  // exact in double
    ASSERT_GE(std::fabs(product), std::ldexp(1.0, 14));
    ASSERT_LT(std::fabs(product), std::ldexp(1.0, 16));
    negative_a += a < 0;
    // The last 4096 floats below Inf (0x7F7FF000 and up, common/tf32.h): rounding them to the
    // nearest TF32 value gives Inf, the overflow this distribution is there to catch.
    uint32_t bits = 0;
    std::memcpy(&bits, &a, sizeof bits);
    tf32_rounds_to_inf += (bits & 0x7FFFFFFFu) >= 0x7F7FF000u;
  }
  EXPECT_NEAR(negative_a / 100000.0, 0.5, 0.01);
  // 4096 of the binade's 2^23 mantissas: about 49 of 100000 draws.
  EXPECT_GT(tf32_rounds_to_inf, 20);
  EXPECT_LT(tf32_rounds_to_inf, 100);
  // C0 stays ordinary: uniform in [-1, 1), the same numbers as --dist uniform's.
  EXPECT_EQ(draw(Distribution::kExtreme, 2026, kStreamC0, 5),
            draw(Distribution::kUniform, 2026, kStreamC0, 5));
}

TEST(CpuReference, ExtremeInputsGiveAFiniteResultThatFp32AccumulationMeets) {
  // A near FLT_MAX, B near 2^-113: every product in [2^14, 2^16), every sum finite. A plain FP32
  // accumulation (the FMA keeps each product exact) passes the FP32 bound against the double one.
  const int64_t m = 7, n = 9, k = 1000;
  std::vector<float> A(m * k), B(k * n), ref(m * n), fp32(m * n);
  for (size_t i = 0; i < A.size(); ++i) A[i] = draw(Distribution::kExtreme, 3, kStreamA, i);
  for (size_t i = 0; i < B.size(); ++i) B[i] = draw(Distribution::kExtreme, 3, kStreamB, i);
  gemm_reference_cpu(m, n, k, 1.0f, A.data(), B.data(), 0.0f, ref.data());
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t p = 0; p < k; ++p) acc = std::fma(A[i * k + p], B[p * n + j], acc);
      fp32[i * n + j] = acc;
      ASSERT_TRUE(std::isfinite(ref[i * n + j]));
      ASSERT_LT(std::fabs(ref[i * n + j]), 65536.0f * k);
    }
  }
  const VerifyResult v = verify(fp32.data(), ref.data(), m, n, k, 16.0);
  EXPECT_TRUE(v.pass) << v.max_rel_err;
  EXPECT_GT(v.ref_rms, 16384.0);  // about sqrt(K) times a product's size: an ordinary result
}

}  // namespace
}  // namespace sgemm
