// weft-explain, run as a program: rendering, traces, engines, exit status on invalid input.
#include <gtest/gtest.h>

#include "run_program.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

#ifndef WEFT_EXPLAIN_PATH
#define WEFT_EXPLAIN_PATH ""
#endif

using Result = weft::test::ProgramResult;

Result explain(const std::string& args, const std::string& env = "") {
  return weft::test::run_program(env + " '" + std::string(WEFT_EXPLAIN_PATH) + "' " + args, "weft_explain");
}

class WeftExplain : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(WEFT_EXPLAIN_PATH).empty()) GTEST_SKIP() << "weft-explain was not built";
  }
};

TEST_F(WeftExplain, PrintsTheNest) {
  const Result r = explain("bcaBCb 0,4,1 0,6,1,4,2 0,5,1,2");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("#pragma omp for collapse(2) nowait"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("for (int b0 = 0; b0 < 6; b0 += 4)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("body(a0, b2, c1);"), std::string::npos) << r.out;
}

TEST_F(WeftExplain, TraceGroupsLinesByThreadInExecutionOrder) {
  const Result r = explain("--threads 2 --trace aB 0,2,1 0,3,1");
  EXPECT_EQ(r.status, 0) << r.err;
  // B's 3 iterations: thread 0 gets b = 0, 1 and thread 1 gets b = 2, every time a enters it.
  EXPECT_EQ(r.out, "0 0 0\n0 0 1\n0 1 0\n0 1 1\n1 0 2\n1 1 2\n");
}

TEST_F(WeftExplain, TraceOfAGridAndBothEngines) {
  const std::string args = "--threads=3 --trace 'A{R:2}|b' 0,5,1 0,2,1";
  const Result jit = explain(args, "WEFT_ENGINE=jit");
  const Result reference = explain(args, "WEFT_ENGINE=reference");
  EXPECT_EQ(jit.status, 0) << jit.err;
  EXPECT_EQ(reference.status, 0) << reference.err;
  EXPECT_EQ(reference.out, "0 0 0\n0 0 1\n0 1 0\n0 1 1\n0 2 0\n0 2 1\n1 3 0\n1 3 1\n1 4 0\n1 4 1\n");
  EXPECT_EQ(jit.out, reference.out);
}

TEST_F(WeftExplain, InvalidInputExitsWithTwoAndAMessage) {
  struct Case {
    std::string args, env, says;
  };
  const std::vector<Case> cases = {
      {"'a-b' 0,2,1 0,2,1", "", "unexpected character '-'"},
      {"'aXb' 0,2,1 0,2,1", "", "'X' is beyond the 2 loops"},
      {"'AbC' 0,2,1 0,2,1 0,2,1", "", "second parallel run"},
      {"'bcaBCb' 0,4,1 0,6,1,3 0,4,1,2", "", "needs 2 block sizes"},
      {"aB 0,2 0,2,1", "", "needs start,end,step"},
      {"aB 0,2,x 0,2,1", "", "is not an integer"},
      {"aB 0,2,1", "", "beyond the 1 loop"},
      {"aB", "", "give a LOOP_STRING"},
      {"--threads 0 aB 0,2,1 0,2,1", "", "--threads: 0 is outside [1, 4096]"},
      {"--frobnicate aB 0,2,1 0,2,1", "", "unknown option"},
      {"--threads 2 --trace 'A{R:2}B{C:2}' 0,2,1 0,2,1", "", "needs a thread grid"},
      {"aB 0,2,1 0,2,1", "WEFT_ENGINE=fast", "WEFT_ENGINE=fast"},
      {"--threads", "", "--threads needs a value"},
      {"--threads= aB 0,2,1 0,2,1", "", "option --threads needs a value"},
      {"--threads 2x aB 0,2,1 0,2,1", "", "--threads: '2x' is not an integer"},
      {"--threads 99999999999999999999 aB 0,2,1 0,2,1", "", "is not an integer"},
      {"--threads 4097 aB 0,2,1 0,2,1", "", "--threads: 4097 is outside [1, 4096]"},
      {"--threads 2 --threads 3 aB 0,2,1 0,2,1", "", "--threads is given twice"},
      {"--trace --trace aB 0,2,1 0,2,1", "", "--trace is given twice"},
      {"--trace=1 aB 0,2,1 0,2,1", "", "--trace takes no value"},
      {"--threads --trace aB 0,2,1 0,2,1", "", "option --threads needs a value"},
      {"-t aB 0,2,1 0,2,1", "", "unknown option -t"},
      {"aB 0,2,1 0,2,1 --", "", "unknown option --"},
      {"a 0,2,1,", "", "SPEC of loop 'a': '0,2,1,' is not a list of integers"},
      {"a 0,99999999999999999999,1", "", "is not an integer"},
      {"a 0,9999999999,1", "", "beyond the range of int"},
      {"aa 0,8,1,0", "", "block size 0"},
      // Traces larger than any machine: refused before running, with the memory they need.
      {"--trace ab 0,2000000000,1 0,2000000000,1", "", "needs more than 16 EiB of memory"},
      {"--trace ab 0,1000000000,1 0,1000000000,1", "", "needs 6.9 EiB of memory, more than this machine's"},
  };
  for (const Case& c : cases) {
    const Result r = explain(c.args, c.env);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << c.args << "\n" << r.out;
  }
}

TEST_F(WeftExplain, HelpPrintsTheUsageAndSucceeds) {
  for (const char* help : {"--help", "-h", "aB 0,2,1 --help"}) {
    const Result r = explain(help);
    EXPECT_EQ(r.status, 0) << help << "\n" << r.err;
    EXPECT_EQ(r.out.rfind("usage: weft-explain", 0), 0u) << help << "\n" << r.out;
  }
}

TEST_F(WeftExplain, ASpecMayStartWithAMinusSign) {
  const Result r = explain("a -4,4,2");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("for (int a0 = -4; a0 < 4; a0 += 2)"), std::string::npos) << r.out;
}

TEST_F(WeftExplain, ErrorMessageHasTheCaret) {
  const Result r = explain("'abD' 0,2,1 0,2,1 0,2,1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("  abD\n    ^"), std::string::npos) << r.err;
}

}  // namespace
