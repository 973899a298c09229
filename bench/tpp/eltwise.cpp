// Element-wise TPPs over 8M floats (memory-resident: 32 MiB per array, beyond L2 and most of L3),
// in GiB/s of bytes read + written, next to copies measured in the same run: our copy kernel,
// memcpy and std::copy. 1 thread: one kernel call over the whole array; 2 threads: the array split
// in halves over an OpenMP team of 2, one call each. Pin the threads:
//   OMP_PROC_BIND=close OMP_PLACES=cores ./weft-bench-eltwise
// After the runs, a table gives every kernel's ratio to our copy and to memcpy at the same thread count.
//
// `paired/<kernel>/threads:T` is the figure to quote for "bandwidth relative to copy": it alternates
// our copy and the kernel call by call (41 rounds, either one first in turn) and reports the median
// of the per-round ratios of GiB/s (`ratio`) besides both medians, so that a slow phase of the shared
// machine hits both sides of a ratio alike.
//
// `tail/...` are small, cache-resident calls whose every column ends in a partial vector (m not a
// multiple of the lanes, ld = m + 1 so that the columns are not one contiguous sweep): the cost of
// the tail loads and stores, in ns per call. Compare two builds with, e.g.,
//   WEFT_ISA=avx2 taskset -c 1 ./weft-bench-eltwise --benchmark_filter=tail
// and compare the median over repetitions of min_ticks (each call timed by itself).
#include <benchmark/benchmark.h>
#include <omp.h>
#include <x86intrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "weft/tpp/binary.hpp"
#include "weft/tpp/unary.hpp"

namespace {

using namespace weft::tpp;

constexpr std::int64_t kElements = std::int64_t{8} << 20;

struct Arrays {
  std::vector<float> a, b, c;
  Arrays() : a(kElements), b(kElements), c(kElements) {
    for (std::int64_t i = 0; i < kElements; ++i) {
      a[static_cast<std::size_t>(i)] = static_cast<float>(i % 1024) / 256.0f - 2.0f;
      b[static_cast<std::size_t>(i)] = 0.5f;
    }
  }
};

Arrays& arrays() {
  static Arrays x;
  return x;
}

// Runs body(first, count) over the array on `threads` threads.
template <class Body>
void split(int threads, Body&& body) {
  if (threads == 1) {
    body(std::int64_t{0}, kElements);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const std::int64_t t = omp_get_thread_num();
    const std::int64_t chunk = kElements / threads;
    body(t * chunk, chunk);
  }
}

void finish(benchmark::State& state, int arrays_touched) {
  state.SetBytesProcessed(state.iterations() * kElements * 4 * arrays_touched);
}

void bm_memcpy(benchmark::State& state) {
  auto& x = arrays();
  const int threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    split(threads, [&](std::int64_t first, std::int64_t count) {
      std::memcpy(x.c.data() + first, x.a.data() + first, static_cast<std::size_t>(count) * 4);
    });
    benchmark::ClobberMemory();
  }
  finish(state, 2);
}

void bm_std_copy(benchmark::State& state) {
  auto& x = arrays();
  const int threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    split(threads, [&](std::int64_t first, std::int64_t count) {
      std::copy(x.a.data() + first, x.a.data() + first + count, x.c.data() + first);
    });
    benchmark::ClobberMemory();
  }
  finish(state, 2);
}

void bm_unary(benchmark::State& state, UnaryOp op) {
  auto& x = arrays();
  const int threads = static_cast<int>(state.range(0));
  const std::int64_t m = kElements / threads;
  UnaryDesc d{.op = op, .m = m, .n = 1, .ld_in = m, .ld_out = m};
  if (op == UnaryOp::scale) d.alpha = 0.5f;
  const Unary k(d);
  for (auto _ : state) {
    split(threads, [&](std::int64_t first, std::int64_t) { k(x.a.data() + first, x.c.data() + first); });
    benchmark::ClobberMemory();
  }
  finish(state, op == UnaryOp::zero ? 1 : 2);
}

