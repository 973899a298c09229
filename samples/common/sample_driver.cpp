#include "sample_driver.hpp"

#include <omp.h>

#include <cstdio>

#include <weft/jit/error.hpp>

namespace weft::samples {

double seconds_per_call(const std::function<void()>& fn, std::int64_t warmup, std::int64_t iterations) {
  for (std::int64_t i = 0; i < warmup; ++i) fn();
  const double start = omp_get_wtime();
  for (std::int64_t i = 0; i < iterations; ++i) fn();
  return (omp_get_wtime() - start) / static_cast<double>(iterations);
}

int measure_and_report(const RunSettings& settings, const TimedPass& pass) {
  const double seconds = seconds_per_call(pass.run, settings.warmup, settings.iterations);
  bool passed = true;
  if (settings.check) {
    const Verdict verdict = pass.verify();
    passed = verdict.norms.passed(verdict.tolerance);
    if (verdict.norms.bounded) {
      std::printf("check: %s (%s%s)\n", passed ? "PASSED" : "FAILED", verdict.norms.to_string().c_str(),
                  verdict.note.c_str());
    } else {
      std::printf("check: %s (%s; tolerance %.1e%s)\n", passed ? "PASSED" : "FAILED",
                  verdict.norms.to_string().c_str(), verdict.tolerance, verdict.note.c_str());
    }
  }
  const double gflops = pass.flops / seconds * 1e-9;
  std::printf("time: %.3f ms per iteration (%lld iterations)\nGFLOPS: %.2f\n", seconds * 1e3,
              static_cast<long long>(settings.iterations), gflops);
  std::printf("MEASURE %.2f %s\n", gflops, pass.measure_tag.c_str());
  return passed ? 0 : 1;
}

void MemoryTally::add_floats(std::initializer_list<std::int64_t> dims) {
  add_bytes(bytes_needed(dims, sizeof(float)));
}

void MemoryTally::add_elements(std::initializer_list<std::int64_t> dims, std::uint64_t element_bytes) {
  add_bytes(bytes_needed(dims, element_bytes));
}

void MemoryTally::add_bytes(std::uint64_t bytes) { bytes_ = weft::add_bytes(bytes_, bytes); }

int run_within_memory(const std::string& what, std::uint64_t bytes, const std::function<int()>& body) {
  require_memory(what, bytes);
  return allocating(what, bytes, body);
}

}  // namespace weft::samples
