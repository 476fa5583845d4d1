// SPDX-License-Identifier: MIT
#include "common/options.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
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
    << "  " << prog << " --size 4096 --verify-only --accuracy-limit 2\n"
    << "      # fail if the error against FP64 exceeds 2x cuBLAS's on the same inputs\n"
    << "\nExit codes:\n"
       "  0  every shape verified (or --no-verify)\n"
       "  1  wrong result: some element outside the tolerance, or NaN/Inf, or (with\n"
       "     --accuracy-limit) an error against FP64 above the limit\n"
       "  2  bad usage: unknown option, bad number, bad shape, bad device index, an --output\n"
       "     file that cannot be written\n"
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

// The shapes of --size, or of the zipped --m/--n/--k lists (a length-1 list repeats), or the
// default 4096^3. Returns the reason when the flags do not fit together.
std::string shapes_from(const std::vector<int>& sizes, const std::vector<int>& ms,
                        const std::vector<int>& ns, const std::vector<int>& ks,
                        std::vector<Shape>* shapes) {
  const bool zipped = !ms.empty() || !ns.empty() || !ks.empty();
  if (!sizes.empty() && zipped) return "use --size or --m/--n/--k, not both";
  if (!sizes.empty()) {
    for (int s : sizes) shapes->push_back({s, s, s});
    return {};
  }
  if (!zipped) {
    shapes->push_back({4096, 4096, 4096});
    return {};
  }
  if (ms.empty() || ns.empty() || ks.empty()) return "--m, --n and --k go together";
  const size_t count = std::max({ms.size(), ns.size(), ks.size()});
  for (const auto* list : {&ms, &ns, &ks}) {
    if (list->size() != 1 && list->size() != count) {
      return "--m, --n and --k lists must have the same length (or length 1)";
    }
  }
  for (size_t i = 0; i < count; ++i) {
    shapes->push_back(
        {ms[ms.size() == 1 ? 0 : i], ns[ns.size() == 1 ? 0 : i], ks[ks.size() == 1 ? 0 : i]});
  }
  return {};
}

}  // namespace

std::string parse_dimensions(const std::string& flag, const std::vector<std::string>& args,
                             std::vector<int>* values) {
  values->clear();
  for (const std::string& arg : args) {
    size_t start = 0;
    while (true) {
      const size_t comma = arg.find(',', start);
      const std::string item =
          arg.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (item.empty()) {
        return flag + " has an empty item in '" + arg + "': give sizes like 1024,2048";
      }
      errno = 0;
      char* end = nullptr;
      const long long v = std::strtoll(item.c_str(), &end, 10);
      if (end == item.c_str() || *end != '\0') {
        return flag + " takes positive integers, comma-separated (got '" + item + "')";
      }
      if (errno == ERANGE || v > INT_MAX) {
        return flag + " " + item + " is out of range: a dimension is 1 .. " +
               std::to_string(INT_MAX);
      }
      if (v < 1) return flag + " must be >= 1 (got " + item + ")";
      values->push_back(static_cast<int>(v));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return {};
}

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

  // Dimensions are read as text and parsed here, so that an empty item, a word or a number past
  // INT_MAX each get their own message.
  std::vector<std::string> size_args, m_args, n_args, k_args;
  std::string format = "table", reference = "cublas", dist = "uniform";
  bool no_verify = false, no_cublas = false, no_accuracy = false;
  app.add_option("--size", size_args, "square sizes S[,S...]: M = N = K = S");
  app.add_option("--m", m_args, "rows of A and C (list)");
  app.add_option("--n", n_args, "columns of B and C (list)");
  app.add_option("--k", k_args, "columns of A, rows of B (list)");
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
  app.add_option("--reference", reference,
                 "cublas (the mode of the chapter's precision contract), cpu (double "
                 "accumulation; small shapes) or fp64 (a double GEMM on the GPU)")
      ->capture_default_str();
  app.add_option("--dist", dist,
                 "input distribution: uniform in [-1, 1), normal (0, 1), wide (random sign, "
                 "exponents -20..20), or extreme (A in +-[FLT_MAX/2, FLT_MAX], B in "
                 "+-[2^-113, 2^-112), C uniform)")
      ->capture_default_str();
  app.add_flag("--no-accuracy", no_accuracy,
               "skip the errors against an FP64 GEMM (chapter and cuBLAS FP32)");
  CLI::Option* limit_option = app.add_option(
      "--accuracy-limit", o.accuracy_limit,
      "R: fail (exit 1) when the chapter's err rms or err max against FP64 exceeds R times "
      "cuBLAS's on the same inputs (cuBLAS FP32 for an FP32 chapter, TF32 for a TF32 one)");
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

  std::vector<int> sizes, ms, ns, ks;
  std::string problem = parse_dimensions("--size", size_args, &sizes);
  if (problem.empty()) problem = parse_dimensions("--m", m_args, &ms);
  if (problem.empty()) problem = parse_dimensions("--n", n_args, &ns);
  if (problem.empty()) problem = parse_dimensions("--k", k_args, &ks);
  if (problem.empty()) problem = shapes_from(sizes, ms, ns, ks, &o.shapes);

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
  } else if (reference == "fp64") {
    o.reference = Reference::kFp64;
  } else if (problem.empty()) {
    problem = "--reference must be cublas, cpu or fp64 (got '" + reference + "')";
  }
  if (dist == "uniform") {
    o.dist = Distribution::kUniform;
  } else if (dist == "normal") {
    o.dist = Distribution::kNormal;
  } else if (dist == "wide") {
    o.dist = Distribution::kWide;
  } else if (dist == "extreme") {
    o.dist = Distribution::kExtreme;
  } else if (problem.empty()) {
    problem = "--dist must be uniform, normal, wide or extreme (got '" + dist + "')";
  }
  o.accuracy = !no_accuracy;
  o.verify = !no_verify;
  o.time_cublas = !no_cublas;
  if (problem.empty()) problem = validate(o);
  // Checked here, not in validate(): 0 means "not checked" inside Options, but given on the
  // command line it is refused like any other value <= 0.
  if (problem.empty() && limit_option->count() > 0) {
    if (!(o.accuracy_limit > 0) || !std::isfinite(o.accuracy_limit)) {
      problem = "--accuracy-limit must be a finite number > 0 (a multiple of cuBLAS's error)";
    } else if (!o.accuracy) {
      problem = "--accuracy-limit needs the errors against FP64, which --no-accuracy skips";
    }
  }
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
