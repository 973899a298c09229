// Measuring a list of loop strings with any sample program (PARLOOPER's gemm_loop_tuner.sh and
// conv_fwd_loop_tuner.py role): the program runs once per string (and repetition), the string put
// in place of a placeholder in its arguments; its "MEASURE <gflops> <tag>" line
// (samples/common/sample_driver.hpp) gives the GFLOPS, its exit status and first error line say
// why a run failed. Nothing here knows a sample: the GEMM and convolution samples all print
// MEASURE lines and exit with 0, 1 (check failed) or 2 (bad arguments).
//
//   auto strings = read_loop_strings("strings.txt");
//   auto results = measure_loop_strings(strings, {"build/samples/gemm/weft-gemm", "{}", "1024", ...}, {});
//   print_ranking(stdout, results, 0);
//   write_ranking_plot(results, "ranking.svg", "weft-gemm 1024^3");
#pragma once

#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "subprocess.hpp"

namespace weft::samples {

// The loop strings of a file: one per line, surrounding blanks dropped, from '#' to the end of a
// line a comment, blank lines skipped, repeated strings kept once (the first). Throws weft::Error
// naming the file when it cannot be read.
std::vector<std::string> read_loop_strings(const std::filesystem::path& file);

struct Measure {
  double gflops = 0;
  std::string tag;
};
// The last "MEASURE <gflops> <tag>" line of a sample's output.
std::optional<Measure> parse_measure(std::string_view output);

// `command` with every occurrence of `placeholder` in every argument replaced by `value`.
std::vector<std::string> substitute(const std::vector<std::string>& command, const std::string& placeholder,
                                    const std::string& value);

// Why a run gives no measurement, in one line, or nullopt when it gives one: "exit status 2:
// <first line of its standard error>", "check failed: <its check line>", "no MEASURE line", ...
std::optional<std::string> run_failure(const ProcessResult& run);

struct StringMeasurement {
  std::string loop_string;
  std::vector<double> gflops;  // one per run
  std::string tag;             // of the last run's MEASURE line
  bool failed = false;
  std::string error;           // why, when failed
  double median() const;
};

struct StringRunOptions {
  std::string placeholder = "{}";
  std::size_t repeat = 1;      // runs per string, interleaved over the list; the median counts
  double timeout_seconds = 0;  // per run; 0: none
};

// Called after every run: the string's state so far, runs done and in all.
using StringProgress = std::function<void(const StringMeasurement&, std::size_t done, std::size_t total)>;

// Runs `command` once per string and repetition (a string that failed is not run again), in file
// order, repetitions interleaved so that drift spreads over all strings. Throws weft::Error when
// the program cannot be started.
std::vector<StringMeasurement> measure_loop_strings(const std::vector<std::string>& strings,
                                                    const std::vector<std::string>& command,
                                                    const StringRunOptions& options, const StringProgress& progress = {});

// The measured strings by median GFLOPS with their ratio to the best and to the first string of
// the list (the default configuration, as in PARLOOPER's lists), the first `rows` of them (0: all),
// then the failed ones with their reason.
void print_ranking(std::FILE* out, const std::vector<StringMeasurement>& results, std::size_t rows);

// GFLOPS over rank, with the first string's level: an SVG (svg_plot.hpp). Throws weft::Error
// when the file cannot be written.
void write_ranking_plot(const std::vector<StringMeasurement>& results, const std::filesystem::path& path,
                        const std::string& title);

}  // namespace weft::samples
