// SPDX-License-Identifier: MIT
// The report: a device header, then one row per shape, as a readable table, CSV or JSON.
// Host-only; the numbers are computed by the harness, this file only formats them.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "common/options.h"

namespace sgemm {

struct DeviceInfo {
  std::string name;
  int index = 0;
  int cc_major = 0;
  int cc_minor = 0;
  int sms = 0;
  double sm_clock_mhz = 0;
  double mem_clock_mhz = 0;
  int bus_width_bits = 0;
  int64_t l2_bytes = 0;
  int64_t memory_bytes = 0;
  int fp32_lanes_per_sm = 0;  // 0: architecture not in the table
  double fp32_peak_tflops = 0;
  double dram_bandwidth_gbs = 0;
  double ridge = 0;    // FLOP per byte
  std::string driver;  // "13.0"
  std::string runtime;
  std::string cublas;  // "13.1.0"
};

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
  std::string status() const { return !verified ? "SKIP" : pass ? "PASS" : "FAIL"; }
};

struct RunInfo {
  std::string chapter;
  std::string title;
  std::string command_line;
  std::string date;       // ISO 8601, UTC
  std::string reference;  // what the result was compared with
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

}  // namespace sgemm
