// The command line every sample shares, on weft's CLI glue (weft/cli): PARLOOPER-style positional
// arguments (LOOP_STRING M N K ... at fixed positions) plus named options anywhere on the line:
// --threads T, --check 0|1, --warmup W for every sample, and the sample's own (added to app()
// before parse()). Malformed input throws weft::cli::UsageError naming the argument, which
// run_tool turns into the usage text and exit status 2.
//
//   SampleArgs args;
//   weft::cli::add_integer_list(args.app(), "--k-blocks", config.k_blocks, 1, INT32_MAX, "...");
//   args.parse(argc, argv);
//   args.require({"LOOP_STRING", "M", "N", "K"}, "; the first four arguments are LOOP_STRING M N K");
//   args.require_at_most(5, "LOOP_STRING M N K [n_iters]");
//   config.M = args.integer(1, "M", 0);
//   const RunSettings run = args.run_settings(4);   // n_iters at position 4
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <weft/cli/values.hpp>

#include "sample_driver.hpp"

namespace weft::samples {

using cli::UsageError;

class SampleArgs {
 public:
  SampleArgs();
  SampleArgs(const SampleArgs&) = delete;  // app() holds references into this object
  SampleArgs& operator=(const SampleArgs&) = delete;

  CLI::App& app() { return app_; }
  // Reads argv; throws UsageError, or CLI::CallForHelp for --help.
  void parse(int argc, char** argv);

  const std::vector<std::string>& positional() const { return positional_; }
  // UsageError "missing <name> (argument <n>)<hint>" for the first of `names` (positions 0, 1,
  // ...) that is not there.
  void require(std::initializer_list<const char*> names, const std::string& hint) const;
  // UsageError naming the first extra argument when there are more than `max` positional
  // arguments; `form` lists them, e.g. "LOOP_STRING M N K bm bn bk [mbf] [private_trans] [n_iters]".
  void require_at_most(std::size_t max, const char* form) const;
  // Positional argument `index` as an integer in [min, max], or `fallback` when absent.
  std::int64_t integer(std::size_t index, const char* name, std::int64_t fallback, std::int64_t min = 1,
                       std::int64_t max = INT32_MAX) const;
  // Positional argument `index` as 0 or 1 (absent: false).
  bool switch_at(std::size_t index, const char* name) const { return integer(index, name, 0, 0, 1) != 0; }

  // The options every sample takes, with n_iters (1..1000000, default 10) at position
  // `n_iters_index`. Applies --threads to OpenMP, and returns the team size runs will use.
  RunSettings run_settings(std::size_t n_iters_index) const;

 private:
  CLI::App app_;
  std::vector<std::string> positional_;
  std::int64_t threads_ = 0, check_ = 1, warmup_ = 1;
};

// PARLOOPER's samples run bf16 when the environment variable USE_BF16 is a non-zero integer:
// whether it is (unset, empty or 0: false). A value that is not an integer is a UsageError.
bool bf16_requested();

// For the samples that compute in FP32 only (the convolutions): refuses a bf16 request
// (weft::Error) rather than print FP32 numbers that a script would file under bf16.
void reject_bf16_request();

}  // namespace weft::samples
