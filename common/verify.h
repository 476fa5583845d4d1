// SPDX-License-Identifier: MIT
// Verification of a chapter's C against a reference, element by element. Host-only and unit tested
// (tests/host/verify_test.cpp). docs/methodology.md explains the tolerance.
#pragma once

#include <cstdint>

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

// Element (i, j) passes when |got - want| <= tolerance * FLT_EPSILON * sqrt(K) * (|want| + rms),
// rms being the root mean square of the reference. Rounding error of a K-term FP32 dot product
// grows like sqrt(K) for random data, and two correct summation orders differ by about that much;
// rms keeps the bound meaningful for elements whose value happens to be near zero. A NaN or Inf in
// either array never passes (comparisons are written so that NaN fails them).
VerifyResult verify(const float* got, const float* want, int64_t m, int64_t n, int64_t k,
                    double tolerance);

// Reference on the CPU, accumulating in double: C = alpha * A * B + beta * C (row-major).
// For tests and small shapes (--reference cpu); when beta == 0, C is not read.
void gemm_reference_cpu(int64_t m, int64_t n, int64_t k, float alpha, const float* A,
                        const float* B, float beta, float* C);

}  // namespace sgemm
