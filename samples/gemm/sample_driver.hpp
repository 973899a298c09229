// What every GEMM sample executable does around its kernel: exit codes, timing, the printed
// result (time, GFLOPS, the machine-readable MEASURE line) and the check verdict.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "gemm_reference.hpp"

namespace weft::samples {

// Runs `run(argc, argv)`; UsageError -> usage on stderr, exit 2; weft::Error (bad loop_string,
// impossible shape, sizes beyond this machine's memory) -> its message, exit 2; a failed
// allocation (weft::MemoryError, allocation_failed) and other exceptions -> exit 1.
int sample_main(const char* name, const char* usage, int (*run)(int, char**), int argc, char** argv);

// Seconds per call of `fn` over `iterations` calls, after `warmup` untimed calls.
double seconds_per_call(const std::function<void()>& fn, std::int64_t warmup, std::int64_t iterations);

// Applies --threads T (0: leave OpenMP's default) and returns the team size runs will use.
int apply_thread_option(std::int64_t threads);

struct SampleResult {
  double flops = 0;  // of one call
  double seconds = 0;
  std::int64_t iterations = 0;
  std::string measure_tag;
  std::optional<ErrorNorms> norms;  // empty when not checked
  double tolerance = 0;
};

// Prints the check verdict (if checked), time, GFLOPS and "MEASURE <gflops> <tag>"; returns the
// exit status: 1 when the check failed, else 0.
int report(const SampleResult& result);

}  // namespace weft::samples
