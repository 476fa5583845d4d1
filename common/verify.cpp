// SPDX-License-Identifier: MIT
#include "common/verify.h"

#include <cfloat>
#include <algorithm>
#include <cmath>
#include <vector>

namespace sgemm {

VerifyResult verify(const float* got, const float* want, int64_t m, int64_t n, int64_t k,
                    double tolerance) {
  VerifyResult r;
  r.tolerance = tolerance;
  const int64_t count = m * n;

  double sum_sq_ref = 0.0;
  bool ref_finite = true;
  for (int64_t i = 0; i < count; ++i) {
    const double w = want[i];
    if (!std::isfinite(w)) ref_finite = false;
    sum_sq_ref += w * w;
  }
  r.ref_rms = count > 0 ? std::sqrt(sum_sq_ref / static_cast<double>(count)) : 0.0;
  const double scale = tolerance * FLT_EPSILON * std::sqrt(static_cast<double>(k));

  double sum_sq_err = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    const double g = got[i];
    const double w = want[i];
    const double err = std::fabs(g - w);
    const double bound = scale * (std::fabs(w) + r.ref_rms);
    // Written as !(err <= bound) so that a NaN anywhere counts as a mismatch.
    const bool ok = std::isfinite(g) && std::isfinite(w) && err <= bound;
    if (!ok) {
      if (r.mismatches == 0) {
        r.first_row = i / n;
        r.first_col = i % n;
        r.first_got = got[i];
        r.first_want = want[i];
      }
      ++r.mismatches;
    }
    // A NaN sticks in the error figures on purpose: a NaN result must look broken.
    if (!std::isnan(r.max_abs_err) && !(err <= r.max_abs_err)) r.max_abs_err = err;
    const double rel = err / std::fmax(std::fabs(w), r.ref_rms);
    if (!std::isnan(r.max_rel_err) && !(rel <= r.max_rel_err)) r.max_rel_err = rel;
    sum_sq_err += err * err;
  }
  r.rel_fro_err = sum_sq_ref > 0.0 ? std::sqrt(sum_sq_err / sum_sq_ref) : std::sqrt(sum_sq_err);
  r.pass = ref_finite && r.mismatches == 0 && count > 0;
  return r;
}

void gemm_reference_cpu(int64_t m, int64_t n, int64_t k, float alpha, const float* A,
                        const float* B, float beta, float* C) {
  std::vector<double> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    // i-k-j order: the inner loop walks B and the accumulator row contiguously.
    for (int64_t p = 0; p < k; ++p) {
      const double a = A[i * k + p];
      const float* b = B + p * n;
      for (int64_t j = 0; j < n; ++j) row[j] += a * b[j];
    }
    float* c = C + i * n;
    for (int64_t j = 0; j < n; ++j) {
      const double old = beta != 0.0f ? static_cast<double>(beta) * c[j] : 0.0;
      c[j] = static_cast<float>(static_cast<double>(alpha) * row[j] + old);
    }
  }
}

}  // namespace sgemm