void bm_binary(benchmark::State& state, BinaryOp op) {
  auto& x = arrays();
  const int threads = static_cast<int>(state.range(0));
  const std::int64_t m = kElements / threads;
  const Binary k(BinaryDesc{.op = op, .m = m, .n = 1, .ld_in0 = m, .ld_in1 = m, .ld_out = m});
  for (auto _ : state) {
    split(threads, [&](std::int64_t first, std::int64_t) { k(x.a.data() + first, x.b.data() + first, x.c.data() + first); });
    benchmark::ClobberMemory();
  }
  finish(state, 3);
}

// Rounds of (our copy, the kernel), one call each over the whole array; the median per-round ratio.
void bm_paired(benchmark::State& state, const std::string& kernel) {
  auto& x = arrays();
  const int threads = static_cast<int>(state.range(0));
  const std::int64_t m = kElements / threads;
  const Unary copy(UnaryDesc{.op = UnaryOp::copy, .m = m, .n = 1, .ld_in = m, .ld_out = m});
  std::function<void(std::int64_t)> run;
  int arrays_touched = 2;
  if (kernel == "relu") {
    const Unary relu(UnaryDesc{.op = UnaryOp::relu, .m = m, .n = 1, .ld_in = m, .ld_out = m});
    run = [&x, relu](std::int64_t first) { relu(x.a.data() + first, x.c.data() + first); };
  } else if (kernel == "memcpy") {
    run = [&x, m](std::int64_t first) {
      std::memcpy(x.c.data() + first, x.a.data() + first, static_cast<std::size_t>(m) * 4);
    };
  } else {
    const BinaryOp op = kernel == "add" ? BinaryOp::add : kernel == "mul" ? BinaryOp::mul : BinaryOp::max;
    const Binary bin(BinaryDesc{.op = op, .m = m, .n = 1, .ld_in0 = m, .ld_in1 = m, .ld_out = m});
    run = [&x, bin](std::int64_t first) { bin(x.a.data() + first, x.b.data() + first, x.c.data() + first); };
    arrays_touched = 3;
  }
  auto seconds = [&](const auto& body) {
    const auto t0 = std::chrono::steady_clock::now();
    split(threads, [&](std::int64_t first, std::int64_t) { body(first); });
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  auto copy_call = [&](std::int64_t first) { copy(x.a.data() + first, x.c.data() + first); };
  const double gib = static_cast<double>(kElements) * 4.0 / double(1 << 30);
  std::vector<double> ours, copies, ratios;
  for (auto _ : state) {
    seconds(copy_call);
    seconds(run);
    for (int round = 0; round < 41; ++round) {
      // Alternate which of the two goes first: a call right after another one's streaming stores
      // runs a little slower (the writes still drain), and that should not land on one side only.
      double tc = 0.0, tk = 0.0;
      if (round % 2 == 0) {
        tc = seconds(copy_call);
        tk = seconds(run);
      } else {
        tk = seconds(run);
        tc = seconds(copy_call);
      }
      copies.push_back(2 * gib / tc);
      ours.push_back(arrays_touched * gib / tk);
      ratios.push_back(ours.back() / copies.back());
    }
  }
  auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  state.counters["GiBps"] = median(ours);
  state.counters["copy_GiBps"] = median(copies);
  state.counters["ratio"] = median(ratios);
}

// 256 columns of m rows, ld = m + 1: every column ends in a tail (see the header comment).
constexpr std::int64_t kTailColumns = 256;

// Times each call by itself in TSC ticks and reports the minimum and the median per call besides
// Google Benchmark's average: a call takes a few hundred ns, so on a shared machine most calls run
// undisturbed and the minimum is the kernel's own cost.
template <class Call>
void time_each_call(benchmark::State& state, const Call& call) {
  std::vector<double> ticks;
  for (auto _ : state) {
    _mm_lfence();
    const std::uint64_t t0 = __rdtsc();
    _mm_lfence();
    call();
    _mm_lfence();
    ticks.push_back(static_cast<double>(__rdtsc() - t0));
  }
  std::sort(ticks.begin(), ticks.end());
  state.counters["min_ticks"] = ticks.front();
  state.counters["median_ticks"] = ticks[ticks.size() / 2];
}

void bm_tail_unary(benchmark::State& state, UnaryOp op) {
  auto& x = arrays();
  const std::int64_t m = state.range(0);
  const std::int64_t ld_out = (op == UnaryOp::transpose ? kTailColumns : m) + 1;
  const Unary k(UnaryDesc{.op = op, .m = m, .n = kTailColumns, .ld_in = m + 1, .ld_out = ld_out});
  time_each_call(state, [&] { k(x.a.data(), x.c.data()); });
}

void bm_tail_binary(benchmark::State& state, BinaryOp op) {
  auto& x = arrays();
  const std::int64_t m = state.range(0);
  const Binary k(BinaryDesc{.op = op, .m = m, .n = kTailColumns, .ld_in0 = m + 1, .ld_in1 = m + 1, .ld_out = m + 1});
  time_each_call(state, [&] { k(x.a.data(), x.b.data(), x.c.data()); });
}

// Collects GiB/s per benchmark to print the ratios after the usual console output.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name != "median") continue;
      auto it = r.counters.find("bytes_per_second");
      if (it != r.counters.end()) gib_[r.benchmark_name()] = it->second.value / double(1 << 30);
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\n%-28s %10s %12s %12s\n", "kernel", "GiB/s", "/ our copy", "/ memcpy");
    for (const auto& [name, gib] : gib_) {
      const std::string threads = name.substr(name.find("/threads:"), std::string::npos);
      const std::string suffix = threads.substr(0, threads.find("_median") == std::string::npos ? threads.size() : threads.find("_median"));
      auto ratio = [&](const std::string& base) {
        for (const auto& [n2, g2] : gib_)
          if (n2.rfind(base + suffix, 0) == 0) return gib / g2;
        return 0.0;
      };
      std::printf("%-28s %10.2f %12.3f %12.3f\n", name.c_str(), gib, ratio("unary/copy"), ratio("memcpy"));
    }
  }

 private:
  std::map<std::string, double> gib_;
};

