// The command line every sample shares (samples/common/sample_args.hpp): PARLOOPER's positional
// arguments with named options anywhere, the options of a run, and named errors.
#include "sample_args.hpp"

#include <omp.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

using weft::samples::RunSettings;
using weft::samples::SampleArgs;
using weft::samples::UsageError;

void parse(SampleArgs& args, std::vector<std::string> words) {
  std::vector<char*> argv{const_cast<char*>("prog")};
  for (auto& w : words) argv.push_back(w.data());
  args.parse(static_cast<int>(argv.size()), argv.data());
}

std::string usage_error(std::vector<std::string> words) {
  SampleArgs args;
  try {
    parse(args, std::move(words));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(SampleArgs, PositionalAndOptionsInAnyOrder) {
  SampleArgs args;
  parse(args, {"aBC", "--threads", "2", "64", "--check=0", "-1"});
  EXPECT_EQ(args.positional(), (std::vector<std::string>{"aBC", "64", "-1"}));
  EXPECT_EQ(args.integer(1, "M", 0), 64);
  EXPECT_EQ(args.integer(2, "P", 0, -5, 5), -1);  // a negative number is an argument, not an option
  EXPECT_EQ(args.integer(5, "absent", 7), 7);
  const RunSettings run = args.run_settings(3);
  EXPECT_EQ(run.threads, 2);
  EXPECT_EQ(omp_get_max_threads(), 2);
  EXPECT_FALSE(run.check);
  EXPECT_EQ(run.warmup, 1);
  EXPECT_EQ(run.iterations, 10);
}

TEST(SampleArgs, RunSettingsReadNItersWhereTheSampleHasIt) {
  SampleArgs args;
  parse(args, {"aBC", "5", "--warmup", "0"});
  const RunSettings run = args.run_settings(1);
  EXPECT_EQ(run.iterations, 5);
  EXPECT_EQ(run.warmup, 0);
  EXPECT_TRUE(run.check);
}

TEST(SampleArgs, MalformedInputIsAUsageErrorNamingTheArgument) {
  EXPECT_EQ(usage_error({"--bogus", "1"}), "unknown option --bogus");
  EXPECT_EQ(usage_error({"--threads"}), "option --threads needs a value");
  EXPECT_EQ(usage_error({"--threads", "--check", "1"}), "option --threads needs a value");
  EXPECT_EQ(usage_error({"--threads", "-1"}), "--threads: -1 is outside [0, 4096]");
  EXPECT_EQ(usage_error({"--check", "2"}), "--check: 2 is outside [0, 1]");
  EXPECT_EQ(usage_error({"--warmup", "1", "--warmup", "2"}), "--warmup is given twice");
  SampleArgs args;
  parse(args, {"x", "12abc", "0", "99999999999999999999"});
  EXPECT_THROW(args.integer(1, "M", 0), UsageError);
  EXPECT_THROW(args.integer(2, "M", 0), UsageError);
  EXPECT_THROW(args.integer(3, "M", 0), UsageError);
  EXPECT_THROW(args.run_settings(1), UsageError);  // n_iters is 12abc
  EXPECT_FALSE(args.switch_at(2, "flag"));
  EXPECT_THROW(args.switch_at(1, "flag"), UsageError);
}

TEST(SampleArgs, MissingAndExtraArgumentsAreNamed) {
  SampleArgs args;
  parse(args, {"aBC", "64", "64"});
  try {
    args.require({"LOOP_STRING", "M", "N", "K"}, "; the first four are LOOP_STRING M N K");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "missing K (argument 4); the first four are LOOP_STRING M N K");
  }
  EXPECT_NO_THROW(args.require({"LOOP_STRING", "M"}, ""));
  try {
    args.require_at_most(2, "X Y");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "unexpected argument '64' (argument 3): at most 2 positional arguments, X Y");
  }
}

TEST(SampleArgs, HelpEndsTheParse) {
  SampleArgs args;
  EXPECT_THROW(parse(args, {"aBC", "--help"}), CLI::CallForHelp);
}

}  // namespace
