// The pieces of weft-tune measure: reading a file of loop strings, running a program without a
// shell with its output captured (and killed at a timeout), reading its MEASURE line, saying in one
// line why a run failed, and the ranking against the best and the first string.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "emulation.hpp"

#include <weft/jit/error.hpp>

#if __has_include("string_measurement.hpp")  // weft-tune is built with the tuner
#include "string_measurement.hpp"
#include "subprocess.hpp"
#define WEFT_HAVE_STRING_MEASUREMENT 1
#endif

namespace weft::samples {
namespace {

#ifdef WEFT_HAVE_STRING_MEASUREMENT
namespace fs = std::filesystem;

std::string printed(const std::vector<StringMeasurement>& results, std::size_t rows) {
  std::FILE* f = std::tmpfile();
  print_ranking(f, results, rows);
  std::rewind(f);
  std::string text;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) text.append(buffer, n);
  std::fclose(f);
  return text;
}

TEST(StringMeasurement, ReadsOneStringPerLineWithoutCommentsBlanksOrRepeats) {
  const fs::path file = fs::temp_directory_path() / ("weft-strings-" + std::to_string(::getpid()) + ".txt");
  std::ofstream(file) << "# default first\n  aBC  \n\nbcaBCb # blocked\r\n\t\naBC\nA{R:2}C{C:1}b\naBC@schedule(dynamic, 2)";
  EXPECT_EQ(read_loop_strings(file),
            (std::vector<std::string>{"aBC", "bcaBCb", "A{R:2}C{C:1}b", "aBC@schedule(dynamic, 2)"}));
  fs::remove(file);
  EXPECT_THROW(read_loop_strings(file), Error);
}

TEST(StringMeasurement, ReadsTheLastMeasureLine) {
  const auto m = parse_measure("weft-gemm: aBC ...\ncheck: PASSED\nMEASURE 12.5 aBC_64_bf1_threads2\nMEASURE 13.25 tag\n");
  ASSERT_TRUE(m);
  EXPECT_DOUBLE_EQ(m->gflops, 13.25);
  EXPECT_EQ(m->tag, "tag");
  EXPECT_FALSE(parse_measure("GFLOPS: 12\n"));
  EXPECT_FALSE(parse_measure("MEASURE nan x\n"));
  EXPECT_FALSE(parse_measure("MEASURE\n"));
  EXPECT_FALSE(parse_measure(" MEASURE 12 x\n"));  // not at the start of the line
}

TEST(StringMeasurement, SubstitutesThePlaceholderInEveryArgument) {
  EXPECT_EQ(substitute({"prog", "{}", "--loop={}", "x{}{}"}, "{}", "aB{R:2}"),
            (std::vector<std::string>{"prog", "aB{R:2}", "--loop=aB{R:2}", "xaB{R:2}aB{R:2}"}));
}

TEST(StringMeasurement, SaysWhyARunGaveNoMeasurementInOneLine) {
  ProcessResult ok;
  ok.exit_status = 0;
  ok.out = "MEASURE 10 t\n";
  EXPECT_FALSE(run_failure(ok));
  ProcessResult usage;
  usage.exit_status = 2;
  usage.err = "\nweft-gemm: loop_string: letter 'x'\n  abx\n    ^\nusage: ...\n";
  EXPECT_EQ(run_failure(usage), "exit status 2: weft-gemm: loop_string: letter 'x'");
  ProcessResult check;
  check.exit_status = 1;
  check.out = "weft-gemm: ...\ncheck: FAILED (max abs error 3)\nMEASURE 10 t\n";
  EXPECT_EQ(run_failure(check), "exit status 1: check: FAILED (max abs error 3)");
  ProcessResult silent;
  silent.exit_status = 0;
  silent.out = "GFLOPS: 3\n";
  EXPECT_EQ(run_failure(silent), "no MEASURE line in its output");
  ProcessResult crashed;
  crashed.signal = 11;
  EXPECT_EQ(run_failure(crashed)->rfind("killed by signal 11", 0), 0u) << *run_failure(crashed);
}

TEST(StringMeasurement, RunsAProgramWithoutAShellAndCapturesBothStreams) {
  const ProcessResult r = run_process({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.exit_status, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_FALSE(r.succeeded());
  // Arguments reach the program as they are: no word splitting, no globbing.
  const ProcessResult echo = run_process({"/bin/echo", "a  b", "*", "$HOME"});
  EXPECT_EQ(echo.out, "a  b * $HOME\n");
  EXPECT_TRUE(echo.succeeded());
  // Under qemu-user the spawn's exec error stays in the child (emulation.hpp).
  if (!weft::test::emulated()) {
    EXPECT_THROW(run_process({"/nonexistent/program"}), Error);
  }
  EXPECT_TRUE(is_executable_program("sh"));
  EXPECT_FALSE(is_executable_program("/etc/passwd"));
  EXPECT_FALSE(is_executable_program("no-such-program-anywhere"));
}

TEST(StringMeasurement, KillsARunAtItsTimeout) {
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult r = run_process({"/bin/sleep", "10"}, 0.2);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.status_text(), "timed out after 0.2 s");
  EXPECT_TRUE(run_failure(r));
}

TEST(StringMeasurement, MeasuresEveryStringAndRanksAgainstTheBestAndTheFirst) {
  // A stand-in sample: GFLOPS from the loop string's length, "bad" fails with exit status 2.
  const std::vector<std::string> command{
      "/bin/sh", "-c", "case $1 in bad) echo 'prog: bad string' >&2; exit 2;; esac; echo MEASURE ${#1}0 tag_$1", "sh",
      "{}"};
  std::size_t reports = 0;
  const auto results = measure_loop_strings({"ab", "bad", "abcd"}, command, {.repeat = 2},
                                            [&](const StringMeasurement&, std::size_t, std::size_t) { ++reports; });
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(reports, 5u);  // a failed string is not run again
  EXPECT_EQ(results[0].gflops, (std::vector<double>{20, 20}));
  EXPECT_EQ(results[0].tag, "tag_ab");
  EXPECT_TRUE(results[1].failed);
  EXPECT_EQ(results[1].error, "exit status 2: prog: bad string");
  EXPECT_DOUBLE_EQ(results[2].median(), 40);

  const std::string table = printed(results, 0);
  EXPECT_NE(table.find("   1     40.00   1.000x    2.000x     0.0%  abcd\n"), std::string::npos) << table;
  EXPECT_NE(table.find("   2     20.00   0.500x    1.000x     0.0%  ab  (first)\n"), std::string::npos) << table;
  EXPECT_NE(table.find("failed: 1 of 3\n   bad  exit status 2: prog: bad string\n"), std::string::npos) << table;
  EXPECT_NE(printed(results, 1).find("(1 more)"), std::string::npos);

  // Without a measured first string there is no "vs first".
  const auto first_failed = measure_loop_strings({"bad", "ab"}, command, {});
  EXPECT_NE(printed(first_failed, 0).find("   1     20.00   1.000x         -  ab\n"), std::string::npos)
      << printed(first_failed, 0);

  const fs::path svg = fs::temp_directory_path() / ("weft-ranking-" + std::to_string(::getpid()) + ".svg");
  write_ranking_plot(results, svg, "ranking <test>");
  std::ifstream in(svg);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("ranking &lt;test&gt;"), std::string::npos);
  EXPECT_NE(text.find("first string: ab"), std::string::npos);
  fs::remove(svg);
}
#endif

}  // namespace
}  // namespace weft::samples
