// The forward GEMM sample (ThreadedLoop + BRGEMM, blocked layouts) next to OpenBLAS sgemm and
// oneDNN's dnnl_sgemm (plain column-major layouts, their fair ground) on M = N = K in {512, 1024,
// 2048}, 1 and 2 threads, in one run.
//
//   interleaved        the three timed in alternating rounds (weft, OpenBLAS, oneDNN, weft, ...;
//                      bench/support/interleaved.hpp), the median round of each: the ratios
//                      weft/openblas and weft/dnnl see the same spells of the machine's noise. The
//                      figures to quote. Before timing, the three results are compared (rel_diff
//                      against OpenBLAS's, else oneDNN's: relative L2 difference; over 1e-5 fails
//                      the row).
//   weft_fwd           blocked operands prepared once (what an MLP layer sees: weights and
//                      activations stay blocked between layers); one implementation per benchmark,
//                      median of repetitions, the ratios at the end
//   weft_fwd_convert   also converts A and B into blocked layouts and C back, every iteration
//   openblas, dnnl     the peers alone, for those ratios
//
// The loop_string and blocking per size can be overridden: --loop=STRING --bm= --bn= --bk= --kbf=
// --k-blocks=, --m-blocks=, --n-blocks= (comma lists), e.g. to try what the tuner found;
// --rounds=R rounds of the interleaved rows (default 11).
//
// The interleaved rows' label names the kernels OpenBLAS chose ("OpenBLAS core Haswell"): on a CPU it
// does not know it runs generic ones, and OPENBLAS_CORETYPE=SkylakeX (or Haswell, Zen) names its
// best for a fair comparison (docs/gemm_sample.md).
//
// Run pinned: OMP_PROC_BIND=close OMP_PLACES=cores weft-bench-gemm-fwd-vs-blas
// (OpenMP threads, ours and oneDNN's, are pinned; OpenBLAS's pthreads may use every core.)
//   weft-bench-gemm-fwd-vs-blas --benchmark_filter='interleaved/n:(1024|2048)'   the rows
#include <omp.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "all_cpus_scope.hpp"

#if defined(WEFT_HAVE_OPENBLAS)
#include <cblas.h>
extern "C" void openblas_set_num_threads(int);
extern "C" char* openblas_get_corename(void);
#endif
#if defined(WEFT_HAVE_DNNL)
#include <oneapi/dnnl/dnnl.h>
#endif

#include <weft/ops/blocked_layout.hpp>
#include <weft/ops/gemm_defaults.hpp>
#include <weft/ops/gemm_fwd.hpp>
#include <weft/ops/gemm_reference.hpp>

#include "gemm_override_flags.hpp"
#include "interleaved.hpp"
#include "ratio_reporter.hpp"
#include "take_flag.hpp"

namespace {

using weft::ops::Blocking;
using weft::ops::GemmFwd;
using weft::ops::GemmFwdConfig;

// Defaults: ops::recommended_gemm_config (gemm_defaults.hpp), unless overridden.
weft::ops::GemmConfigOverride g_override;
int g_rounds = 11;

GemmFwdConfig config_for(std::int64_t n, int threads) {
  GemmFwdConfig problem;
  problem.M = problem.N = problem.K = n;
  GemmFwdConfig c = weft::ops::recommended_gemm_config(problem, threads);
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
    weft::ops::fill_random(a.data(), n * n, 1);
    weft::ops::fill_random(b.data(), n * n, 2);
  }
};

// The sample's operands: the plain ones, and A and B converted into its blocked layouts.
struct BlockedOperands {
  const GemmFwd& gemm;
  Blocking mB = gemm.m_blocking(), nB = gemm.n_blocking(), kB = gemm.k_blocking();
  Operands plain;
  std::vector<float> a, b, c;
  float* acts[2];
  const float* weights[1];

  BlockedOperands(const GemmFwd& g, std::int64_t n)
      : gemm(g), plain(n), c(static_cast<std::size_t>(mB.blocks() * mB.block * nB.blocks() * nB.block)) {
    block();
  }
  // A and B from the plain operands, into the blocked ones the runs read.
  void block() {
    a = weft::ops::to_blocked(plain.a.data(), mB, kB, true);
    b = weft::ops::to_blocked(plain.b.data(), kB, nB, false);
    acts[0] = b.data(), acts[1] = c.data();
    weights[0] = a.data();
  }
  void run() const { gemm.run(acts, weights, {}); }
  // C back into the plain (column-major) layout.
  void unblock_c(float* plain_c) const { weft::ops::from_blocked(c.data(), plain_c, mB, nB, false); }
};