void register_all() {
  auto args = [](benchmark::internal::Benchmark* b) {
    b->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(0.2)->Repetitions(3)->ReportAggregatesOnly(true);
  };
  args(benchmark::RegisterBenchmark("memcpy", bm_memcpy));
  args(benchmark::RegisterBenchmark("std_copy", bm_std_copy));
  for (UnaryOp op : {UnaryOp::copy, UnaryOp::relu, UnaryOp::zero, UnaryOp::scale, UnaryOp::exp, UnaryOp::sigmoid,
                     UnaryOp::tanh, UnaryOp::gelu}) {
    args(benchmark::RegisterBenchmark(("unary/" + to_string(op)).c_str(), bm_unary, op));
  }
  for (BinaryOp op : {BinaryOp::add, BinaryOp::mul, BinaryOp::max}) {
    args(benchmark::RegisterBenchmark(("binary/" + to_string(op)).c_str(), bm_binary, op));
  }
  auto tail_args = [](benchmark::internal::Benchmark* b) {
    b->ArgName("m")->Arg(3)->Arg(5)->Arg(7)->Arg(13)->Arg(15)->Unit(benchmark::kNanosecond)->MinTime(0.05)->Repetitions(5)->ReportAggregatesOnly(true);
  };
  for (UnaryOp op : {UnaryOp::copy, UnaryOp::relu, UnaryOp::exp, UnaryOp::reduce_rows_max, UnaryOp::transpose}) {
    tail_args(benchmark::RegisterBenchmark(("tail/unary_" + to_string(op)).c_str(), bm_tail_unary, op));
  }
  tail_args(benchmark::RegisterBenchmark("tail/binary_add", bm_tail_binary, BinaryOp::add));
  for (const char* kernel : {"relu", "add", "mul", "max", "memcpy"}) {
    benchmark::RegisterBenchmark((std::string("paired/") + kernel).c_str(), bm_paired, std::string(kernel))
        ->ArgName("threads")
        ->Arg(1)
        ->Arg(2)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
