// SPDX-License-Identifier: MIT
// Option parsing and its errors: every bad input gets exit code 2 and one line naming the problem.
#include "common/options.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "common/exit_codes.h"

namespace sgemm {
namespace {

struct Parsed {
  ParseOutcome outcome;
  Options options;
};

Parsed parse(std::initializer_list<const char*> args) {
  std::vector<const char*> argv = {"03_thread_tiling"};
  argv.insert(argv.end(), args);
  Parsed p;
  p.outcome = parse_options(static_cast<int>(argv.size()), argv.data(), "03_thread_tiling",
                            "thread tiling", &p.options);
  return p;
}

void expect_usage_error(std::initializer_list<const char*> args, const std::string& needle) {
  const Parsed p = parse(args);
  EXPECT_FALSE(p.outcome.proceed);
  EXPECT_EQ(p.outcome.exit_code, kExitUsage);
  EXPECT_EQ(p.outcome.message.rfind("error: ", 0), 0u) << p.outcome.message;
  EXPECT_NE(p.outcome.message.find(needle), std::string::npos) << p.outcome.message;
  EXPECT_EQ(p.outcome.message.find('\n'), std::string::npos) << "one line: " << p.outcome.message;
}

TEST(Options, DefaultsToOneSquare4096) {
  const Parsed p = parse({});
  ASSERT_TRUE(p.outcome.proceed);
  ASSERT_EQ(p.options.shapes.size(), 1u);
  EXPECT_EQ(p.options.shapes[0].m, 4096);
  EXPECT_EQ(p.options.shapes[0].k, 4096);
  EXPECT_EQ(p.options.alpha, 1.0f);
  EXPECT_EQ(p.options.beta, 0.0f);
  EXPECT_TRUE(p.options.verify);
  EXPECT_TRUE(p.options.time_cublas);
  EXPECT_EQ(p.options.format, OutputFormat::kTable);
}

TEST(Options, SizeSweep) {
  const Parsed p = parse({"--size", "1024,2048,4096"});
  ASSERT_TRUE(p.outcome.proceed);
  ASSERT_EQ(p.options.shapes.size(), 3u);
  EXPECT_EQ(p.options.shapes[1].m, 2048);
  EXPECT_EQ(p.options.shapes[1].n, 2048);
  EXPECT_EQ(p.options.shapes[1].k, 2048);
}

TEST(Options, ZippedShapesBroadcastLengthOne) {
  const Parsed p = parse({"--m", "1,7,4099", "--n", "5", "--k", "13,1,129"});
  ASSERT_TRUE(p.outcome.proceed);
  ASSERT_EQ(p.options.shapes.size(), 3u);
  EXPECT_EQ(p.options.shapes[2].m, 4099);
  EXPECT_EQ(p.options.shapes[2].n, 5);
  EXPECT_EQ(p.options.shapes[2].k, 129);
}

TEST(Options, EverySetting) {
  const Parsed p = parse(
      {"--size",        "64",          "--alpha",   "1.5",         "--beta",   "-0.75",
       "--warmup",      "0",           "--samples", "7",           "--seed",   "42",
       "--device",      "1",           "--format",  "json",        "--output", "x.json",
       "--no-cublas",   "--tolerance", "8",         "--reference", "cpu",      "--verify-only",
       "--time-budget", "0.5"});
  ASSERT_TRUE(p.outcome.proceed) << p.outcome.message;
  const Options& o = p.options;
  EXPECT_EQ(o.alpha, 1.5f);
  EXPECT_EQ(o.beta, -0.75f);
  EXPECT_EQ(o.warmup, 0);
  EXPECT_EQ(o.samples, 7);
  EXPECT_EQ(o.seed, 42u);
  EXPECT_EQ(o.device, 1);
  EXPECT_EQ(o.format, OutputFormat::kJson);
  EXPECT_EQ(o.output_path, "x.json");
  EXPECT_FALSE(o.time_cublas);
  EXPECT_EQ(o.tolerance, 8.0);
  EXPECT_EQ(o.reference, Reference::kCpu);
  EXPECT_TRUE(o.verify_only);
  EXPECT_EQ(o.time_budget_s, 0.5);
  EXPECT_NE(o.command_line.find("--format json"), std::string::npos);
}

TEST(Options, SizesMustBePositive) {
  expect_usage_error({"--size", "0"}, "--size must be >= 1 (got 0)");
  expect_usage_error({"--size", "64,-2"}, "-2");
  expect_usage_error({"--m", "8", "--n", "8", "--k", "0"}, "--k must be >= 1 (got 0)");
}

TEST(Options, NonNumericAndOverflowingSizes) {
  expect_usage_error({"--size", "abc"}, "abc");
  expect_usage_error({"--size", "12x"}, "12x");
  expect_usage_error({"--size", "99999999999"}, "99999999999");  // > INT_MAX
  expect_usage_error({"--m", "3000000000", "--n", "1", "--k", "1"}, "3000000000");
  expect_usage_error({"--alpha", "one"}, "one");
}

TEST(Options, SizesSayWhatIsWrong) {
  expect_usage_error({"--size", "99999999999"}, "--size 99999999999 is out of range: a dimension is 1 .. 2147483647");
  expect_usage_error({"--size", "1,2,,3"}, "--size has an empty item in '1,2,,3'");
  expect_usage_error({"--size", "1024,"}, "empty item");
  expect_usage_error({"--m", "8", "--n", ",8", "--k", "8"}, "--n has an empty item");
  expect_usage_error({"--size", "abc"}, "--size takes positive integers, comma-separated (got 'abc')");
}

TEST(Options, DistributionReferenceAndAccuracy) {
  const Parsed p = parse({"--dist", "wide", "--reference", "fp64", "--no-accuracy"});
  ASSERT_TRUE(p.outcome.proceed) << p.outcome.message;
  EXPECT_EQ(p.options.dist, Distribution::kWide);
  EXPECT_EQ(p.options.reference, Reference::kFp64);
  EXPECT_FALSE(p.options.accuracy);
  EXPECT_TRUE(parse({}).options.accuracy);
  EXPECT_EQ(parse({"--dist", "normal"}).options.dist, Distribution::kNormal);
  EXPECT_EQ(parse({"--dist", "extreme"}).options.dist, Distribution::kExtreme);
  expect_usage_error({"--dist", "cauchy"}, "--dist must be uniform, normal, wide or extreme");
}

TEST(Options, AccuracyLimit) {
  EXPECT_EQ(parse({}).options.accuracy_limit, 0.0);  // not checked
  const Parsed p = parse({"--verify-only", "--accuracy-limit", "2"});
  ASSERT_TRUE(p.outcome.proceed) << p.outcome.message;
  EXPECT_EQ(p.options.accuracy_limit, 2.0);
  EXPECT_TRUE(p.options.accuracy);
  EXPECT_TRUE(p.options.verify_only);
  EXPECT_EQ(parse({"--accuracy-limit", "0.5", "--no-verify"}).options.accuracy_limit, 0.5);
  for (const char* bad : {"0", "-2", "inf", "nan"}) {
    expect_usage_error({"--accuracy-limit", bad}, "--accuracy-limit must be a finite number > 0");
  }
  expect_usage_error({"--accuracy-limit", "two"}, "two");
  // The limit compares errors against FP64: it cannot go with the flag that skips them.
  expect_usage_error({"--accuracy-limit", "2", "--no-accuracy"},
                     "--accuracy-limit needs the errors against FP64, which --no-accuracy skips");
}

TEST(Options, UnknownFlag) { expect_usage_error({"--frobnicate"}, "frobnicate"); }

TEST(Options, ShapeFlagsGoTogether) {
  expect_usage_error({"--size", "64", "--m", "8"}, "not both");
  expect_usage_error({"--m", "8", "--n", "8"}, "--m, --n and --k go together");
  expect_usage_error({"--m", "1,2", "--n", "1,2,3", "--k", "4"}, "same length");
}

TEST(Options, BadValues) {
  expect_usage_error({"--format", "xml"}, "--format must be table, csv or json");
  expect_usage_error({"--reference", "magic"}, "--reference must be cublas, cpu or fp64");
  expect_usage_error({"--samples", "0"}, "--samples must be >= 1");
  expect_usage_error({"--warmup", "-1"}, "--warmup must be >= 0");
  expect_usage_error({"--device", "-1"}, "--device must be >= 0");
  expect_usage_error({"--tolerance", "0"}, "--tolerance must be > 0");
  expect_usage_error({"--alpha", "nan"}, "finite");
  expect_usage_error({"--verify-only", "--no-verify"}, "nothing to do");
  expect_usage_error({"--reference", "cpu", "--size", "4096"},
                     "--reference cpu is for small shapes");
  EXPECT_TRUE(parse({"--reference", "cpu", "--size", "2048"}).outcome.proceed);
}

TEST(Options, HelpListsExamplesAndExitCodes) {
  const Parsed p = parse({"--help"});
  EXPECT_FALSE(p.outcome.proceed);
  EXPECT_EQ(p.outcome.exit_code, kExitPass);
  for (const char* needle :
       {"--size", "--m", "--alpha", "--format", "--verify-only", "Examples:", "Exit codes:",
        "2  bad usage", "--output", "cannot be written", "3  CUDA or runtime failure", "--dist",
        "--reference", "extreme", "--accuracy-limit", "an error against FP64 above the limit"}) {
    EXPECT_NE(p.outcome.message.find(needle), std::string::npos) << needle;
  }
}

TEST(Options, Version) {
  const Parsed p = parse({"--version"});
  EXPECT_FALSE(p.outcome.proceed);
  EXPECT_EQ(p.outcome.exit_code, kExitPass);
  EXPECT_NE(p.outcome.message.find("03_thread_tiling (sgemm-tutorial"), std::string::npos);
}

}  // namespace
}  // namespace sgemm
