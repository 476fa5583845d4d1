// SPDX-License-Identifier: MIT
// The accuracy contract (--accuracy-limit R): the chapter's err rms and err max against FP64 at
// most R times cuBLAS's; NaN, Inf and a cuBLAS error of exactly 0 each get a definite verdict.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "common/verify.h"

namespace sgemm {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

ErrorStats errors(double rms, double max, int64_t nonfinite = 0) {
  ErrorStats e;
  e.rms_rel_c = rms;
  e.max_rel_c = max;
  // The per-element figures are reported, not judged: values that would fail any limit show it.
  e.rms_rel_ab = 1e3;
  e.max_rel_ab = 1e3;
  e.nonfinite = nonfinite;
  return e;
}

const ErrorStats kCublas = errors(1.15e-6, 1.84e-5);

AccuracyVerdict judge(const ErrorStats& chapter, const ErrorStats& cublas = kCublas,
                      double limit = 2.0) {
  return judge_accuracy(chapter, cublas, "cuBLAS FP32", limit);
}

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(AccuracyContract, WithinTheLimitPasses) {
  const AccuracyVerdict v = judge(errors(3.11e-7, 9.0e-6));
  EXPECT_TRUE(v.pass);
  EXPECT_TRUE(v.reason.empty()) << v.reason;
  EXPECT_EQ(v.limit, 2.0);
  // Exactly R times cuBLAS's is still within the limit.
  EXPECT_TRUE(judge(errors(2.3e-6, 3.68e-5)).pass);
  // Equal errors (a TF32 chapter against cuBLAS TF32) pass any limit >= 1.
  EXPECT_TRUE(judge(kCublas, kCublas, 1.0).pass);
}

TEST(AccuracyContract, RmsOverTheLimitFailsWithBothFigures) {
  // The never-promoting 3xTF32 kernel: 25 times cuBLAS FP32's rms error.
  const AccuracyVerdict v = judge(errors(2.87e-5, 3.0e-5));
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.reason, "err rms 2.87e-05 = 25x cuBLAS FP32's 1.15e-06 (--accuracy-limit 2)");
  EXPECT_EQ(v.reason.find('\n'), std::string::npos);
}

TEST(AccuracyContract, MaxOverTheLimitFailsAlone) {
  // One bad tile hardly moves the rms error; the max error catches it.
  const AccuracyVerdict v = judge(errors(1.2e-6, 4.6e-5));
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.reason, "err max 4.60e-05 = 2.5x cuBLAS FP32's 1.84e-05 (--accuracy-limit 2)");
}

TEST(AccuracyContract, BothOverTheLimitAreNamedOnOneLine) {
  const AccuracyVerdict v = judge(errors(3e-6, 1e-4), kCublas, 1.25);
  EXPECT_FALSE(v.pass);
  EXPECT_TRUE(
      contains(v.reason, "err rms 3.00e-06 = 2.61x cuBLAS FP32's 1.15e-06; err max 1.00e-04"))
      << v.reason;
  EXPECT_TRUE(contains(v.reason, "(--accuracy-limit 1.25)")) << v.reason;
  EXPECT_EQ(v.reason.find('\n'), std::string::npos);
}

TEST(AccuracyContract, ALimitBelowOneAsksForMoreAccuracyThanCublas) {
  EXPECT_TRUE(judge(errors(3.11e-7, 9.0e-6), kCublas, 0.5).pass);
  EXPECT_FALSE(judge(errors(1.0e-6, 9.0e-6), kCublas, 0.5).pass);
}

TEST(AccuracyContract, NaNNeverPasses) {
  EXPECT_FALSE(judge(errors(kNaN, 1e-6)).pass);
  EXPECT_FALSE(judge(errors(1e-7, kNaN)).pass);
  EXPECT_TRUE(contains(judge(errors(kNaN, 1e-6)).reason, "err rms is NaN"));
  // A NaN (or Inf) baseline leaves nothing to compare with: the contract cannot be shown to hold.
  const AccuracyVerdict v = judge(errors(1e-7, 1e-6), errors(kNaN, 1.84e-5));
  EXPECT_FALSE(v.pass);
  EXPECT_TRUE(contains(v.reason, "cuBLAS FP32's err rms is nan: nothing to compare with"))
      << v.reason;
  EXPECT_FALSE(judge(errors(1e-7, 1e-6), errors(1e-6, kInf)).pass);
}

TEST(AccuracyContract, InfiniteErrorFails) {
  const AccuracyVerdict v = judge(errors(kInf, 1e-6));
  EXPECT_FALSE(v.pass);
  EXPECT_TRUE(contains(v.reason, "err rms inf = infx")) << v.reason;
}

TEST(AccuracyContract, NonFiniteElementsFailEvenWhenTheFiguresPass) {
  // The figures leave NaN and Inf elements out: a C that is partly Inf could show tiny errors.
  const AccuracyVerdict v = judge(errors(1e-7, 1e-6, 210));
  EXPECT_FALSE(v.pass);
  EXPECT_TRUE(contains(v.reason, "210 elements of C are NaN or Inf, cuBLAS FP32's result has 0"))
      << v.reason;
  // As many as cuBLAS's own (inputs whose product overflows FP32) is no breach.
  EXPECT_TRUE(judge(errors(1e-7, 1e-6, 4), errors(1.15e-6, 1.84e-5, 4)).pass);
}

TEST(AccuracyContract, ACublasErrorOfExactlyZeroAllowsOnlyZero) {
  // Tiny K: every product and sum exact in cuBLAS FP32, so its error is 0 and R x 0 is 0.
  const ErrorStats exact = errors(0.0, 0.0);
  EXPECT_TRUE(judge(errors(0.0, 0.0), exact).pass);
  const AccuracyVerdict v = judge(errors(3.1e-8, 0.0), exact);
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.reason, "err rms 3.10e-08 where cuBLAS FP32's is 0 (--accuracy-limit 2)");
  // No division by zero anywhere: no "inf" or "nan" ratio in the reason.
  EXPECT_FALSE(contains(v.reason, "inf")) << v.reason;
  EXPECT_FALSE(contains(v.reason, "nan")) << v.reason;
}

TEST(AccuracyContract, NamesTheBaselineItWasGiven) {
  const AccuracyVerdict v =
      judge_accuracy(errors(7.0e-4, 1e-3), errors(2.61e-4, 1e-3), "cuBLAS TF32", 1.25);
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.reason, "err rms 7.00e-04 = 2.68x cuBLAS TF32's 2.61e-04 (--accuracy-limit 1.25)");
}

}  // namespace
}  // namespace sgemm
