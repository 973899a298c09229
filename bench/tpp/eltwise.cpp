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
//
// `transpose_tile/<type>`: a cache-resident 64 x 56 transpose (the bf16 convolution update's), elements/s.
//
// `types/<kernel>/<type>` run copy, relu and add over 32M elements of f32, bf16 (in and out) and
// f64 (64 to 256 MiB per array: beyond the L3 for every type), one call each, in elements per second
// (items_per_second); the table at the end gives each one's ratio to the f32 kernel. bf16 moves half
// the bytes of f32 per element, so on a memory-bound sweep it can approach 2x the elements/s.
//   taskset -c 1 ./weft-bench-eltwise --benchmark_filter='types/.*/threads:1'
//       --benchmark_repetitions=5 --benchmark_report_aggregates_only=true   (one command line)
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "aligned_buffer.hpp"
#include "tick_counter.hpp"
#include "weft/jit/bfloat16.hpp"
#include "weft/jit/data_type.hpp"
#include "weft/tpp/binary.hpp"
#include "weft/tpp/unary.hpp"

namespace {

using namespace weft::tpp;
using weft::jit::DataType;

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

// Runs body(first, count) over `total` elements on `threads` threads.
template <class Body>
void split(int threads, Body&& body, std::int64_t total = kElements) {
  if (threads == 1) {
    body(std::int64_t{0}, total);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const std::int64_t t = omp_get_thread_num();
    const std::int64_t chunk = total / threads;
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

// ---- the same kernels in f32, bf16 and f64: elements per second --------------------------------------

constexpr std::int64_t kTypedElements = std::int64_t{32} << 20;

// Three arrays of kTypedElements elements of one type (as raw bytes), A and B with values in [-2, 2).
struct TypedArrays {
  std::vector<std::uint8_t> a, b, c;
  explicit TypedArrays(DataType type) {
    const std::size_t size = weft::jit::size_of(type), bytes = static_cast<std::size_t>(kTypedElements) * size;
    a.resize(bytes);
    b.resize(bytes);
    c.resize(bytes);
    for (std::int64_t i = 0; i < kTypedElements; ++i) {
      const float x = static_cast<float>(i % 1024) / 256.0f - 2.0f, y = 0.5f;
      const std::size_t at = static_cast<std::size_t>(i) * size;
      switch (type) {
        case DataType::f32:
          std::memcpy(&a[at], &x, 4);
          std::memcpy(&b[at], &y, 4);
          break;
        case DataType::bf16: {
          const weft::jit::bfloat16 hx = weft::jit::to_bfloat16(x), hy = weft::jit::to_bfloat16(y);
          std::memcpy(&a[at], &hx.bits, 2);
          std::memcpy(&b[at], &hy.bits, 2);
          break;
        }
        case DataType::f64: {
          const double dx = x, dy = y;
          std::memcpy(&a[at], &dx, 8);
          std::memcpy(&b[at], &dy, 8);
          break;
        }
      }
    }
  }
};

TypedArrays& typed_arrays(DataType type) {
  static std::array<std::unique_ptr<TypedArrays>, 3> arrays;
  auto& slot = arrays[static_cast<std::size_t>(type)];
  if (!slot) slot = std::make_unique<TypedArrays>(type);
  return *slot;
}

DataTypes all_of(DataType type) { return {.in = type, .out = type, .compute = type == DataType::f64 ? type : DataType::f32}; }

// One call of `kernel` ("copy", "relu" or "add") in `type` over the part of the arrays that starts
// at element `first` (kTypedElements / threads elements).
std::function<void(std::int64_t)> typed_kernel(const std::string& kernel, DataType type, int threads) {
  auto& x = typed_arrays(type);
  const std::int64_t m = kTypedElements / threads;
  const std::size_t size = weft::jit::size_of(type);
  std::function<void(std::int64_t)> run;
  if (kernel == "add") {
    const Binary add(BinaryDesc{.op = BinaryOp::add, .m = m, .n = 1, .ld_in0 = m, .ld_in1 = m, .ld_out = m, .types = all_of(type)});
    run = [&x, add, size](std::int64_t first) {
      const std::size_t at = static_cast<std::size_t>(first) * size;
      add(BinaryArgs{x.a.data() + at, x.b.data() + at, x.c.data() + at});
    };
  } else {
    const UnaryOp op = kernel == "relu" ? UnaryOp::relu : UnaryOp::copy;
    const Unary unary(UnaryDesc{.op = op, .m = m, .n = 1, .ld_in = m, .ld_out = m, .types = all_of(type)});
    run = [&x, unary, size](std::int64_t first) {
      const std::size_t at = static_cast<std::size_t>(first) * size;
      unary(UnaryArgs{.in = x.a.data() + at, .out = x.c.data() + at});
    };
  }
  return run;
}

// Elements per second of `kernel` in `type`, over the whole arrays split across `threads`.
void bm_typed(benchmark::State& state, const std::string& kernel, DataType type) {
  const int threads = static_cast<int>(state.range(0));
  const std::size_t size = weft::jit::size_of(type);
  const std::function<void(std::int64_t)> run = typed_kernel(kernel, type, threads);
  for (auto _ : state) {
    split(threads, [&](std::int64_t first, std::int64_t) { run(first); }, kTypedElements);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kTypedElements);
  state.SetBytesProcessed(state.iterations() * kTypedElements * static_cast<std::int64_t>(size) * (kernel == "add" ? 3 : 2));
}

// Rounds of (the f32 kernel, the same kernel in `type`), one call each over the whole arrays; the
// median of the per-round ratios of elements per second (`ratio`) besides both medians: the figure
// to quote for "bf16 / f32", since a slow phase of the shared machine then hits both sides alike.
void bm_typed_paired(benchmark::State& state, const std::string& kernel, DataType type) {
  const int threads = static_cast<int>(state.range(0));
  const std::function<void(std::int64_t)> f32 = typed_kernel(kernel, DataType::f32, threads);
  const std::function<void(std::int64_t)> typed = typed_kernel(kernel, type, threads);
  auto seconds = [&](const std::function<void(std::int64_t)>& run) {
    const auto t0 = std::chrono::steady_clock::now();
    split(threads, [&](std::int64_t first, std::int64_t) { run(first); }, kTypedElements);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  std::vector<double> ours, f32s, ratios;
  for (auto _ : state) {
    seconds(f32);
    seconds(typed);
    for (int round = 0; round < 21; ++round) {
      double tf = 0.0, tt = 0.0;
      if (round % 2 == 0) {
        tf = seconds(f32);
        tt = seconds(typed);
      } else {
        tt = seconds(typed);
        tf = seconds(f32);
      }
      f32s.push_back(static_cast<double>(kTypedElements) / tf / 1e9);
      ours.push_back(static_cast<double>(kTypedElements) / tt / 1e9);
      ratios.push_back(tf / tt);
    }
  }
  auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  state.counters["Gelem_s"] = median(ours);
  state.counters["f32_Gelem_s"] = median(f32s);
  state.counters["ratio"] = median(ratios);
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

// Times each call by itself in ticks (tick_counter.hpp) and reports the minimum and the median per call besides
// Google Benchmark's average: a call takes a few hundred ns, so on a shared machine most calls run
// undisturbed and the minimum is the kernel's own cost.
template <class Call>
void time_each_call(benchmark::State& state, const Call& call) {
  std::vector<double> ticks;
  for (auto _ : state) {
    const std::uint64_t t0 = weft::bench::ticks_now();
    call();
    ticks.push_back(static_cast<double>(weft::bench::ticks_now() - t0));
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

// One cache-resident transpose of a 64 x 56 tile (a convolution row of 56 pixels of 64 channels, as
// the bf16 update transposes its input), in elements per second: f32 (8 x 8 blocks), bf16 moved as
// 16-bit lanes, f64 (4 x 4 blocks).
void bm_transpose_tile(benchmark::State& state, DataType type) {
  constexpr std::int64_t m = 64, n = 56;
  const DataType compute = type == DataType::f64 ? DataType::f64 : DataType::f32;
  const Unary k(UnaryDesc{.op = UnaryOp::transpose, .m = m, .n = n, .ld_in = m, .ld_out = n,
                          .types = {.in = type, .out = type, .compute = compute}});
  // In and out in one buffer, out 2 KB past a page boundary from in: loads and stores that sit a
  // multiple of 4 KB apart alias in the store queue, and heap addresses from run to run halved the
  // f32 figure that way.
  const std::size_t bytes = static_cast<std::size_t>(m * n) * weft::jit::size_of(type);
  const std::size_t out_at = (bytes + 4095) / 4096 * 4096 + 2048;
  weft::bench::AlignedVector<std::uint8_t> buffer(out_at + bytes, 0x3f);
  for (auto _ : state) {
    k(UnaryArgs{.in = buffer.data(), .out = buffer.data() + out_at});
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * m * n);
}

// Collects GiB/s per benchmark to print the ratios after the usual console output.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name != "median") continue;
      if (r.benchmark_name().rfind("types/", 0) == 0) {
        if (auto it = r.counters.find("items_per_second"); it != r.counters.end()) items_[r.benchmark_name()] = it->second.value;
        continue;
      }
      auto it = r.counters.find("bytes_per_second");
      if (it != r.counters.end()) gib_[r.benchmark_name()] = it->second.value / double(1 << 30);
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    if (!items_.empty()) {
      // types/<kernel>/<type>/threads:T[_median] against types/<kernel>/f32/threads:T[_median].
      std::printf("\n%-36s %14s %10s\n", "kernel", "Gelements/s", "/ f32");
      for (const auto& [name, items] : items_) {
        const std::size_t kernel_end = name.find('/', 6), type_end = name.find('/', kernel_end + 1);
        const std::string f32 = name.substr(0, kernel_end + 1) + "f32" + name.substr(type_end);
        const auto it = items_.find(f32);
        std::printf("%-36s %14.3f %10.3f\n", name.c_str(), items / 1e9, it != items_.end() ? items / it->second : 0.0);
      }
    }
    if (gib_.empty()) return;
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
  std::map<std::string, double> items_;  // types/...: elements per second
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
  tail_args(benchmark::RegisterBenchmark("tail/binary_max", bm_tail_binary, BinaryOp::max));
  for (DataType type : {DataType::f32, DataType::bf16, DataType::f64}) {
    benchmark::RegisterBenchmark(("transpose_tile/" + std::string(weft::jit::to_string(type))).c_str(),
                                 bm_transpose_tile, type)
        ->MinTime(0.2)->Repetitions(5)->ReportAggregatesOnly(true);
  }
  for (const char* kernel : {"copy", "relu", "add"})
    for (DataType type : {DataType::f32, DataType::bf16, DataType::f64}) {
      const std::string name = std::string("types/") + kernel + "/" + std::string(weft::jit::to_string(type));
      // No fixed repetitions: --benchmark_repetitions decides (a benchmark's own count would win).
      benchmark::RegisterBenchmark(name.c_str(), bm_typed, std::string(kernel), type)
          ->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(0.2);
      if (type != DataType::f32) {
        benchmark::RegisterBenchmark(("types_paired/" + std::string(kernel) + "/" + std::string(weft::jit::to_string(type))).c_str(),
                                     bm_typed_paired, std::string(kernel), type)
            ->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(1);
      }
    }
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
