#include "sample_args.hpp"

#include <omp.h>

#include <cstdlib>

#include <weft/cli/command_line.hpp>
#include <weft/jit/error.hpp>

namespace weft::samples {

SampleArgs::SampleArgs() {
  cli::add_integer(app_, "--threads", threads_, 0, cli::kMaxThreads, "threads (0: OpenMP's default)");
  cli::add_integer(app_, "--check", check_, 0, 1, "1: compare with the reference");
  cli::add_integer(app_, "--warmup", warmup_, 0, 1000, "untimed calls before the timed ones");
  app_.add_option("positional", positional_, "PARLOOPER's arguments");
}

void SampleArgs::parse(int argc, char** argv) { cli::parse(app_, argc, argv); }

void SampleArgs::require(std::initializer_list<const char*> names, const std::string& hint) const {
  if (positional_.size() >= names.size()) return;
  throw UsageError("missing " + std::string(names.begin()[positional_.size()]) + " (argument " +
                   std::to_string(positional_.size() + 1) + ")" + hint);
}

void SampleArgs::require_at_most(std::size_t max, const char* form) const {
  if (positional_.size() <= max) return;
  throw UsageError("unexpected argument '" + positional_[max] + "' (argument " + std::to_string(max + 1) +
                   "): at most " + std::to_string(max) + " positional arguments, " + form);
}

std::int64_t SampleArgs::integer(std::size_t index, const char* name, std::int64_t fallback, std::int64_t min,
                                 std::int64_t max) const {
  if (index >= positional_.size()) return fallback;
  return cli::parse_integer(positional_[index], name, min, max);
}

RunSettings SampleArgs::run_settings(std::size_t n_iters_index) const {
  RunSettings run;
  run.iterations = integer(n_iters_index, "n_iters", 10, 1, 1000000);
  run.check = check_ != 0;
  run.warmup = warmup_;
  if (threads_ > 0) omp_set_num_threads(static_cast<int>(threads_));
  run.threads = omp_get_max_threads();
  return run;
}

bool bf16_requested() {
  const char* const value = std::getenv("USE_BF16");
  if (value == nullptr || *value == '\0') return false;
  return cli::parse_integer(value, "USE_BF16 (environment)", INT64_MIN, INT64_MAX) != 0;
}

void reject_bf16_request() {
  if (!bf16_requested()) return;
  throw Error(std::string("USE_BF16=") + std::getenv("USE_BF16") +
              " asks for bf16, which this sample does not have yet: it computes in FP32 only. "
              "Nothing was run (an FP32 result would be reported under the same MEASURE tag as a bf16 "
              "one); unset USE_BF16 or set it to 0 to run FP32");
}

}  // namespace weft::samples
