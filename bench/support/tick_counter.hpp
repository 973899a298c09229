// A cheap per-call timer for benchmarks that time single calls: the CPU's time-stamp counter on
// x86-64 (TSC ticks), the virtual counter on AArch64 (CNTVCT_EL0, a fixed frequency below the
// core clock: compare ticks only with ticks of the same machine).
#pragma once

#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace weft::bench {

// Ordered with the surrounding code: nothing before it is still running, nothing after it started.
inline std::uint64_t ticks_now() {
#if defined(__x86_64__)
  _mm_lfence();
  const std::uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
#elif defined(__aarch64__)
  std::uint64_t t;
  asm volatile("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(t)::"memory");
  return t;
#else
#error "ticks_now: no counter for this architecture"
#endif
}

}  // namespace weft::bench
