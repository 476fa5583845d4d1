// SPDX-License-Identifier: MIT
#include "common/verify.h"

#include "common/report.h"  // format_number

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

namespace sgemm {

namespace {

// Rows are split into a fixed number of chunks, whatever the number of threads, so the sums (and
// so the error figures) come out the same on every machine.
constexpr int64_t kChunks = 64;

struct ChunkResult {
  double sum_sq_ref = 0.0;
  double sum_sq_err = 0.0;
  double max_abs_err = 0.0;
  double max_rel_err = 0.0;
  bool ref_finite = true;
  int64_t mismatches = 0;
  int64_t first_index = -1;
};

template <typename Body>
void for_each_chunk(int64_t count, const Body& body) {
  const int64_t threads = std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, kChunks);
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int64_t c = t; c < kChunks; c += threads) {
        body(c, count * c / kChunks, count * (c + 1) / kChunks);
      }
    });
  }
  for (auto& thread : pool) thread.join();
}

// NaN sticks: once a figure is NaN it stays NaN, so a NaN result looks broken.
void keep_max(double* current, double value) {
  if (!std::isnan(*current) && !(value <= *current)) *current = value;
}

// Error figures as the report's table prints them; ratios and limits short.
std::string figure(double v) { return format_number("%.2e", v); }
std::string factor(double v) { return format_number("%.3g", v); }

// Why one figure breaks the contract, or "" when it keeps it.
std::string judge_figure(const char* what, double chapter, double cublas,
                         const std::string& cublas_name, double limit) {
  const std::string theirs = cublas_name + "'s";
  if (std::isnan(chapter)) return std::string(what) + " is NaN";
  if (!std::isfinite(cublas)) {
    return theirs + " " + what + " is " + figure(cublas) + ": nothing to compare with";
  }
  if (chapter <= limit * cublas) return {};
  if (cublas == 0.0) {
    return std::string(what) + " " + figure(chapter) + " where " + theirs + " is 0";
  }
  return std::string(what) + " " + figure(chapter) + " = " + factor(chapter / cublas) + "x " +
         theirs + " " + figure(cublas);
}

}  // namespace

AccuracyVerdict judge_accuracy(const ErrorStats& chapter, const ErrorStats& cublas,
                               const std::string& cublas_name, double limit) {
  AccuracyVerdict v;
  v.limit = limit;
  std::string reasons;
  const auto add = [&](const std::string& reason) {
    if (!reason.empty()) reasons += (reasons.empty() ? "" : "; ") + reason;
  };
  // The figures leave NaN and Inf elements out, so those are judged on their own.
  if (chapter.nonfinite > cublas.nonfinite) {
    add(std::to_string(chapter.nonfinite) + " elements of C are NaN or Inf, " + cublas_name +
        "'s result has " + std::to_string(cublas.nonfinite));
  }
  add(judge_figure("err rms", chapter.rms_rel_c, cublas.rms_rel_c, cublas_name, limit));
  add(judge_figure("err max", chapter.max_rel_c, cublas.max_rel_c, cublas_name, limit));
  v.pass = reasons.empty();
  if (!v.pass) v.reason = reasons + " (--accuracy-limit " + factor(limit) + ")";
  return v;
}

VerifyResult verify(const float* got, const float* want, int64_t m, int64_t n, int64_t k,
                    double tolerance, double input_rounding) {
  VerifyResult r;
  r.tolerance = tolerance;
  const int64_t count = m * n;
  std::vector<ChunkResult> chunks(kChunks);

  for_each_chunk(count, [&](int64_t c, int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const double w = want[i];
      if (!std::isfinite(w)) chunks[c].ref_finite = false;
      chunks[c].sum_sq_ref += w * w;
    }
  });
  double sum_sq_ref = 0.0;
  bool ref_finite = true;
  for (const auto& c : chunks) {
    sum_sq_ref += c.sum_sq_ref;
    ref_finite = ref_finite && c.ref_finite;
  }
  r.ref_rms = count > 0 ? std::sqrt(sum_sq_ref / static_cast<double>(count)) : 0.0;
  const double scale =
      tolerance * (FLT_EPSILON * std::sqrt(static_cast<double>(k)) + input_rounding);

  for_each_chunk(count, [&](int64_t c, int64_t begin, int64_t end) {
    ChunkResult& cr = chunks[c];
    for (int64_t i = begin; i < end; ++i) {
      const double g = got[i];
      const double w = want[i];
      const double err = std::fabs(g - w);
      const double bound = scale * (std::fabs(w) + r.ref_rms);
      // Written so that a NaN anywhere counts as a mismatch.
      const bool ok = std::isfinite(g) && std::isfinite(w) && err <= bound;
      if (!ok) {
        if (cr.mismatches == 0) cr.first_index = i;
        ++cr.mismatches;
      }
      keep_max(&cr.max_abs_err, err);
      keep_max(&cr.max_rel_err, err / std::fmax(std::fabs(w), r.ref_rms));
      cr.sum_sq_err += err * err;
    }
  });
  double sum_sq_err = 0.0;
  for (const auto& c : chunks) {  // in row-major order, so the first mismatch is the first chunk's
    if (c.mismatches > 0 && r.mismatches == 0) {
      r.first_row = c.first_index / n;
      r.first_col = c.first_index % n;
      r.first_got = got[c.first_index];
      r.first_want = want[c.first_index];
    }
    r.mismatches += c.mismatches;
    keep_max(&r.max_abs_err, c.max_abs_err);
    keep_max(&r.max_rel_err, c.max_rel_err);
    sum_sq_err += c.sum_sq_err;
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
