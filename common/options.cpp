// SPDX-License-Identifier: MIT
#include "common/options.h"

#include <CLI/CLI.hpp>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "common/exit_codes.h"
#include "common/version.h"

namespace sgemm {
namespace {

std::string join_command_line(int argc, const char* const* argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.find_first_of(" \t'\"") != std::string::npos) arg = "'" + arg + "'";
    line += (i ? " " : "") + arg;
  }
  return line;
}

std::string basename_of(const char* path) {
  std::string s = path ? path : "sgemm";
  const auto slash = s.find_last_of('/');
  return slash == std::string::npos ? s : s.substr(slash + 1);
}

std::string help_footer(const std::string& prog) {
  std::ostringstream f;
  f << "\nShapes: --size S[,S...] runs square S x S x S problems; --m/--n/--k take lists of equal\n"
       "length (a length-1 list is repeated), zipped into M x N x K shapes. Default: --size 4096.\n"
       "\nExamples:\n"
    << "  " << prog << "                          # 4096^3, compared with cuBLAS\n"
    << "  " << prog << " --size 1024,2048,4096    # a sweep\n"
    << "  " << prog << " --m 4095 --n 4097 --k 13 --alpha 1.5 --beta -0.5\n"
    << "  " << prog << " --size 8192 --format json --output run.json\n"
    << "  " << prog << " --size 257 --verify-only # one verified run (for sanitizers, ncu)\n"
    << "\nExit codes:\n"
       "  0  every shape verified (or --no-verify)\n"
       "  1  wrong result: some element outside the tolerance, or NaN/Inf\n"
       "  2  bad usage: unknown option, bad number, bad shape, bad device index\n"
       "  3  CUDA or runtime failure: no GPU, not enough device memory, launch failure\n";
  return f.str();
}

// Returns an empty string when every value is acceptable, else the one-line reason.
std::string validate(const Options& o) {
  if (!std::isfinite(o.alpha) || !std::isfinite(o.beta)) return "--alpha and --beta must be finite";
  if (o.warmup < 0) return "--warmup must be >= 0 (got " + std::to_string(o.warmup) + ")";
  if (o.samples < 1) return "--samples must be >= 1 (got " + std::to_string(o.samples) + ")";
  if (!(o.time_budget_s > 0)) return "--time-budget must be > 0 seconds";
  if (!(o.tolerance > 0) || !std::isfinite(o.tolerance)) return "--tolerance must be > 0";
  if (o.device < 0) return "--device must be >= 0 (got " + std::to_string(o.device) + ")";
  return {};
}

std::string check_dims(const char* flag, const std::vector<int>& values) {
  for (int v : values) {
    if (v < 1) return std::string(flag) + " must be >= 1 (got " + std::to_string(v) + ")";
  }
  return {};
}

}  // namespace

