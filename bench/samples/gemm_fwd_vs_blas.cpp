// The forward GEMM sample (ThreadedLoop + BRGEMM, blocked layouts) next to OpenBLAS sgemm and
// oneDNN's dnnl_sgemm (plain column-major layouts, their fair ground) on M = N = K in {512, 1024,
// 2048}, 1 and 2 threads, in one run. GFLOPS counter; median of repetitions; ratios at the end.
//
//   weft_fwd           blocked operands prepared once (what an MLP layer sees: weights and
//                      activations stay blocked between layers)
//   weft_fwd_convert   also converts A and B into blocked layouts and C back, every iteration
//
// The loop_string and blocking per size can be overridden: --loop=STRING --bm= --bn= --bk= --kbf=
// --k-blocks=, --m-blocks=, --n-blocks= (comma lists), e.g. to try what the tuner found.
//
// Run pinned: OMP_PROC_BIND=close OMP_PLACES=cores weft-bench-gemm-fwd-vs-blas
// (OpenMP threads, ours and oneDNN's, are pinned; OpenBLAS's pthreads may use every core.)
#include <omp.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "all_cpus_scope.hpp"

#if defined(WEFT_HAVE_OPENBLAS)
#include <cblas.h>
extern "C" void openblas_set_num_threads(int);
#endif
#if defined(WEFT_HAVE_DNNL)
#include <oneapi/dnnl/dnnl.h>
#endif

#include "blocked_layout.hpp"
#include "gemm_defaults.hpp"
#include "gemm_fwd.hpp"
#include "gemm_reference.hpp"
#include "ratio_reporter.hpp"
#include "gemm_override_flags.hpp"

namespace {

using weft::samples::Blocking;
using weft::samples::GemmFwd;
using weft::samples::GemmFwdConfig;

// Defaults: samples::recommended_gemm_config (gemm_defaults.hpp), unless overridden.
weft::samples::GemmConfigOverride g_override;

GemmFwdConfig config_for(std::int64_t n, int threads) {
  GemmFwdConfig problem;
  problem.M = problem.N = problem.K = n;
  GemmFwdConfig c = weft::samples::recommended_gemm_config(problem, threads);
  g_override.apply(c);
  return c;
}

void set_gflops(benchmark::State& state, std::int64_t n) {
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * static_cast<double>(n * n * n) * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

struct Operands {
  std::vector<float> a, b, c;
  explicit Operands(std::int64_t n)
      : a(static_cast<std::size_t>(n * n)), b(a.size()), c(a.size(), 0.0f) {
    weft::samples::fill_random(a.data(), n * n, 1);
    weft::samples::fill_random(b.data(), n * n, 2);
  }
};

void weft_gemm(benchmark::State& state, bool convert) {
  const std::int64_t n = state.range(0);
  omp_set_num_threads(static_cast<int>(state.range(1)));
  const GemmFwd gemm(config_for(n, static_cast<int>(state.range(1))));
  const Blocking mB = gemm.m_blocking(), nB = gemm.n_blocking(), kB = gemm.k_blocking();
  Operands plain(n);
  std::vector<float> a = weft::samples::to_blocked(plain.a.data(), mB, kB, true);
  std::vector<float> b = weft::samples::to_blocked(plain.b.data(), kB, nB, false);
  std::vector<float> c(static_cast<std::size_t>(mB.blocks() * mB.block * nB.blocks() * nB.block));
  float* acts[] = {b.data(), c.data()};
  const float* weights[] = {a.data()};
  for (auto _ : state) {
    if (convert) {
      a = weft::samples::to_blocked(plain.a.data(), mB, kB, true);
      b = weft::samples::to_blocked(plain.b.data(), kB, nB, false);
      acts[0] = b.data();
      weights[0] = a.data();
    }
    gemm.run(acts, weights, {});
    if (convert) weft::samples::from_blocked(c.data(), plain.c.data(), mB, nB, false);
    benchmark::ClobberMemory();
  }
  set_gflops(state, n);
  state.SetLabel(gemm.measure_tag(static_cast<int>(state.range(1))));
}

void weft_fwd(benchmark::State& state) { weft_gemm(state, false); }
void weft_fwd_convert(benchmark::State& state) { weft_gemm(state, true); }

#if defined(WEFT_HAVE_OPENBLAS)
void openblas(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const AllCpusScope unpinned;
  openblas_set_num_threads(static_cast<int>(state.range(1)));
  Operands m(n);
  const auto ni = static_cast<blasint>(n);
  for (auto _ : state) {
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, m.a.data(), ni,
                m.b.data(), ni, 0.0f, m.c.data(), ni);
    benchmark::ClobberMemory();
  }
  set_gflops(state, n);
}
#endif

#if defined(WEFT_HAVE_DNNL)
void dnnl(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  omp_set_num_threads(static_cast<int>(state.range(1)));
  Operands m(n);
  for (auto _ : state) {
    // Row-major in oneDNN's convention; for square operands the work is the same.
    dnnl_sgemm('N', 'N', n, n, n, 1.0f, m.a.data(), n, m.b.data(), n, 0.0f, m.c.data(), n);
    benchmark::ClobberMemory();
  }
  set_gflops(state, n);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  weft::bench::take_gemm_override(argc, argv, g_override);

  // Registered shape by shape so ours and the peers run back to back on each shape: the machine's
  // noise then hits both sides of a ratio alike.
  for (int threads : {1, 2}) {
    for (int n : {512, 1024, 2048}) {
      auto shape = [&](benchmark::internal::Benchmark* b) {
        b->Args({n, threads})->ArgNames({"n", "threads"})->Unit(benchmark::kMillisecond)
            ->UseRealTime()->MinTime(0.5)->Repetitions(3);
      };
      shape(benchmark::RegisterBenchmark("weft_fwd", weft_fwd));
      shape(benchmark::RegisterBenchmark("weft_fwd_convert", weft_fwd_convert));
#if defined(WEFT_HAVE_OPENBLAS)
      shape(benchmark::RegisterBenchmark("openblas", openblas));
#endif
#if defined(WEFT_HAVE_DNNL)
      shape(benchmark::RegisterBenchmark("dnnl", dnnl));
#endif
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  weft::bench::RatioReporter reporter("GFLOPS", "weft", {"openblas", "dnnl"});
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_ratios();
  benchmark::Shutdown();
  return 0;
}
