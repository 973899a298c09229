// Two implementations timed in alternating rounds of back-to-back calls, the median round of each:
// the ratio of the two is robust to a shared machine's noise (both see the same spells of it).
//
//   const weft::bench::Interleaved t = weft::bench::interleave(ours, theirs, /*calls=*/100);
//   state.counters["ratio"] = t.second / t.first;   // > 1: ours is faster
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

namespace weft::bench {

struct Interleaved {
  double first = 0, second = 0;  // median seconds per round of `calls` calls
};

template <class F, class G>
Interleaved interleave(const F& first, const G& second, int calls, int rounds = 41) {
  auto time = [&](const auto& f) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  std::vector<double> a, b;
  for (int round = 0; round < rounds; ++round) {
    a.push_back(time(first));
    b.push_back(time(second));
  }
  auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  return {median(a), median(b)};
}

}  // namespace weft::bench