ParseOutcome parse_options(int argc, const char* const* argv, const std::string& chapter_name,
                           const std::string& chapter_title, Options* options) {
  Options o;
  const std::string prog = basename_of(argc > 0 ? argv[0] : nullptr);
  CLI::App app{chapter_name + ": " + chapter_title +
                   "\nSGEMM C = alpha*A*B + beta*C (FP32, "
                   "row-major), verified against cuBLAS FP32 and timed beside it.",
               prog};
  app.set_version_flag("--version",
                       std::string(chapter_name) + " (sgemm-tutorial " + kProjectVersion + ")");
  app.footer(help_footer(prog));

  std::vector<int> sizes, ms, ns, ks;
  std::string format = "table", reference = "cublas";
  bool no_verify = false, no_cublas = false;
  app.add_option("--size", sizes, "square sizes S[,S...]: M = N = K = S")->delimiter(',');
  app.add_option("--m", ms, "rows of A and C (list)")->delimiter(',');
  app.add_option("--n", ns, "columns of B and C (list)")->delimiter(',');
  app.add_option("--k", ks, "columns of A, rows of B (list)")->delimiter(',');
  app.add_option("--alpha", o.alpha, "scale of A*B")->capture_default_str();
  app.add_option("--beta", o.beta, "scale of the old C (0: C is not read)")->capture_default_str();
  app.add_option("--warmup", o.warmup, "untimed launches before sampling")->capture_default_str();
  app.add_option("--samples", o.samples, "timed launches per kernel (at most)")
      ->capture_default_str();
  app.add_option("--time-budget", o.time_budget_s,
                 "seconds of kernel time per shape after which sampling stops (>= 5 samples)")
      ->capture_default_str();
  app.add_flag("--no-verify", no_verify, "skip verification");
  app.add_flag("--verify-only", o.verify_only, "one verified run, no timing");
  app.add_flag("--no-cublas", no_cublas, "do not time cuBLAS (it stays the reference)");
  app.add_option("--tolerance", o.tolerance,
                 "error bound in units of FLT_EPSILON*sqrt(K)*(|want|+rms)")
      ->capture_default_str();
  app.add_option("--reference", reference, "cublas, or cpu (double accumulation; small shapes)")
      ->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the random inputs")->capture_default_str();
  app.add_option("--device", o.device, "CUDA device index")->capture_default_str();
  app.add_option("--format", format, "table, csv or json")->capture_default_str();
  app.add_option("--output", o.output_path, "write the report to this file instead of stdout");

  ParseOutcome outcome;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::ostringstream out, err;
    outcome.exit_code = app.exit(e, out, err) == 0 ? kExitPass : kExitUsage;
    if (outcome.exit_code == kExitPass) {
      outcome.message = out.str();
    } else {
      std::string what = e.what();
      outcome.message = "error: " + what + " (see " + prog + " --help)";
    }
    return outcome;
  }

  std::string problem;
  if (!sizes.empty() && (!ms.empty() || !ns.empty() || !ks.empty())) {
    problem = "use --size or --m/--n/--k, not both";
  } else if (!sizes.empty()) {
    problem = check_dims("--size", sizes);
    for (int s : sizes) o.shapes.push_back({s, s, s});
  } else if (!ms.empty() || !ns.empty() || !ks.empty()) {
    if (ms.empty() || ns.empty() || ks.empty()) {
      problem = "--m, --n and --k go together";
    } else {
      const size_t count = std::max({ms.size(), ns.size(), ks.size()});
      for (const auto* list : {&ms, &ns, &ks}) {
        if (list->size() != 1 && list->size() != count) {
          problem = "--m, --n and --k lists must have the same length (or length 1)";
        }
      }
      if (problem.empty()) problem = check_dims("--m", ms);
      if (problem.empty()) problem = check_dims("--n", ns);
      if (problem.empty()) problem = check_dims("--k", ks);
      for (size_t i = 0; problem.empty() && i < count; ++i) {
        o.shapes.push_back(
            {ms[ms.size() == 1 ? 0 : i], ns[ns.size() == 1 ? 0 : i], ks[ks.size() == 1 ? 0 : i]});
      }
    }
  } else {
    o.shapes.push_back({4096, 4096, 4096});
  }

  if (format == "table") {
    o.format = OutputFormat::kTable;
  } else if (format == "csv") {
    o.format = OutputFormat::kCsv;
  } else if (format == "json") {
    o.format = OutputFormat::kJson;
  } else if (problem.empty()) {
    problem = "--format must be table, csv or json (got '" + format + "')";
  }
  if (reference == "cublas") {
    o.reference = Reference::kCublas;
  } else if (reference == "cpu") {
    o.reference = Reference::kCpu;
  } else if (problem.empty()) {
    problem = "--reference must be cublas or cpu (got '" + reference + "')";
  }
  o.verify = !no_verify;
  o.time_cublas = !no_cublas;
  if (problem.empty()) problem = validate(o);
  if (problem.empty() && o.verify_only && !o.verify) {
    problem = "--verify-only and --no-verify leave nothing to do";
  }
  for (const Shape& s : o.shapes) {
    // The CPU reference is a plain loop: past ~1e10 multiply-adds it takes minutes.
    const double macs = static_cast<double>(s.m) * s.n * s.k;
    if (problem.empty() && o.verify && o.reference == Reference::kCpu && macs > 1e10) {
      problem = "--reference cpu is for small shapes (at most 1e10 multiply-adds): " +
                std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
                " would take minutes";
    }
  }
  if (!problem.empty()) {
    outcome.exit_code = kExitUsage;
    outcome.message = "error: " + problem + " (see " + prog + " --help)";
    return outcome;
  }

  o.command_line = join_command_line(argc, argv);
  *options = std::move(o);
  outcome.proceed = true;
  return outcome;
}

}  // namespace sgemm
