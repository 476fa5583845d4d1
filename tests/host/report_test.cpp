// SPDX-License-Identifier: MIT
// The report formats: the columns the issue asks for, valid JSON values, CSV quoting.
#include "common/report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

namespace sgemm {
namespace {

DeviceInfo fixture_device() {
  DeviceInfo d;
  d.name = "Test GPU, \"quoted\"";
  d.cc_major = 9;
  d.sms = 132;
  d.sm_clock_mhz = 1980;
  d.fp32_lanes_per_sm = 128;
  d.fp32_peak_tflops = 66.9;
  d.dram_bandwidth_gbs = 3352.3;
  d.ridge = 19.96;
  return d;
}

Row fixture_row(bool pass) {
  Row r;
  r.chapter = "03_thread_tiling";
  r.m = r.n = r.k = 4096;
  r.time_ms = 3.1;
  r.noise = 0.012;
  r.tflops = 44.3;
  r.cublas_time_ms = 2.7;
  r.cublas_tflops = 50.9;
  r.pct_cublas = 87.0;
  r.pct_peak = 66.2;
  r.ratio = 32.1;
  r.ideal_ratio = 682.7;
  r.bound = "compute";
  r.verified = true;
  r.pass = pass;
  if (!pass) {
    r.mismatches = 3;
    r.first_row = 7;
    r.first_col = 9;
    r.first_got = std::numeric_limits<float>::quiet_NaN();
    r.first_want = 1.5f;
    r.max_abs_err = std::numeric_limits<double>::quiet_NaN();
    r.run_differences = 5;
  } else {
    r.run_differences = 0;
  }
  ErrorStats chapter_err;
  chapter_err.rms_rel_c = 1.15e-6;
  chapter_err.max_rel_c = 1.71e-5;
  chapter_err.rms_rel_ab = 3.0e-7;
  chapter_err.max_rel_ab = 2.0e-6;
  r.fp64_err = chapter_err;
  ErrorStats cublas_err = chapter_err;
  cublas_err.rms_rel_c = 1.2e-6;
  r.cublas_fp32_err = cublas_err;
  return r;
}

std::string render(OutputFormat format, bool pass, const Row* row = nullptr,
                   const Options& o = Options()) {
  std::ostringstream out;
  Reporter reporter(out, format);
  RunInfo run;
  run.chapter = "03_thread_tiling";
  run.title = "thread tiling";
  run.command_line = "bin/03 --size 4096";
  run.date = "2026-11-22T00:00:00Z";
  run.reference = "cuBLAS FP32";
  run.precision = "FP32";
  run.compared_with = "cuBLAS FP32 (CUBLAS_COMPUTE_32F)";
  run.options = &o;
  reporter.begin(run, fixture_device());
  reporter.row(row ? *row : fixture_row(pass));
  reporter.finish();
  return out.str();
}

// A verified, passing row whose error is 25 times cuBLAS FP32's, judged with --accuracy-limit 2.
Row contract_row(Options* o) {
  o->accuracy_limit = 2.0;
  Row r = fixture_row(true);
  r.fp64_err->rms_rel_c = 3.0e-5;
  r.accuracy_contract = judge_accuracy(*r.fp64_err, *r.cublas_fp32_err, "cuBLAS FP32", 2.0);
  return r;
}

TEST(Report, TableHasTheColumnsAndTheFirstMismatch) {
  const std::string t = render(OutputFormat::kTable, false);
  for (const char* needle : {"TFLOP/s",
                             "%cuBLAS",
                             "%peak",
                             "ratio",
                             "ideal",
                             "bound",
                             "max rel",
                             "err rms",
                             "err max",
                             "FAIL",
                             "ridge 20.0 FLOP/B",
                             "first mismatch at (row 7, col 9): got nan, want 1.5",
                             "44.30",
                             "87.0%",
                             "1.15e-06",
                             "1.20e-06",
                             "1.71e-05",
                             "precision: FP32 contract",
                             "inputs uniform",
                             "not deterministic: a second run on the same inputs differs in 5"}) {
    EXPECT_NE(t.find(needle), std::string::npos) << needle << "\n" << t;
  }
}

TEST(Report, JsonHasNoNaNLiterals) {
  const std::string j = render(OutputFormat::kJson, false);
  EXPECT_EQ(j.find("nan"), std::string::npos) << j;
  EXPECT_NE(j.find("\"status\": \"FAIL\""), std::string::npos);
  EXPECT_NE(j.find("\"first_mismatch\": {\"row\": 7, \"col\": 9, \"got\": null, \"want\": 1.5}"),
            std::string::npos)
      << j;
  EXPECT_NE(j.find("\"name\": \"Test GPU, \\\"quoted\\\"\""), std::string::npos) << j;
}

TEST(Report, JsonEscapesControlCharactersAsCodePoints) {
  Row r = fixture_row(true);
  r.accuracy_note = std::string(
      "a\x01"
      "b\x1f");  // two literals: \x01b would be one escape
  const std::string j = render(OutputFormat::kJson, true, &r);
  EXPECT_NE(j.find("\"accuracy_note\": \"a\\u0001b\\u001f\""), std::string::npos) << j;
}

TEST(Report, JsonCarriesTheErrorsAgainstFp64) {
  const std::string j = render(OutputFormat::kJson, true);
  EXPECT_NE(j.find("\"fp64_error\": {\"rms_rel_c\": 1.15e-06"), std::string::npos) << j;
  EXPECT_NE(j.find("\"cublas_fp32_error\": {\"rms_rel_c\": 1.2e-06"), std::string::npos) << j;
  EXPECT_NE(j.find("\"cublas_tf32_error\": null"), std::string::npos) << j;
  EXPECT_NE(j.find("\"precision\": \"FP32\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"distribution\": \"uniform\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"run_differences\": 0"), std::string::npos) << j;
}

TEST(Report, ANonDeterministicRunFails) {
  Row r = fixture_row(true);
  EXPECT_EQ(r.status(), "PASS");
  r.run_differences = 1;
  EXPECT_EQ(r.status(), "FAIL");
}

TEST(Report, ABrokenAccuracyContractFailsAndSaysWhy) {
  Options o;
  const Row r = contract_row(&o);
  EXPECT_EQ(r.status(), "FAIL");
  const std::string t = render(OutputFormat::kTable, true, &r, o);
  for (const char* needle :
       {"accuracy limit: the chapter's err rms and err max at most 2 x cuBLAS FP32's",
        "  accuracy limit exceeded: err rms 3.00e-05 = 25x cuBLAS FP32's 1.20e-06 "
        "(--accuracy-limit 2)\n",
        "FAIL"}) {
    EXPECT_NE(t.find(needle), std::string::npos) << needle << "\n" << t;
  }
  const std::string j = render(OutputFormat::kJson, true, &r, o);
  EXPECT_NE(j.find("\"accuracy_contract\": {\"limit\": 2, \"pass\": false, \"reason\": "
                   "\"err rms 3.00e-05 = 25x"),
            std::string::npos)
      << j;
  EXPECT_NE(j.find("\"accuracy_limit\": 2}"), std::string::npos) << j;
  const std::string c = render(OutputFormat::kCsv, true, &r, o);
  EXPECT_NE(c.find(",accuracy_limit,accuracy_contract\n"), std::string::npos) << c;
  EXPECT_NE(c.find(",2,err rms 3.00e-05 = 25x"), std::string::npos) << c;
}

TEST(Report, AKeptAccuracyContractChangesNothingButTheColumn) {
  Options o;
  Row r = contract_row(&o);
  r.accuracy_contract = judge_accuracy(*r.cublas_fp32_err, *r.cublas_fp32_err, "cuBLAS FP32", 2.0);
  EXPECT_EQ(r.status(), "PASS");
  const std::string t = render(OutputFormat::kTable, true, &r, o);
  EXPECT_EQ(t.find("accuracy limit exceeded"), std::string::npos) << t;
  EXPECT_NE(render(OutputFormat::kCsv, true, &r, o).find(",PASS,"), std::string::npos);
  EXPECT_NE(render(OutputFormat::kCsv, true, &r, o).find(",2,pass\n"), std::string::npos);
  // Not checked: null in the JSON, empty in the CSV.
  EXPECT_NE(render(OutputFormat::kJson, true).find("\"accuracy_contract\": null"),
            std::string::npos);
  EXPECT_NE(render(OutputFormat::kJson, true).find("\"accuracy_limit\": null"), std::string::npos);
  EXPECT_NE(render(OutputFormat::kCsv, true).find(",,\n"), std::string::npos);
}

TEST(Report, AnAccuracyContractFailsAShapeThatWasNotVerified) {
  Options o;
  Row r = contract_row(&o);
  r.verified = false;  // --no-verify
  EXPECT_EQ(r.status(), "FAIL");
  r.accuracy_contract->pass = true;
  EXPECT_EQ(r.status(), "SKIP");
}

TEST(Report, CsvQuotesFieldsWithCommas) {
  const std::string c = render(OutputFormat::kCsv, true);
  EXPECT_EQ(c.rfind("chapter,m,n,k,time_ms", 0), 0u);
  EXPECT_NE(c.find(",PASS,\"Test GPU, \"\"quoted\"\"\","), std::string::npos) << c;
}

TEST(Report, FormatBytes) {
  EXPECT_EQ(format_bytes(1.5e9), "1.50 GB");
  EXPECT_EQ(format_bytes(64e6), "64.00 MB");
  EXPECT_EQ(format_bytes(12), "12 B");
}

}  // namespace
}  // namespace sgemm
