// SPDX-License-Identifier: MIT
#include "common/report.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>

namespace sgemm {

std::string format_number(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

namespace {

std::string opt_fmt(const char* format, const std::optional<double>& value) {
  return value ? format_number(format, *value) : "-";
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escape[8];  // %x takes an unsigned int: format_number's double would not do
          std::snprintf(escape, sizeof escape, "\\u%04x",
                        static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += escape;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// JSON has no NaN or Inf: those become null (a NaN error figure means the result was broken,
// which "status" already says).
std::string json_number(double v) { return std::isfinite(v) ? format_number("%.9g", v) : "null"; }
std::string json_number(const std::optional<double>& v) { return v ? json_number(*v) : "null"; }

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_number(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? format_number("%.9g", *v) : "";
}

// One format for the header and the rows keeps the columns aligned; all fields are strings.
const char* kTableFormat =
    "%-16s %6s %6s %6s %9s %6s %8s %8s %8s %6s %7s %7s  %-7s %9s  %9s %9s %9s %9s  %s";

std::string err_cell(const std::optional<ErrorStats>& e, bool rms) {
  if (!e) return "-";
  if (e->nonfinite > 0) return "nan";
  return format_number("%.2e", rms ? e->rms_rel_c : e->max_rel_c);
}

std::string json_errors(const std::optional<ErrorStats>& e) {
  if (!e) return "null";
  return "{\"rms_rel_c\": " + json_number(e->rms_rel_c) +
         ", \"max_rel_c\": " + json_number(e->max_rel_c) +
         ", \"rms_rel_ab\": " + json_number(e->rms_rel_ab) +
         ", \"max_rel_ab\": " + json_number(e->max_rel_ab) +
         ", \"nonfinite\": " + std::to_string(e->nonfinite) + "}";
}

std::string json_contract(const std::optional<AccuracyVerdict>& v) {
  if (!v) return "null";
  return "{\"limit\": " + json_number(v->limit) + ", \"pass\": " + (v->pass ? "true" : "false") +
         ", \"reason\": " + json_string(v->reason) + "}";
}

// Empty: not checked; "pass"; else the reason.
std::string csv_contract(const std::optional<AccuracyVerdict>& v) {
  if (!v) return "";
  return csv_field(v->pass ? "pass" : v->reason);
}

std::string csv_errors(const std::optional<ErrorStats>& e) {
  if (!e) return ",,,";
  return csv_number(e->rms_rel_c) + "," + csv_number(e->max_rel_c) + "," +
         csv_number(e->rms_rel_ab) + "," + csv_number(e->max_rel_ab);
}

const char* kCsvHeader =
    "chapter,m,n,k,time_ms,noise,tflops,cublas_time_ms,cublas_tflops,pct_cublas,pct_peak,samples,"
    "ratio,ideal_ratio,ridge,bound,max_abs_err,max_rel_err,rel_fro_err,mismatches,status,"
    "device,sm_clock_mhz,fp32_peak_tflops,dram_bandwidth_gbs,precision,run_differences,"
    "fp64_rms_rel_c,fp64_max_rel_c,fp64_rms_rel_ab,fp64_max_rel_ab,"
    "cublas_fp32_rms_rel_c,cublas_fp32_max_rel_c,cublas_fp32_rms_rel_ab,cublas_fp32_max_rel_ab,"
    "cublas_tf32_rms_rel_c,cublas_tf32_max_rel_c,cublas_tf32_rms_rel_ab,cublas_tf32_max_rel_ab,"
    "accuracy_limit,accuracy_contract";

}  // namespace

const char* distribution_name(Distribution dist) {
  switch (dist) {
    case Distribution::kNormal:
      return "normal";
    case Distribution::kWide:
      return "wide";
    case Distribution::kExtreme:
      return "extreme";
    case Distribution::kUniform:
    default:
      return "uniform";
  }
}

std::string format_bytes(double bytes) {
  if (bytes >= 1e9) return format_number("%.2f GB", bytes / 1e9);
  if (bytes >= 1e6) return format_number("%.2f MB", bytes / 1e6);
  if (bytes >= 1e3) return format_number("%.2f kB", bytes / 1e3);
  return format_number("%.0f B", bytes);
}

void Reporter::begin(const RunInfo& run, const DeviceInfo& device) {
  run_ = run;
  device_ = device;
  const Options& o = *run.options;
  if (format_ == OutputFormat::kCsv) {
    out_ << kCsvHeader << "\n";
    return;
  }
  if (format_ != OutputFormat::kTable) return;
  const auto& d = device;
  out_ << run.chapter << ": " << run.title << "\n";
  out_ << "device " << d.index << ": " << d.name << ", sm_" << d.cc_major << d.cc_minor << ", "
       << d.sms << " SMs at " << format_number("%.0f", d.sm_clock_mhz) << " MHz, "
       << format_bytes(static_cast<double>(d.memory_bytes)) << ", L2 "
       << format_bytes(static_cast<double>(d.l2_bytes)) << "\n";
  if (d.fp32_lanes_per_sm > 0) {
    out_ << "  FP32 peak " << format_number("%.1f", d.fp32_peak_tflops) << " TFLOP/s ("
         << d.fp32_lanes_per_sm << " lanes/SM x " << d.sms << " SMs x 2 x "
         << format_number("%.0f", d.sm_clock_mhz) << " MHz)";
  } else {
    out_ << "  FP32 peak unknown (sm_" << d.cc_major << d.cc_minor
         << " is not in the lanes table of common/roofline.cpp)";
  }
  out_ << " | DRAM " << format_number("%.0f", d.dram_bandwidth_gbs) << " GB/s ("
       << format_number("%.0f", d.mem_clock_mhz) << " MHz x " << d.bus_width_bits << " bit x 2)"
       << " | ridge " << format_number("%.1f", d.ridge) << " FLOP/B\n";
  out_ << "  driver " << d.driver << " | runtime " << d.runtime << " | cuBLAS " << d.cublas << "\n";
  out_ << "precision: " << run.precision << " contract, timed against " << run.compared_with
       << "\n";
  out_ << "reference: " << run.reference << " | inputs " << distribution_name(o.dist) << ", seed "
       << o.seed << " | alpha " << o.alpha << " beta " << o.beta << "\n";
  if (o.verify_only) {
    out_ << "timing: off (--verify-only)\n";
  } else {
    out_ << "timing: CUDA events, " << o.warmup << " warm-up, median of up to " << o.samples
         << " samples (" << format_number("%g", o.time_budget_s)
         << " s budget), L2 flushed before each sample"
         << (o.time_cublas ? ", cuBLAS alternated" : "") << "\n";
  }
  if (o.verify) {
    out_ << "verify: every element, |got-want| <= " << format_number("%g", o.tolerance)
         << " * (FLT_EPSILON * sqrt(K)" << (run.precision == "TF32" ? " + 2^-11" : "")
         << ") * (|want| + rms(want)); C poisoned with NaN before the run"
         << (o.beta != 0.0f ? " (beta != 0: C starts from seeded random values)" : "")
         << "; run twice, bit-identical\n";
  }
  if (o.accuracy) {
    out_ << "accuracy: error against an FP64 GEMM of the same inputs, relative to rms(C): "
            "rms and max, the chapter's then cuBLAS FP32's\n";
  }
  if (o.accuracy_limit > 0) {
    out_ << "accuracy limit: the chapter's err rms and err max at most "
         << format_number("%g", o.accuracy_limit) << " x "
         << (run.precision == "TF32" ? "cuBLAS TF32" : "cuBLAS FP32")
         << "'s on the same inputs (--accuracy-limit)\n";
  }
  out_ << "\n";
  char header[512];
  std::snprintf(header, sizeof header, kTableFormat, "chapter", "M", "N", "K", "time ms", "noise",
                "TFLOP/s", "cuBLAS", "%cuBLAS", "%peak", "ratio", "ideal", "bound", "max rel",
                "err rms", "cuBLAS", "err max", "cuBLAS", "result");
  out_ << header << "\n";
  out_.flush();
}

void Reporter::row(const Row& r) {
  ++rows_;
  if (format_ == OutputFormat::kTable) {
    char line[512];
    std::snprintf(line, sizeof line, kTableFormat, r.chapter.c_str(), std::to_string(r.m).c_str(),
                  std::to_string(r.n).c_str(), std::to_string(r.k).c_str(),
                  opt_fmt("%.4f", r.time_ms).c_str(),
                  r.noise ? format_number("%.1f%%", *r.noise * 100).c_str() : "-",
                  opt_fmt("%.2f", r.tflops).c_str(), opt_fmt("%.2f", r.cublas_tflops).c_str(),
                  r.pct_cublas ? format_number("%.1f%%", *r.pct_cublas).c_str() : "-",
                  r.pct_peak ? format_number("%.1f%%", *r.pct_peak).c_str() : "-",
                  format_number("%.2f", r.ratio).c_str(),
                  format_number("%.1f", r.ideal_ratio).c_str(), r.bound.c_str(),
                  r.verified ? format_number("%.2e", r.max_rel_err).c_str() : "-",
                  err_cell(r.fp64_err, true).c_str(), err_cell(r.cublas_fp32_err, true).c_str(),
                  err_cell(r.fp64_err, false).c_str(), err_cell(r.cublas_fp32_err, false).c_str(),
                  r.status().c_str());
    out_ << line << "\n";
    if (r.cublas_tf32_err) {
      out_ << "  cuBLAS TF32 on the same inputs: err rms " << err_cell(r.cublas_tf32_err, true)
           << ", err max " << err_cell(r.cublas_tf32_err, false) << "\n";
    }
    if (!r.accuracy_note.empty()) out_ << "  accuracy: " << r.accuracy_note << "\n";
    if (r.accuracy_contract && !r.accuracy_contract->pass) {
      out_ << "  accuracy limit exceeded: " << r.accuracy_contract->reason << "\n";
    }
    if (r.run_differences > 0) {
      out_ << "  not deterministic: a second run on the same inputs differs in "
           << r.run_differences << " of " << static_cast<int64_t>(r.m) * r.n << " elements\n";
    }
    if (r.verified && !r.pass) {
      if (r.mismatches > 0) {
        out_ << "  first mismatch at (row " << r.first_row << ", col " << r.first_col << "): got "
             << format_number("%.9g", r.first_got) << ", want "
             << format_number("%.9g", r.first_want) << "; " << r.mismatches << " of "
             << static_cast<int64_t>(r.m) * r.n << " elements outside the bound\n";
      } else {
        out_ << "  the reference itself holds NaN or Inf: nothing can be compared\n";
      }
    }
    out_.flush();
  } else if (format_ == OutputFormat::kCsv) {
    const auto& d = device_;
    out_ << csv_field(r.chapter) << "," << r.m << "," << r.n << "," << r.k << ","
         << csv_number(r.time_ms) << "," << csv_number(r.noise) << "," << csv_number(r.tflops)
         << "," << csv_number(r.cublas_time_ms) << "," << csv_number(r.cublas_tflops) << ","
         << csv_number(r.pct_cublas) << "," << csv_number(r.pct_peak) << "," << r.samples << ","
         << csv_number(r.ratio) << "," << csv_number(r.ideal_ratio) << "," << csv_number(r.ridge)
         << "," << r.bound << "," << (r.verified ? csv_number(r.max_abs_err) : "") << ","
         << (r.verified ? csv_number(r.max_rel_err) : "") << ","
         << (r.verified ? csv_number(r.rel_fro_err) : "") << "," << r.mismatches << ","
         << r.status() << "," << csv_field(d.name) << "," << csv_number(d.sm_clock_mhz) << ","
         << csv_number(d.fp32_peak_tflops) << "," << csv_number(d.dram_bandwidth_gbs) << ","
         << run_.precision << "," << r.run_differences << "," << csv_errors(r.fp64_err) << ","
         << csv_errors(r.cublas_fp32_err) << "," << csv_errors(r.cublas_tf32_err) << ","
         << (r.accuracy_contract ? csv_number(r.accuracy_contract->limit) : "") << ","
         << csv_contract(r.accuracy_contract) << "\n";
    out_.flush();
  } else {
    std::ostringstream j;
    j << (json_rows_.empty() ? "" : ",\n") << "    {\"chapter\": " << json_string(r.chapter)
      << ", \"m\": " << r.m << ", \"n\": " << r.n << ", \"k\": " << r.k
      << ", \"time_ms\": " << json_number(r.time_ms) << ", \"noise\": " << json_number(r.noise)
      << ", \"tflops\": " << json_number(r.tflops)
      << ", \"cublas_time_ms\": " << json_number(r.cublas_time_ms)
      << ", \"cublas_tflops\": " << json_number(r.cublas_tflops)
      << ", \"pct_cublas\": " << json_number(r.pct_cublas)
      << ", \"pct_peak\": " << json_number(r.pct_peak) << ", \"samples\": " << r.samples
      << ", \"ratio\": " << json_number(r.ratio)
      << ", \"ideal_ratio\": " << json_number(r.ideal_ratio)
      << ", \"ridge\": " << json_number(r.ridge) << ", \"bound\": " << json_string(r.bound)
      << ", \"max_abs_err\": " << (r.verified ? json_number(r.max_abs_err) : "null")
      << ", \"max_rel_err\": " << (r.verified ? json_number(r.max_rel_err) : "null")
      << ", \"rel_fro_err\": " << (r.verified ? json_number(r.rel_fro_err) : "null")
      << ", \"mismatches\": " << r.mismatches << ", \"status\": " << json_string(r.status())
      << ", \"precision\": " << json_string(run_.precision)
      << ", \"run_differences\": " << r.run_differences
      << ", \"fp64_error\": " << json_errors(r.fp64_err)
      << ", \"cublas_fp32_error\": " << json_errors(r.cublas_fp32_err)
      << ", \"cublas_tf32_error\": " << json_errors(r.cublas_tf32_err)
      << ", \"accuracy_note\": " << json_string(r.accuracy_note)
      << ", \"accuracy_contract\": " << json_contract(r.accuracy_contract)
      << ", \"first_mismatch\": ";
    if (r.verified && r.mismatches > 0) {
      j << "{\"row\": " << r.first_row << ", \"col\": " << r.first_col
        << ", \"got\": " << json_number(r.first_got) << ", \"want\": " << json_number(r.first_want)
        << "}";
    } else {
      j << "null";
    }
    j << "}";
    json_rows_ += j.str();
  }
}

void Reporter::finish() {
  if (format_ == OutputFormat::kTable) {
    if (rows_ == 0) out_ << "(no rows)\n";
    out_.flush();
    return;
  }
  if (format_ != OutputFormat::kJson) return;
  const auto& d = device_;
  const Options& o = *run_.options;
  out_ << "{\n  \"schema\": 1,\n  \"chapter\": " << json_string(run_.chapter)
       << ",\n  \"title\": " << json_string(run_.title)
       << ",\n  \"command\": " << json_string(run_.command_line)
       << ",\n  \"date\": " << json_string(run_.date)
       << ",\n  \"device\": {\"name\": " << json_string(d.name) << ", \"index\": " << d.index
       << ", \"compute_capability\": "
       << json_string(std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor))
       << ", \"sms\": " << d.sms << ", \"sm_clock_mhz\": " << json_number(d.sm_clock_mhz)
       << ", \"fp32_lanes_per_sm\": " << d.fp32_lanes_per_sm
       << ", \"fp32_peak_tflops\": " << json_number(d.fp32_peak_tflops)
       << ", \"mem_clock_mhz\": " << json_number(d.mem_clock_mhz)
       << ", \"bus_width_bits\": " << d.bus_width_bits
       << ", \"dram_bandwidth_gbs\": " << json_number(d.dram_bandwidth_gbs)
       << ", \"ridge_flop_per_byte\": " << json_number(d.ridge) << ", \"l2_bytes\": " << d.l2_bytes
       << ", \"memory_bytes\": " << d.memory_bytes << ", \"driver\": " << json_string(d.driver)
       << ", \"runtime\": " << json_string(d.runtime) << ", \"cublas\": " << json_string(d.cublas)
       << "},\n  \"settings\": {\"seed\": " << o.seed << ", \"warmup\": " << o.warmup
       << ", \"samples\": " << o.samples << ", \"time_budget_s\": " << json_number(o.time_budget_s)
       << ", \"alpha\": " << json_number(o.alpha) << ", \"beta\": " << json_number(o.beta)
       << ", \"verify\": " << (o.verify ? "true" : "false")
       << ", \"verify_only\": " << (o.verify_only ? "true" : "false")
       << ", \"tolerance\": " << json_number(o.tolerance)
       << ", \"reference\": " << json_string(run_.reference)
       << ", \"precision\": " << json_string(run_.precision)
       << ", \"cublas_mode\": " << json_string(run_.compared_with)
       << ", \"distribution\": " << json_string(distribution_name(o.dist))
       << ", \"accuracy\": " << (o.accuracy ? "true" : "false") << ", \"accuracy_limit\": "
       << (o.accuracy_limit > 0 ? json_number(o.accuracy_limit) : "null") << "},\n  \"rows\": [\n"
       << json_rows_ << "\n  ]\n}\n";
  out_.flush();
}

}  // namespace sgemm
