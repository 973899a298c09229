#include "sample_driver.hpp"

#include <omp.h>

#include <cstdio>
#include <exception>

#include <weft/jit/error.hpp>

#include "sample_args.hpp"

namespace weft::samples {

int sample_main(const char* name, const char* usage, int (*run)(int, char**), int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: %s\n%s", name, e.what(), usage);
    return 2;
  } catch (const weft::MemoryError& e) {
    // Sizes beyond the machine are bad arguments; a failed allocation that would have fit is not.
    std::fprintf(stderr, "%s: %s\n", name, e.what());
    return e.reason() == weft::MemoryError::Reason::allocation_failed ? 1 : 2;
  } catch (const weft::Error& e) {
    std::fprintf(stderr, "%s: %s\n", name, e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name, e.what());
    return 1;
  }
}

double seconds_per_call(const std::function<void()>& fn, std::int64_t warmup, std::int64_t iterations) {
  for (std::int64_t i = 0; i < warmup; ++i) fn();
  const double start = omp_get_wtime();
  for (std::int64_t i = 0; i < iterations; ++i) fn();
  return (omp_get_wtime() - start) / static_cast<double>(iterations);
}

int apply_thread_option(std::int64_t threads) {
  if (threads > 0) omp_set_num_threads(static_cast<int>(threads));
  return omp_get_max_threads();
}

int report(const SampleResult& r) {
  bool passed = true;
  if (r.norms) {
    passed = r.norms->passed(r.tolerance);
    std::printf("check: %s (%s; tolerance %.1e)\n", passed ? "PASSED" : "FAILED",
                r.norms->to_string().c_str(), r.tolerance);
  }
  const double gflops = r.flops / r.seconds * 1e-9;
  std::printf("time: %.3f ms per iteration (%lld iterations)\nGFLOPS: %.2f\n", r.seconds * 1e3,
              static_cast<long long>(r.iterations), gflops);
  std::printf("MEASURE %.2f %s\n", gflops, r.measure_tag.c_str());
  return passed ? 0 : 1;
}

}  // namespace weft::samples
