// Two implementations timed in alternating rounds of back-to-back calls, the median round of each:
// the ratio of the two is robust to a shared machine's noise (both see the same spells of it).
//
//   const weft::bench::Interleaved t = weft::bench::interleave(ours, theirs, /*calls=*/100);
//   state.counters["ratio"] = t.second / t.first;   // > 1: ours is faster
//
// interleave_all does the same for any number of implementations, each round timing them in turn.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
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

// Median seconds per round of `calls` calls of each of `fns`, in their order.
inline std::vector<double> interleave_all(const std::vector<std::function<void()>>& fns, int calls, int rounds = 41) {
  std::vector<std::vector<double>> seconds(fns.size());
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t i = 0; i < fns.size(); ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int c = 0; c < calls; ++c) fns[i]();
      seconds[i].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
  }
  std::vector<double> medians;
  for (std::vector<double>& v : seconds) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    medians.push_back(v[v.size() / 2]);
  }
  return medians;
}

}  // namespace weft::bench
