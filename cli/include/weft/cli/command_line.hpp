// Declaring and reading a weft program's command line, on CLI11. The options go on a CLI::App
// through the adders below, which read their values with values.hpp (one wording for every
// program); parse() then applies the same rules everywhere:
//
//   CLI::App app;
//   int threads = 0;
//   bool trace = false;
//   std::vector<std::string> positional;
//   weft::cli::add_threads(app, threads, 1);
//   weft::cli::add_flag(app, "--trace", trace, "print the visited indices");
//   app.add_option("positional", positional);   // CLI11's own options work too
//   weft::cli::parse(app, argc, argv);
//
// Rules: "--name value" or "--name=value" for options, "--flag" for flags, in any order among
// the positional arguments; -h / --help ends the parse with CLI::CallForHelp (run_tool prints the
// usage). Everything else wrong is a UsageError naming the argument: an unknown option, a
// positional argument where none is declared, an option given twice, an option without its value
// ("--db" at the end, "--db=", or "--db --no-save": a value never starts with "--" unless written
// "--db=--x"), a flag given a value, and values the adders reject.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "weft/cli/values.hpp"

namespace weft::cli {

// The largest team any program asks for with --threads.
inline constexpr int kMaxThreads = 4096;

// "--name N": an integer in [min, max] (parse_integer).
CLI::Option* add_integer(CLI::App& app, const std::string& name, std::int64_t& target, std::int64_t min,
                         std::int64_t max, const std::string& description);
// "--name X": a number in [min, max] (parse_number).
CLI::Option* add_number(CLI::App& app, const std::string& name, double& target, double min, double max,
                        const std::string& description);
// "--name 8,2": integers in [min, max] separated by commas (parse_integer_list).
CLI::Option* add_integer_list(CLI::App& app, const std::string& name, std::vector<long>& target, long min,
                              long max, const std::string& description);
// "--name TEXT": any text but an empty one.
CLI::Option* add_text(CLI::App& app, const std::string& name, std::string& target, const std::string& description);
// "--name": sets target to true.
CLI::Option* add_flag(CLI::App& app, const std::string& name, bool& target, const std::string& description);
// "--threads T" in [min, kMaxThreads]; what 0 means (when min is 0) is the program's to say.
CLI::Option* add_threads(CLI::App& app, int& threads, int min);

// Whether the option `name` ("--db") was on the command line.
bool given(const CLI::App& app, const std::string& name);

// Parses argv[first..] by the rules above. Throws UsageError, or CLI::CallForHelp for --help.
void parse(CLI::App& app, int argc, char** argv, int first = 1);

}  // namespace weft::cli
