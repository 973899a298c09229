// What every sample does around its kernel (samples/common/sample_driver.hpp): the printed result
// with its MEASURE line, exit status 1 for a failed check, and memory accounting that refuses sizes
// before allocating.
#include "sample_driver.hpp"

#include <string>

#include <gtest/gtest.h>

#include <weft/jit/error.hpp>

namespace {

using namespace weft::samples;
using weft::ops::ErrorNorms;

TEST(SampleDriver, ReportsTheCheckAndTheMeasureLine) {
  int calls = 0;
  const RunSettings settings{.check = true, .warmup = 2, .iterations = 3, .threads = 1};
  for (const bool passes : {true, false}) {
    ErrorNorms norms;
    norms.l2_rel_error = passes ? 0 : 1;
    calls = 0;
    testing::internal::CaptureStdout();
    const int status = measure_and_report(settings, {.run = [&] { ++calls; },
                                                     .flops = 1e6,
                                                     .measure_tag = "aBC_1_2_3",
                                                     .verify = [&] { return Verdict{norms, 1e-6}; }});
    const std::string out = testing::internal::GetCapturedStdout();
    EXPECT_EQ(calls, 5);  // warm-up and timed calls
    EXPECT_EQ(status, passes ? 0 : 1);
    EXPECT_NE(out.find(passes ? "check: PASSED" : "check: FAILED"), std::string::npos) << out;
    EXPECT_NE(out.find("(3 iterations)\nGFLOPS: "), std::string::npos) << out;
    EXPECT_NE(out.find("\nMEASURE "), std::string::npos) << out;
    EXPECT_NE(out.find(" aBC_1_2_3\n"), std::string::npos) << out;
  }
}

TEST(SampleDriver, NoCheckNoVerdict) {
  testing::internal::CaptureStdout();
  const int status = measure_and_report({.check = false, .warmup = 0, .iterations = 1, .threads = 1},
                                        {.run = [] {}, .flops = 1, .measure_tag = "t", .verify = nullptr});
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(status, 0);
  EXPECT_EQ(out.find("check:"), std::string::npos) << out;
}

TEST(SampleDriver, SizesBeyondTheMachineAreRefusedBeforeTheBodyRuns) {
  MemoryTally memory;
  memory.add_floats({1 << 20, 1 << 20});
  memory.add_floats({1 << 30, 1 << 30, 1 << 30});  // overflows 64 bits
  EXPECT_EQ(memory.bytes(), weft::kBytesOverflow);
  bool ran = false;
  try {
    run_within_memory("the test's buffers", memory.bytes(), [&] { return ran = true, 0; });
    FAIL();
  } catch (const weft::MemoryError& e) {
    EXPECT_EQ(e.reason(), weft::MemoryError::Reason::overflow);
    EXPECT_NE(std::string(e.what()).find("the test's buffers needs more than 16 EiB"), std::string::npos);
  }
  EXPECT_FALSE(ran);
  EXPECT_EQ(run_within_memory("small", 64, [] { return 7; }), 7);
}

}  // namespace
