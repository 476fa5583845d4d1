// SPDX-License-Identifier: MIT
// Command-line options of every chapter binary. Host-only, so the parsing and its errors are unit
// tested without a GPU (tests/host/options_test.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/fill.h"

namespace sgemm {

struct Shape {
  int m = 0;
  int n = 0;
  int k = 0;
};

enum class OutputFormat { kTable, kCsv, kJson };
// What the chapter's result is verified against: cuBLAS in the mode of the chapter's precision
// contract (default), a double-accumulating CPU loop (small shapes), or an FP64 GEMM on the GPU.
enum class Reference { kCublas, kCpu, kFp64 };

struct Options {
  std::vector<Shape> shapes;  // the sweep, in the order given
  float alpha = 1.0f;
  float beta = 0.0f;
  int warmup = 3;              // untimed launches before sampling (module load, clocks, caches)
  int samples = 30;            // timed launches per kernel and shape (upper bound, see budget)
  double time_budget_s = 2.0;  // stop sampling a shape after this much kernel time (>= 5 samples)
  bool verify = true;
  bool verify_only = false;  // one verified run, no timing (sanitizers, profilers)
  bool time_cublas = true;
  double tolerance = 16.0;  // in units of FLT_EPSILON * sqrt(K); see verify.h
  Reference reference = Reference::kCublas;
  Distribution dist = Distribution::kUniform;
  bool accuracy = true;  // errors against an FP64 GEMM, for the chapter and for cuBLAS
  // The accuracy contract (--accuracy-limit R): a shape fails when the chapter's err rms or err max
  // exceeds R times cuBLAS's (verify.h, judge_accuracy). 0: not checked.
  double accuracy_limit = 0.0;
  uint64_t seed = 2026;
  int device = 0;
  OutputFormat format = OutputFormat::kTable;
  std::string output_path;   // empty: stdout
  std::string command_line;  // as typed, for the report
};

// What parse_options() decided: either run (proceed), or stop with exit_code after printing
// message (to stdout for --help/--version, to stderr for an error).
struct ParseOutcome {
  bool proceed = false;
  int exit_code = 0;
  std::string message;
};

// Parses "S[,S...]" (one or more arguments of comma-separated integers) into values in
// [1, INT_MAX]. Returns an empty string, or the one-line reason the text is refused.
std::string parse_dimensions(const std::string& flag, const std::vector<std::string>& args,
                             std::vector<int>* values);

ParseOutcome parse_options(int argc, const char* const* argv, const std::string& chapter_name,
                           const std::string& chapter_title, Options* options);

}  // namespace sgemm
