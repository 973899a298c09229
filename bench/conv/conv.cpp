// The convolution passes (forward, backward by data, backward by weights) of the 23 distinct
// ResNet-50 v1.5 layers (samples/conv/resnet50_layers.txt), fp32, batch N = thread count, with
// every implementation built in (weft's samples, and oneDNN 2.6 when found) measured in one
// process.
//
//   taskset -c 1 weft-bench-conv                                  1 thread, all layers and passes
//   OMP_PROC_BIND=close OMP_PLACES=cores weft-bench-conv --threads=2
//   OMP_WAIT_POLICY=active OMP_PROC_BIND=close OMP_PLACES=cores weft-bench-conv --threads=2 --clock=cpu
//   weft-bench-conv --threads=1,2 --benchmark_filter='fwd/(03|17)_' --min-time=1
//   WEFT_TUNING_DB=share/weft/tuning/amd-zen4-epyc.jsonl weft-bench-conv ...   the weft_auto column's database
//
// Options: --dtype=f32|bf16 (default f32; bf16: bf16 tensors, the weight gradient too, with fp32
// accumulation, every pass; oneDNN's bf16 convolution where the CPU has AVX512_BF16 or emulates it),
// --threads=LIST (default: OpenMP's thread count, OMP_NUM_THREADS), --min-time=SECONDS per
// implementation and row (default 0.3), --layers=FILE (default: the list in the source tree),
// --only=NAMES (measure those implementations alone, comma-separated: weft, weft_auto, dnnl;
// scripts/conv_resnet50.sh takes oneDNN's figures so), --clock=wall|cpu: a round's time is the
// elapsed time (default), or the CPU time of the team's threads divided by their count. On a
// machine shared with other work, elapsed times include the time slices the others get; CPU time
// leaves those out. With several threads that needs OMP_WAIT_POLICY=active: by default libgomp's
// threads sleep once a wait grows long (as when the other thread lost its core) and the sleep
// counts as no CPU time; active waits spin and count, so unshared, the two clocks agree. The bench
// warns when that is missing. Name the clock with the figures.
//
// One benchmark per (pass, layer, thread count), for the passes the list gives settings for (not
// conv1's backward by data: training does not need the gradient of the images). In it the
// implementations take turns, one run each per round (A, B, C, A, B, C, ...), for at least 5 rounds
// and until each has run --min-time, so that the machine's noise hits all of them alike; each one's
// median round is its GFLOPS counter ("<name>_GFLOPS"), and each implementation's speed over the
// peer's (the last one, oneDNN when built) is "<name>/<peer>". A table of all rows, the geometric
// means per pass and the lowest ratios follow the benchmark output.
//
// Implementations: weft's samples on the layer list's settings ("weft", untuned), the same samples
// on the tuning database's configuration ("weft_auto", what `auto` runs; built with the tuner) and
// oneDNN, the peer (weft_conv.hpp, dnnl_conv.hpp; what each runs is in the row's "chosen" column).
// Each prepares a pass (conv_pass.hpp: buffers in its own layouts, filled from the same plain
// inputs, kernels created; run() does the pass alone). Before the timing every implementation runs
// once and the results are compared with the first's (relative L2 difference within twice the FP32
// tolerance of the pass's sums, else the row fails with the norms; the "rel.diff" column).
#include <omp.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include <weft/ops/verification.hpp>

#include "conv_pass.hpp"
#include "dnnl_conv.hpp"
#include "resnet50_layers.hpp"
#include "take_flag.hpp"
#include "weft_conv.hpp"

namespace {

using weft::bench::Implementation;
using weft::bench::Pass;
using weft::bench::PreparedPass;
using weft::samples::ConvLayer;

std::vector<Implementation> implementations() {
  std::vector<Implementation> list;
  list.push_back({"weft", weft::bench::prepare_weft});
#if defined(WEFT_HAVE_TUNER)
  list.push_back({"weft_auto", weft::bench::prepare_weft_auto});
#endif
#if defined(WEFT_HAVE_DNNL)
  list.push_back({"dnnl", weft::bench::prepare_dnnl});
#endif
  return list;
}

struct Options {
  std::vector<int> threads;
  double min_time = 0.3;
  bool cpu_clock = false;
  std::string layers = WEFT_RESNET50_LAYERS;
  weft::jit::DataType dtype = weft::jit::DataType::f32;
};

// What one row measured, per implementation (in implementations() order; 0 GFLOPS: not offered).
struct Row {
  const ConvLayer* layer;
  Pass pass;
  int threads;
  std::vector<double> gflops;
  std::vector<std::string> info;
  double disagreement = -1;  // largest relative L2 difference of a result from the first's (-1: none compared)
};

std::vector<Implementation> g_implementations;
std::vector<ConvLayer> g_layers;
Options g_options;
std::vector<Row> g_rows;

constexpr int kMinRounds = 5, kMaxRounds = 10000;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The CPU time of the team's threads, each read by the thread itself: a thread's own clock
// includes the time it has run since the kernel last accounted it, while the process clock
// (CLOCK_PROCESS_CPUTIME_ID) sees the other threads' time only as of their last scheduler tick,
// which on runs of a few milliseconds came out up to 2x too low or too high on 2 threads.
double team_cpu_seconds(int threads) {
  double sum = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sum)
  {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    sum += static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  }
  return sum;
}

