// weft-tune measure: runs a sample once per loop string of a file and ranks the strings
// (string_measurement.hpp). Everything after "--" is the sample's command, with a placeholder
// ("{}") where the loop string goes:
//
//   weft-tune measure --strings s.txt --plot s.svg -- build/samples/gemm/weft-gemm {} 1024 1024 1024 32 32 32
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <weft/cli/command_line.hpp>

#include "string_measurement.hpp"
#include "tune_request.hpp"
#include "tune_verbs.hpp"

namespace weft::samples {

int measure_verb(int argc, char** argv, std::FILE* out, std::FILE* err) {
  const int separator = static_cast<int>(std::find_if(argv + std::min(argc, 2), argv + argc,
                                                      [](const char* a) { return std::strcmp(a, "--") == 0; }) -
                                         argv);
  CLI::App app;
  std::string strings_file, plot;
  std::int64_t repeat = 1, rows = 0;
  double timeout = 0;
  StringRunOptions options;
  cli::add_text(app, "--strings", strings_file, "file of loop strings");
  cli::add_integer(app, "--repeat", repeat, 1, 1000, "runs per string");
  cli::add_number(app, "--timeout", timeout, 0, 1e6, "seconds per run");
  cli::add_text(app, "--placeholder", options.placeholder, "what the loop string replaces");
  cli::add_text(app, "--plot", plot, "SVG plot of the ranking");
  cli::add_integer(app, "--rows", rows, 0, 1 << 30, "rows of the table (0: all)");
  cli::parse(app, separator, argv, 2);
  if (!cli::given(app, "--strings")) throw CliError("measure needs --strings FILE (one loop string per line)");
  const std::vector<std::string> command(argv + std::min(separator + 1, argc), argv + argc);
  if (command.empty())
    throw CliError("measure needs the sample's command after --, with " + options.placeholder +
                   " for the loop string (e.g. -- build/samples/gemm/weft-gemm {} 1024 1024 1024 32 32 32)");
  if (std::none_of(command.begin(), command.end(),
                   [&](const std::string& a) { return a.find(options.placeholder) != std::string::npos; }))
    throw CliError("the command after -- has no " + options.placeholder +
                   " where the loop string goes: every run would be the same");
  if (!is_executable_program(command[0]))
    throw CliError("the command after --: '" + command[0] + "' is no executable program (nor one in PATH)");
  std::vector<std::string> strings;
  try {
    strings = read_loop_strings(strings_file);
  } catch (const Error& e) {
    throw CliError("--strings " + std::string(e.what()));
  }
  if (strings.empty()) throw CliError("--strings " + strings_file + " holds no loop string (one per line, # comments)");
  if (!plot.empty()) check_writable("--plot", plot, false);
  options.repeat = static_cast<std::size_t>(repeat);
  options.timeout_seconds = timeout;

  std::string command_line;
  for (const std::string& a : command) command_line += (command_line.empty() ? "" : " ") + a;
  std::fprintf(out, "weft-tune measure: %zu loop strings, %zu run%s each: %s\n", strings.size(), options.repeat,
               options.repeat == 1 ? "" : "s (median)", command_line.c_str());
  const auto report = [&](const StringMeasurement& r, std::size_t done, std::size_t total) {
    if (r.failed)
      std::fprintf(err, "[%zu/%zu] %s: FAILED: %s\n", done, total, r.loop_string.c_str(), r.error.c_str());
    else
      std::fprintf(err, "[%zu/%zu] %s: %.2f GFLOPS\n", done, total, r.loop_string.c_str(), r.gflops.back());
    std::fflush(err);
  };
  std::vector<StringMeasurement> results;
  // The request is accepted: what fails now (starting a run, writing the plot) is a run-time failure.
  try {
    results = measure_loop_strings(strings, command, options, report);
    print_ranking(out, results, static_cast<std::size_t>(rows));
    if (!plot.empty()) {
      write_ranking_plot(results, plot, "weft-tune measure: " + command_line);
      std::fprintf(out, "plot: %s\n", plot.c_str());
    }
  } catch (const Error& e) {
    throw std::runtime_error(e.what());
  }
  // Nothing measured: the command itself is most likely wrong (the table says why).
  return std::all_of(results.begin(), results.end(), [](const StringMeasurement& r) { return r.failed; }) ? 1 : 0;
}

}  // namespace weft::samples
