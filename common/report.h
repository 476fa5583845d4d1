// SPDX-License-Identifier: MIT
// The report: a device header, then one row per shape, as a readable table, CSV or JSON.
// Host-only; the numbers are computed by the harness, this file only formats them.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "common/device.h"
#include "common/error_stats.h"
#include "common/options.h"
#include "common/verify.h"

namespace sgemm {

struct Row {
  std::string chapter;
  int m = 0, n = 0, k = 0;
  std::optional<double> time_ms;  // median
  std::optional<double> noise;    // (p90 - p10) / median
  std::optional<double> tflops;
  std::optional<double> cublas_time_ms;
  std::optional<double> cublas_tflops;
  std::optional<double> pct_cublas;
  std::optional<double> pct_peak;
  int samples = 0;
  double ratio = 0;  // the chapter's modeled FLOP per byte
  double ideal_ratio = 0;
  double ridge = 0;
  std::string bound;
  bool verified = false;
  bool pass = false;
  double max_abs_err = 0, max_rel_err = 0, rel_fro_err = 0;
  int64_t mismatches = 0;
  int64_t first_row = -1, first_col = -1;
  float first_got = 0, first_want = 0;
  // The determinism check: elements whose bits differ between two runs on the same inputs
  // (-1: not checked). Any difference fails the shape.
  int64_t run_differences = -1;
  // Errors against an FP64 GEMM of the same inputs (common/error_stats.h): the chapter's, cuBLAS
  // FP32's, and for a TF32 chapter cuBLAS TF32's. Empty when skipped; accuracy_note says why.
  std::optional<ErrorStats> fp64_err;
  std::optional<ErrorStats> cublas_fp32_err;
  std::optional<ErrorStats> cublas_tf32_err;
  std::string accuracy_note;
  // The accuracy contract's verdict (--accuracy-limit); empty when not checked. A broken contract
  // fails the shape, verified or not.
  std::optional<AccuracyVerdict> accuracy_contract;
  std::string status() const {
    if (accuracy_contract && !accuracy_contract->pass) return "FAIL";
    return !verified ? "SKIP" : pass && run_differences <= 0 ? "PASS" : "FAIL";
  }
};

struct RunInfo {
  std::string chapter;
  std::string title;
  std::string command_line;
  std::string date;           // ISO 8601, UTC
  std::string reference;      // what the result was verified against
  std::string precision;      // the chapter's precision contract: "FP32" or "TF32"
  std::string compared_with;  // the cuBLAS mode it is timed against
  const Options* options = nullptr;
};

// Writes rows as they come (table and CSV stream; JSON is written whole at finish()).
class Reporter {
 public:
  Reporter(std::ostream& out, OutputFormat format) : out_(out), format_(format) {}
  void begin(const RunInfo& run, const DeviceInfo& device);
  void row(const Row& row);
  void finish();

 private:
  std::ostream& out_;
  OutputFormat format_;
  RunInfo run_;
  DeviceInfo device_;
  std::string json_rows_;
  int rows_ = 0;
};

std::string format_bytes(double bytes);  // "1.50 GB" (powers of 1000)
// One number through a printf format of one double conversion: format_number("%.2e", x).
std::string format_number(const char* format, double value);

const char* distribution_name(Distribution dist);  // "uniform", "normal", "wide", "extreme"

}  // namespace sgemm