// The time of one run on the chosen clock (Options::cpu_clock).
double seconds_of(const PreparedPass& p, int threads) {
  if (g_options.cpu_clock) {
    const double t0 = team_cpu_seconds(threads);
    p.run();
    return (team_cpu_seconds(threads) - t0) / threads;
  }
  const auto t0 = std::chrono::steady_clock::now();
  p.run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void measure(benchmark::State& state, std::size_t layer_index, Pass pass, int threads) {
  const ConvLayer& layer = g_layers[layer_index];
  omp_set_num_threads(threads);
  const std::int64_t N = threads;
  Row row{&layer, pass, threads, std::vector<double>(g_implementations.size(), 0.0),
          std::vector<std::string>(g_implementations.size())};
  std::vector<std::size_t> offered;  // indices into g_implementations
  std::vector<PreparedPass> prepared;
  for (std::size_t i = 0; i < g_implementations.size(); ++i) {
    try {
      if (auto p = g_implementations[i].prepare(layer, pass, N, g_options.dtype)) {
        row.info[i] = p->info;
        prepared.push_back(std::move(*p));
        offered.push_back(i);
      }
    } catch (const std::exception& e) {
      state.SkipWithError((g_implementations[i].name + " cannot prepare this pass: " + e.what()).c_str());
      return;
    }
  }
  if (prepared.empty()) {
    state.SkipWithError("no implementation offers this pass");
    return;
  }
  // One run each on the same inputs (conv_pass.hpp), outside the timing: the results must agree.
  for (const PreparedPass& p : prepared) p.run();
  if (prepared[0].plain_result) {
    const std::vector<float> first = prepared[0].plain_result();
    for (std::size_t j = 1; j < prepared.size(); ++j) {
      if (!prepared[j].plain_result) continue;
      const std::vector<float> other = prepared[j].plain_result();
      const weft::ops::ErrorNorms e =
          weft::ops::compare(first.data(), other.data(), static_cast<std::int64_t>(other.size()));
      // Random inputs give a result that is not all zeros: zeros on both sides would agree vacuously.
      if (other.size() != first.size() || e.max_abs_ref == 0 ||
          !e.passed(2 * weft::ops::sum_tolerance(prepared[0].reduction_terms) + prepared[0].rounding +
                    prepared[j].rounding)) {
        state.SkipWithError((g_implementations[offered[0]].name + " and " + g_implementations[offered[j]].name +
                             " disagree: " + e.to_string())
                                .c_str());
        return;
      }
      row.disagreement = std::max(row.disagreement, e.l2_rel_error);
    }
  }
  if (row.disagreement >= 0) state.counters["rel_diff"] = row.disagreement;
  std::vector<std::vector<double>> times(prepared.size());
  std::vector<double> totals(prepared.size(), 0.0);
  for (auto _ : state) {
    for (const PreparedPass& p : prepared) p.run();  // warm-up: first touch of the outputs, caches
    for (int round = 0; round < kMinRounds || (*std::min_element(totals.begin(), totals.end()) < g_options.min_time &&
                                               round < kMaxRounds);
         ++round) {
      for (std::size_t i = 0; i < prepared.size(); ++i) {
        times[i].push_back(seconds_of(prepared[i], threads));
        totals[i] += times[i].back();
      }
    }
    state.SetIterationTime(median(times[0]));
  }
  const double flops = weft::bench::conv_flops(layer, N);
  std::string label;
  for (std::size_t j = 0; j < prepared.size(); ++j) {
    const std::size_t i = offered[j];
    row.gflops[i] = flops / median(times[j]) * 1e-9;
    state.counters[g_implementations[i].name + "_GFLOPS"] = row.gflops[i];
    label += (label.empty() ? "" : " ") + g_implementations[i].name + ":" + row.info[i];
  }
  const std::size_t peer = g_implementations.size() - 1;
  for (std::size_t i = 0; i < peer; ++i) {
    if (row.gflops[i] > 0 && row.gflops[peer] > 0) {
      state.counters[g_implementations[i].name + "/" + g_implementations[peer].name] = row.gflops[i] / row.gflops[peer];
    }
  }
  state.SetLabel(label);
  g_rows.push_back(std::move(row));
}

// "AMD EPYC (family 25, model 17)": under a hypervisor the model name alone may not say which core.
std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string name = "unknown CPU", family, model;
  const auto value = [](const std::string& line) { return line.substr(line.find(':') + 2); };
  for (std::string line; std::getline(in, line) && line.find_first_not_of(" \t") != std::string::npos;) {
    if (line.rfind("model name", 0) == 0) name = value(line);
    if (line.rfind("cpu family", 0) == 0) family = value(line);
    if (line.rfind("model\t", 0) == 0) model = value(line);
  }
  return name + " (family " + family + ", model " + model + ")";
}

