// SPDX-License-Identifier: MIT
// Verification of a chapter's C against a reference, element by element. Host-only and unit tested
// (tests/host/verify_test.cpp). docs/methodology.md explains the tolerance.
#pragma once

#include <cstdint>
#include <string>

#include "common/error_stats.h"

namespace sgemm {

struct VerifyResult {
  bool pass = false;
  int64_t mismatches = 0;    // elements outside the bound (NaN and Inf included)
  double max_abs_err = 0.0;  // max |got - want|
  double max_rel_err = 0.0;  // max |got - want| / max(|want|, rms(want))
  double rel_fro_err = 0.0;  // ||got - want||_F / ||want||_F
  double ref_rms = 0.0;      // rms(want): the scale of the result
  double tolerance = 0.0;    // the factor the bound was built with
  // First element outside the bound, in row-major order (valid when mismatches > 0).
  int64_t first_row = -1;
  int64_t first_col = -1;
  float first_got = 0.0f;
  float first_want = 0.0f;
};

// Element (i, j) passes when
//   |got - want| <= tolerance * (FLT_EPSILON * sqrt(K) + input_rounding) * (|want| + rms),
// rms being the root mean square of the reference. Rounding error of a K-term FP32 dot product
// grows like sqrt(K) for random data, and two correct summation orders differ by about that much;
// rms keeps the bound meaningful for elements whose value happens to be near zero.
// input_rounding is the relative error of each product when the inputs are rounded before the
// multiply: 0 for FP32 (the products are exact in the FMA), kTf32InputRounding for TF32. Those
// errors are independent from term to term, so their sum grows like the result's own scale, not
// with sqrt(K) on top of it (docs/methodology.md derives both terms).
// A NaN or Inf in either array never passes (comparisons are written so that NaN fails them).
VerifyResult verify(const float* got, const float* want, int64_t m, int64_t n, int64_t k,
                    double tolerance, double input_rounding = 0.0);

// TF32 keeps 10 explicit mantissa bits: its unit roundoff is u = 2^-11. Each product of two
// rounded inputs errs by a random fraction of up to 2u of itself; summed over K independent terms
// that has a standard deviation of about 0.8 u sqrt(sum_k (a_k b_k)^2), about 0.8 u rms(C) for
// zero-mean inputs. With tolerance 16 the bound sits near 20 such deviations: about 3x the
// largest error expected among 10^8 elements, while a dropped term of a 4096-long dot product
// (about 0.25 on a result scale of 21) still fails it.
inline constexpr double kTf32InputRounding = 1.0 / 2048.0;

// The accuracy contract (--accuracy-limit R, docs/methodology.md "The accuracy contract"): the
// chapter's errors against FP64, err rms (rms_rel_c) and err max (max_rel_c), must each be at most
// R times cuBLAS's on the same inputs, in the cuBLAS mode of the chapter's precision contract; and
// C may hold no more NaN or Inf elements than cuBLAS's result. A NaN figure never passes, and
// neither does a chapter figure above a cuBLAS figure of exactly 0 (R x 0 allows only 0). A cuBLAS
// figure that is NaN or Inf gives nothing to compare with: that fails too, since the contract could
// not be checked.
struct AccuracyVerdict {
  bool pass = false;
  double limit = 0.0;  // R
  // Empty when the contract holds; else one line naming each error over the limit with both
  // figures, e.g. "err rms 2.87e-05 = 25x cuBLAS FP32's 1.15e-06 (--accuracy-limit 2)".
  std::string reason;
};

// cublas_name names the baseline in the reason ("cuBLAS FP32"); limit is R (> 0).
AccuracyVerdict judge_accuracy(const ErrorStats& chapter, const ErrorStats& cublas,
                               const std::string& cublas_name, double limit);

// Reference on the CPU, accumulating in double: C = alpha * A * B + beta * C (row-major).
// For tests and small shapes (--reference cpu); when beta == 0, C is not read.
void gemm_reference_cpu(int64_t m, int64_t n, int64_t k, float alpha, const float* A,
                        const float* B, float beta, float* C);

}  // namespace sgemm
