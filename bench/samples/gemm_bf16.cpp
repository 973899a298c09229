// The forward GEMM sample in bf16 next to the same sample in FP32 and oneDNN 2.6's bf16 matmul, on
// M = N = K in {1024, 2048}, in one run: the three are timed in alternating rounds
// (bench/support/interleaved.hpp), so the ratios bf16 / f32 and weft bf16 / oneDNN bf16 see the
// same machine. Counters: GFLOPS of each (median round) and the two ratios.
//
//   weft_f32    the sample in FP32, recommended_gemm_config (gemm_defaults.hpp)
//   weft_bf16   the sample in bf16, recommended_gemm_config for bf16: weights in VNNI-2 tiles and
//               activations blocked, both prepared once outside the timed region (an MLP layer's
//               view), output bf16
//   dnnl_bf16   oneDNN matmul, bf16 src and weights, bf16 dst (the sample's output type), f32
//               accumulation; weights in the layout oneDNN picks (format_tag::any), reordered once
//               outside the timed region, its fair ground; src and dst plain
//
// Both bf16 sides compute on the same bf16 values (the sample's seeds); their outputs are compared
// once per shape (rel_diff: relative L2 difference, a few 1e-3 for two bf16 roundings), so that a
// wrong result never passes for a fast one.
//
// Threads: OpenMP's (OMP_NUM_THREADS), for weft and oneDNN alike. Run pinned:
//   OMP_NUM_THREADS=2 OMP_WAIT_POLICY=active OMP_PROC_BIND=close OMP_PLACES=cores weft-bench-gemm-bf16
//   OMP_NUM_THREADS=1 taskset -c 1 weft-bench-gemm-bf16
// The bf16 configuration can be overridden (the FP32 one stays the baseline): --loop=STRING --bm=
// --bn= --bk= --kbf= --k-blocks=, --m-blocks=, --n-blocks= (comma lists); --rounds=R (default 11).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#if defined(WEFT_HAVE_DNNL)
#include <oneapi/dnnl/dnnl.hpp>
#endif

#include <weft/ops/gemm_defaults.hpp>
#include <weft/ops/gemm_fwd.hpp>

#include "gemm_fwd_data.hpp"
#include "gemm_override_flags.hpp"
#include "interleaved.hpp"
#include "take_flag.hpp"

namespace {

using weft::ops::bfloat16;
using weft::ops::GemmFwd;
using weft::ops::GemmFwdConfig;
using weft::samples::GemmFwdData;

// Overrides of the bf16 configuration over recommended_gemm_config's choice.
weft::ops::GemmConfigOverride g_override;
int g_rounds = 11;

GemmFwdConfig config_for(std::int64_t n, int threads, weft::jit::DataType dtype) {
  GemmFwdConfig problem;
  problem.M = problem.N = problem.K = n;
  problem.dtype = dtype;
  GemmFwdConfig c = weft::ops::recommended_gemm_config(problem, threads);
  if (dtype != weft::jit::DataType::f32) g_override.apply(c);
  return c;
}

#if defined(WEFT_HAVE_DNNL)
// oneDNN's matmul is row-major: dst (N x M) = src (N x K) x weights (K x M) is the sample's
// column-major C = A x B on the same memory (src = B, weights = A, dst = C).
struct DnnlMatmul {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::matmul primitive;
  dnnl::memory src, weights, dst;
  std::string implementation;