// The logarithms of one (threads, pass)'s figures, for their geometric means: per implementation,
// its GFLOPS and (but the peer's) its ratio to the peer.
struct Logs {
  std::vector<std::vector<double>> gflops, ratio;
};

double lowest(const std::vector<double>& logs) {
  return logs.empty() ? 0.0 : std::exp(*std::min_element(logs.begin(), logs.end()));
}

double geomean(const std::vector<double>& logs) {
  double sum = 0;
  for (double v : logs) sum += v;
  return logs.empty() ? 0.0 : std::exp(sum / static_cast<double>(logs.size()));
}

void print_table() {
  const std::size_t n = g_implementations.size();
  std::printf("\nweft-bench-conv on %s: %s, batch N = threads; GFLOPS = 2 N C K R S P Q / median %s time\n",
              cpu_name().c_str(), g_options.dtype == weft::jit::DataType::bf16 ? "bf16 (fp32 accumulation)" : "fp32",
              g_options.cpu_clock ? "CPU (team's CPU time / threads)" : "elapsed");
  std::printf("%-7s %-4s %-18s %-9s %-11s %-6s", "threads", "pass", "layer", "H x W", "C -> K", "RxS/s");
  for (const Implementation& impl : g_implementations) std::printf(" %10s", (impl.name + " GF").c_str());
  // The peer (the last implementation) is what the others' ratios divide by.
  const std::size_t peer = n - 1;
  for (std::size_t i = 0; i < peer; ++i) {
    std::printf(" %15s", (g_implementations[i].name + "/" + g_implementations[peer].name).c_str());
  }
  std::printf(" %9s  chosen\n", "rel.diff");
  std::map<std::pair<int, Pass>, Logs> logs;
  for (const Row& r : g_rows) {
    const ConvLayer& l = *r.layer;
    const auto text = [](const char* format, auto... values) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, format, static_cast<long>(values)...);
      return std::string(buffer);
    };
    std::printf("%-7d %-4s %02d_%-15s %-9s %-11s %-6s", r.threads, weft::bench::pass_name(r.pass), l.id, l.name.c_str(),
                text("%ldx%ld", l.H, l.W).c_str(), text("%ld->%ld", l.C, l.K).c_str(),
                text("%ldx%ld/%ld", l.R, l.S, l.stride).c_str());
    Logs& log = logs[{r.threads, r.pass}];
    log.gflops.resize(n);
    log.ratio.resize(n);
    std::string chosen;
    for (std::size_t i = 0; i < n; ++i) {
      std::printf(" %10.1f", r.gflops[i]);
      if (r.gflops[i] > 0) log.gflops[i].push_back(std::log(r.gflops[i]));
      if (!r.info[i].empty()) chosen += " " + g_implementations[i].name + ":" + r.info[i];
    }
    for (std::size_t i = 0; i < peer; ++i) {
      const bool both = r.gflops[i] > 0 && r.gflops[peer] > 0;
      std::printf(" %15.3f", both ? r.gflops[i] / r.gflops[peer] : 0.0);
      if (both) log.ratio[i].push_back(std::log(r.gflops[i] / r.gflops[peer]));
    }
    if (r.disagreement >= 0) {
      std::printf(" %9.1e %s\n", r.disagreement, chosen.c_str());
    } else {
      std::printf(" %9s %s\n", "-", chosen.c_str());
    }
  }
  for (const auto& [key, log] : logs) {
    std::printf("%-7d %-4s %-47s", key.first, weft::bench::pass_name(key.second), "geometric mean");
    for (std::size_t i = 0; i < n; ++i) std::printf(" %10.1f", geomean(log.gflops[i]));
    for (std::size_t i = 0; i < peer; ++i) std::printf(" %15.3f", geomean(log.ratio[i]));
    std::printf("\n");
    if (peer == 0) continue;
    std::printf("%-7d %-4s %-47s", key.first, weft::bench::pass_name(key.second), "lowest ratio");
    for (std::size_t i = 0; i < n; ++i) std::printf(" %10s", "");
    for (std::size_t i = 0; i < peer; ++i) std::printf(" %15.3f", lowest(log.ratio[i]));
    std::printf("\n");
  }
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> items;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