void weft_gemm(benchmark::State& state, bool convert) {
  const std::int64_t n = state.range(0);
  omp_set_num_threads(static_cast<int>(state.range(1)));
  const GemmFwd gemm(config_for(n, static_cast<int>(state.range(1))));
  BlockedOperands m(gemm, n);
  for (auto _ : state) {
    if (convert) m.block();
    m.run();
    if (convert) m.unblock_c(m.plain.c.data());
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

// Relative L2 difference of two n x n column-major results.
double relative_difference(const std::vector<float>& ours, const std::vector<float>& theirs) {
  double diff2 = 0, ref2 = 0;
  for (std::size_t i = 0; i < ours.size(); ++i) {
    const double d = static_cast<double>(ours[i]) - static_cast<double>(theirs[i]);
    diff2 += d * d;
    ref2 += static_cast<double>(theirs[i]) * theirs[i];
  }
  return std::sqrt(diff2 / ref2);
}

// weft, OpenBLAS and oneDNN in alternating rounds on the same inputs (see the top of the file).
void interleaved(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  omp_set_num_threads(threads);
  const GemmFwd gemm(config_for(n, threads));
  const BlockedOperands m(gemm, n);
  const Operands& plain = m.plain;
  std::vector<std::function<void()>> sides{[&] { m.run(); }};
  std::vector<std::string> names{"weft"};
  const auto ni = static_cast<int>(n);
#if defined(WEFT_HAVE_OPENBLAS)
  std::vector<float> c_openblas(plain.c.size());
  sides.emplace_back([&] {
    const AllCpusScope unpinned;
    openblas_set_num_threads(threads);
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, plain.a.data(), ni, plain.b.data(), ni,
                0.0f, c_openblas.data(), ni);
  });
  names.emplace_back("openblas");
#endif
#if defined(WEFT_HAVE_DNNL)
  std::vector<float> c_dnnl(plain.c.size());
  sides.emplace_back([&] {
    // Row-major in oneDNN's convention: C^T = B^T A^T is the column-major C = A B.
    dnnl_sgemm('N', 'N', n, n, n, 1.0f, plain.b.data(), n, plain.a.data(), n, 0.0f, c_dnnl.data(), n);
  });
  names.emplace_back("dnnl");
#endif
  // One run of each, compared, before the timing: a wrong result never passes for a fast one.
  for (const auto& side : sides) side();
  std::vector<float> ours(plain.c.size());
  m.unblock_c(ours.data());
  double rel_diff = -1;
#if defined(WEFT_HAVE_OPENBLAS)
  rel_diff = relative_difference(ours, c_openblas);
#elif defined(WEFT_HAVE_DNNL)
  rel_diff = relative_difference(ours, c_dnnl);
#endif
#if defined(WEFT_HAVE_OPENBLAS) && defined(WEFT_HAVE_DNNL)
  rel_diff = std::max(rel_diff, relative_difference(c_dnnl, c_openblas));
#endif
  if (!(rel_diff < 1e-5)) {
    state.SkipWithError(rel_diff < 0 ? "no peer built (OpenBLAS, oneDNN): nothing to interleave with"
                                     : "the results differ (rel_diff over 1e-5)");
    return;
  }
  std::vector<double> seconds;
  const int calls = n >= 2048 ? 1 : n >= 1024 ? 4 : 16;
  for (auto _ : state) seconds = weft::bench::interleave_all(sides, calls, g_rounds);
  const double flop = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) * calls;
  for (std::size_t i = 0; i < sides.size(); ++i) state.counters[names[i]] = flop / seconds[i] * 1e-9;
  for (std::size_t i = 1; i < sides.size(); ++i) state.counters["weft/" + names[i]] = seconds[i] / seconds[0];
  state.counters["rel_diff"] = rel_diff;
  std::string label = gemm.measure_tag(threads);
#if defined(WEFT_HAVE_OPENBLAS)
  // OpenBLAS picks its kernels by CPU model and falls back to generic ones on a CPU it does not know
  // (Debian's 0.3.21 on Intel family 6 model 207 ran 26-35 GFLOPS where OPENBLAS_CORETYPE=SkylakeX
  // ran 140): the label says which it took.
  label += " | OpenBLAS core " + std::string(openblas_get_corename());
#endif
  state.SetLabel(label);
}

}  // namespace

int main(int argc, char** argv) {
  weft::bench::take_gemm_override(argc, argv, g_override);
  if (std::string rounds; weft::bench::take_flag(argc, argv, "rounds", rounds)) g_rounds = std::max(1, std::atoi(rounds.c_str()));

  // Registered shape by shape so ours and the peers run back to back on each shape: the machine's
  // noise then hits both sides of a ratio alike.
  for (int threads : {1, 2}) {
    for (int n : {512, 1024, 2048}) {
      auto shape = [&](benchmark::internal::Benchmark* b) {
        b->Args({n, threads})->ArgNames({"n", "threads"})->Unit(benchmark::kMillisecond)
            ->UseRealTime()->MinTime(0.5)->Repetitions(3);
      };
      benchmark::RegisterBenchmark("interleaved", interleaved)
          ->Args({n, threads})->ArgNames({"n", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
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