  DnnlMatmul(std::int64_t n, const std::vector<float>& a, const std::vector<float>& b) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    const dnnl::memory::dims src_dims{n, n}, weights_dims{n, n}, dst_dims{n, n};
    const dnnl::memory::desc src_md(src_dims, dt::bf16, tag::ab), dst_md(dst_dims, dt::bf16, tag::ab);
    const dnnl::memory::desc any_weights(weights_dims, dt::bf16, tag::any);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, any_weights, dst_md), engine);
    implementation = pd.impl_info_str();
    primitive = dnnl::matmul(pd);
    src = from_floats(b, src_md);
    // The weights in oneDNN's layout, reordered here, outside the timed region.
    dnnl::memory plain = from_floats(a, dnnl::memory::desc(weights_dims, dt::bf16, tag::ab));
    weights = dnnl::memory(pd.weights_desc(), engine);
    dnnl::reorder(plain, weights).execute(stream, plain, weights);
    dst = dnnl::memory(dst_md, engine);
    stream.wait();
  }

  dnnl::memory from_floats(const std::vector<float>& values, const dnnl::memory::desc& md) {
    dnnl::memory m(md, engine);
    auto* out = static_cast<bfloat16*>(m.get_data_handle());
    for (std::size_t i = 0; i < values.size(); ++i) out[i] = weft::jit::to_bfloat16(values[i]);
    return m;
  }

  void run() {
    primitive.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}});
    stream.wait();
  }
};

// The values GemmFwdData computes on (its default seeds), for the peer.
std::vector<float> bf16_values(std::int64_t count, std::uint64_t seed) {
  std::vector<float> v(static_cast<std::size_t>(count));
  weft::ops::fill_random(v.data(), count, seed);
  weft::ops::round_to_element_type<bfloat16>(v);
  return v;
}
#endif

void gemm_bf16(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const int threads = omp_get_max_threads();
  const GemmFwd f32(config_for(n, threads, weft::jit::DataType::f32));
  const GemmFwd bf16(config_for(n, threads, weft::jit::DataType::bf16));
  const GemmFwdData<float> f32_data(f32, false);
  const GemmFwdData<bfloat16> bf16_data(bf16, false);
  std::vector<std::function<void()>> sides{[&] { f32_data.run(); }, [&] { bf16_data.run(); }};
#if defined(WEFT_HAVE_DNNL)
  DnnlMatmul dnnl(n, bf16_values(n * n, 1), bf16_values(n * n, 2));
  sides.emplace_back([&] { dnnl.run(); });
#endif
  std::vector<double> seconds;
  const int calls = n >= 2048 ? 2 : 8;
  for (auto _ : state) seconds = weft::bench::interleave_all(sides, calls, g_rounds);

  const double flop = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) * calls;
  state.counters["weft_f32"] = flop / seconds[0] * 1e-9;
  state.counters["weft_bf16"] = flop / seconds[1] * 1e-9;
  state.counters["bf16/f32"] = seconds[0] / seconds[1];
  std::string label = "bf16 " + bf16.measure_tag(threads);
#if defined(WEFT_HAVE_DNNL)
  state.counters["dnnl_bf16"] = flop / seconds[2] * 1e-9;
  state.counters["weft/dnnl"] = seconds[2] / seconds[1];
  // The outputs of the two bf16 sides, from the same inputs.
  std::vector<float> ours(static_cast<std::size_t>(n * n));
  weft::ops::from_blocked(bf16_data.activations()[1], ours.data(), bf16.m_blocking(), bf16.n_blocking(), false);
  const auto* theirs = static_cast<const bfloat16*>(dnnl.dst.get_data_handle());
  double diff2 = 0, ref2 = 0;
  for (std::size_t i = 0; i < ours.size(); ++i) {
    const double t = weft::jit::to_float(theirs[i]);
    diff2 += (ours[i] - t) * (ours[i] - t);
    ref2 += t * t;
  }
  state.counters["rel_diff"] = std::sqrt(diff2 / ref2);
  if (!(std::sqrt(diff2 / ref2) < 1e-2)) state.SkipWithError("weft's and oneDNN's bf16 results differ");
  label += " | oneDNN " + dnnl.implementation;
#endif
  state.SetLabel(label);
}

}  // namespace

int main(int argc, char** argv) {
  weft::bench::take_gemm_override(argc, argv, g_override);
  std::string value;
  if (weft::bench::take_flag(argc, argv, "rounds", value)) g_rounds = std::max(1, std::atoi(value.c_str()));

  for (int n : {1024, 2048}) {
    benchmark::RegisterBenchmark("gemm_bf16", gemm_bf16)
        ->Arg(n)
        ->ArgName("n")
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1)
        ->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