std::vector<int> thread_counts(const std::string& text) {
  std::vector<int> counts;
  for (const std::string& item : split_commas(text)) {
    char* end = nullptr;
    const long n = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || n < 1 || n > 4096) {
      std::fprintf(stderr, "weft-bench-conv: --threads takes thread counts >= 1 separated by commas, not '%s'\n",
                   text.c_str());
      std::exit(2);
    }
    counts.push_back(static_cast<int>(n));
  }
  return counts;
}

}  // namespace

int main(int argc, char** argv) {
  std::string value;
  g_options.threads = {omp_get_max_threads()};
  if (weft::bench::take_flag(argc, argv, "threads", value)) g_options.threads = thread_counts(value);
  if (weft::bench::take_flag(argc, argv, "min-time", value)) {
    char* end = nullptr;
    g_options.min_time = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !(g_options.min_time >= 0)) {
      std::fprintf(stderr, "weft-bench-conv: --min-time takes seconds >= 0, not '%s'\n", value.c_str());
      return 2;
    }
  }
  if (weft::bench::take_flag(argc, argv, "layers", value)) g_options.layers = value;
  if (weft::bench::take_flag(argc, argv, "dtype", value)) {
    if (value != "f32" && value != "bf16") {
      std::fprintf(stderr, "weft-bench-conv: --dtype is f32 or bf16, not '%s'\n", value.c_str());
      return 2;
    }
    g_options.dtype = value == "bf16" ? weft::jit::DataType::bf16 : weft::jit::DataType::f32;
  }
  if (weft::bench::take_flag(argc, argv, "clock", value)) {
    if (value != "wall" && value != "cpu") {
      std::fprintf(stderr, "weft-bench-conv: --clock is wall or cpu, not '%s'\n", value.c_str());
      return 2;
    }
    g_options.cpu_clock = value == "cpu";
  }
  const char* wait_policy = std::getenv("OMP_WAIT_POLICY");
  if (g_options.cpu_clock && (wait_policy == nullptr || std::string(wait_policy) != "active") &&
      std::any_of(g_options.threads.begin(), g_options.threads.end(), [](int t) { return t > 1; })) {
    std::fprintf(stderr, "weft-bench-conv: warning: --clock=cpu with several threads needs OMP_WAIT_POLICY=active "
                         "(sleeping waits count as no CPU time: figures too high)\n");
  }
  std::string only;
  if (weft::bench::take_flag(argc, argv, "only", value)) only = value;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

  g_implementations = implementations();
  if (!only.empty()) {
    const std::vector<std::string> names = split_commas(only);
    for (const std::string& name : names) {
      if (std::none_of(g_implementations.begin(), g_implementations.end(),
                       [&](const Implementation& impl) { return impl.name == name; })) {
        std::fprintf(stderr, "weft-bench-conv: --only: no implementation '%s' in this build (it has:", name.c_str());
        for (const Implementation& impl : g_implementations) std::fprintf(stderr, " %s", impl.name.c_str());
        std::fprintf(stderr, ")\n");
        return 2;
      }
    }
    std::erase_if(g_implementations, [&](const Implementation& impl) {
      return std::find(names.begin(), names.end(), impl.name) == names.end();
    });
  }
  try {
    g_layers = weft::samples::read_resnet50_layers(g_options.layers);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft-bench-conv: %s\n", e.what());
    return 2;
  }
  for (int threads : g_options.threads) {
    for (Pass pass : {Pass::fwd, Pass::bwd, Pass::upd}) {
      for (std::size_t i = 0; i < g_layers.size(); ++i) {
        const ConvLayer& layer = g_layers[i];
        const bool listed = pass == Pass::fwd ? layer.fwd.has_value()
                            : pass == Pass::bwd ? layer.bwd.has_value()
                                                : layer.upd.has_value();
        if (!listed) continue;
        char name[96];
        std::snprintf(name, sizeof name, "%s/%02d_%s/threads:%d", weft::bench::pass_name(pass), layer.id,
                      layer.name.c_str(), threads);
        benchmark::RegisterBenchmark(name, measure, i, pass, threads)
            ->Iterations(1)
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  print_table();
  benchmark::Shutdown();
  return 0;
}
