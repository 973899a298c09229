// BRGEMM FP32: weft, libxsmm 1.17 and OpenBLAS side by side, hot data (everything fits in L1/L2
// and is reused across calls), C += sum_i A_i * B_i with strided batches.
//
//   taskset -c 0 build/bench/weft-bench-brgemm --benchmark_repetitions=5
//
// WEFT_BENCH_PLAN=panel_vectors,max_cols,k_unroll[,k_split] measures another plan than the default one
// (BrgemmPlanOptions), to tune plan_brgemm. WEFT_BENCH_PREFETCH=next_c measures kernels with
// BrgemmPrefetch::next_c (here every call reuses the same C, so this shows the prefetch's cost on hot
// data; the tensor benchmark's seed configurations show its gain on streaming C).
//
// Each `gflops` counter is the rate of one implementation. `BM_ratio` interleaves weft and libxsmm
// in one benchmark (rounds of back-to-back calls, median round time of each) and reports
// weft/libxsmm as `ratio`: the figure to quote, since it is robust to the machine's noise.
// `BM_ratio_openblas` does the same against OpenBLAS (one sgemm per batch entry): the peer on
// AArch64, where the kernels are Neon's (docs/tpp_brgemm.md, "On an ARM machine").
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "aligned_buffer.hpp"
#include "env_shapes.hpp"
#include "interleaved.hpp"
#include "emitters.hpp"
#include "weft/tpp/brgemm.hpp"

#ifdef WEFT_HAVE_LIBXSMM
#include <libxsmm.h>
#endif
#ifdef WEFT_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace {

using namespace weft::tpp;

// Operands 64-byte aligned (aligned_buffer.hpp), for weft and the peers alike.
struct Problem {
  int m, n, k, count;
  weft::bench::AlignedVector<float> a, b, c;

  explicit Problem(const benchmark::State& state)
      : m(static_cast<int>(state.range(0))),
        n(static_cast<int>(state.range(1))),
        k(static_cast<int>(state.range(2))),
        count(static_cast<int>(state.range(3))),
        a(static_cast<std::size_t>(m) * k * count),
        b(static_cast<std::size_t>(k) * n * count),
        c(static_cast<std::size_t>(m) * n) {
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (float& x : a) x = u(rng);
    for (float& x : b) x = u(rng);
    for (float& x : c) x = u(rng);
  }

  double flops() const { return 2.0 * m * n * k * count; }
  std::int64_t stride_a() const { return static_cast<std::int64_t>(m) * k; }
  std::int64_t stride_b() const { return static_cast<std::int64_t>(k) * n; }
};

void set_gflops(benchmark::State& state, const Problem& p) {
  state.counters["gflops"] = benchmark::Counter(p.flops() * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// A callable for weft on the problem: the raw generated entry, as libxsmm's is called raw.
struct Weft {
  BrgemmKernelFn fn;
  BrgemmArgs args;
  std::shared_ptr<weft::jit::GeneratedCode> code;
  std::optional<Brgemm> kernel;  // owns fn's code (the kernel cache may drop it)
  explicit Weft(Problem& p) {
    const char* prefetch = std::getenv("WEFT_BENCH_PREFETCH");
    const BrgemmDesc d{.m = p.m, .n = p.n, .k = p.k, .lda = p.m, .ldb = p.k, .ldc = p.m, .beta = 1,
                       .prefetch = prefetch != nullptr && std::string(prefetch) == "next_c"
                                       ? BrgemmPrefetch::next_c
                                       : BrgemmPrefetch::none};
    if (const char* env = std::getenv("WEFT_BENCH_PLAN")) {
      BrgemmPlanOptions o;
      if (std::sscanf(env, "%d,%d,%d,%d", &o.panel_vectors, &o.max_cols, &o.k_unroll, &o.k_split) < 1) o = {};
      code = weft::tpp::detail::emit_kernel(d, plan_brgemm(d, weft::jit::selected_isa(), o));
      fn = code->finalize<BrgemmKernelFn>("bench");
    } else {
      fn = kernel.emplace(d).kernel();
    }
    args.a = p.a.data();
    args.b = p.b.data();
    args.c = p.c.data();
    args.count = p.count;
    args.stride_a = p.stride_a();
    args.stride_b = p.stride_b();
  }
  void operator()() const { fn(&args); }
};

void BM_weft(benchmark::State& state) {
  Problem p(state);
  const Weft w(p);
  for (auto _ : state) {
    w();
    benchmark::ClobberMemory();
  }
  set_gflops(state, p);
}

#ifdef WEFT_HAVE_LIBXSMM
struct Libxsmm {
  libxsmm_smmfunction single = nullptr;
  libxsmm_smmfunction_reducebatch_strd batch = nullptr;
  const float *a, *b;
  float* c;
  unsigned long long count;
  explicit Libxsmm(Problem& p) : a(p.a.data()), b(p.b.data()), c(p.c.data()), count(static_cast<unsigned long long>(p.count)) {
    libxsmm_init();
    const libxsmm_blasint lda = p.m, ldb = p.k, ldc = p.m;
    const float alpha = 1.0f, beta = 1.0f;
    const int flags = LIBXSMM_GEMM_FLAG_NONE;
    if (p.count == 1) {
      single = libxsmm_smmdispatch(p.m, p.n, p.k, &lda, &ldb, &ldc, &alpha, &beta, &flags, nullptr);
    } else {
      // libxsmm 1.17: the batch strides are in bytes.
      batch = libxsmm_smmdispatch_reducebatch_strd(p.m, p.n, p.k, static_cast<libxsmm_blasint>(p.stride_a() * 4),
                                                   static_cast<libxsmm_blasint>(p.stride_b() * 4), &lda, &ldb, &ldc,
                                                   &alpha, &beta, &flags, nullptr);
    }
  }
  bool ok() const { return single != nullptr || batch != nullptr; }
  void operator()() const {
    if (single != nullptr) {
      single(a, b, c);
    } else {
      batch(a, b, c, &count);
    }
  }
};

void BM_libxsmm(benchmark::State& state) {
  Problem p(state);
  const Libxsmm x(p);
  if (!x.ok()) {
    state.SkipWithError("libxsmm dispatch failed");
    return;
  }
  for (auto _ : state) {
    x();
    benchmark::ClobberMemory();
  }
  set_gflops(state, p);
}

// Rounds of back-to-back calls, alternating weft and libxsmm; the median round of each.
void BM_ratio(benchmark::State& state) {
  Problem p(state);
  const Weft w(p);
  const Libxsmm x(p);
  if (!x.ok()) {
    state.SkipWithError("libxsmm dispatch failed");
    return;
  }
  const int calls = std::max(16, static_cast<int>(2e6 / p.flops()));
  weft::bench::Interleaved t;
  for (auto _ : state) t = weft::bench::interleave(w, x, calls);
  const double t_ours = t.first, t_theirs = t.second;
  state.counters["weft_gflops"] = p.flops() * calls / t_ours * 1e-9;
  state.counters["xsmm_gflops"] = p.flops() * calls / t_theirs * 1e-9;
  state.counters["ratio"] = t_theirs / t_ours;
}
#endif

#ifdef WEFT_HAVE_OPENBLAS
// The batch as OpenBLAS computes it: one sgemm per entry, accumulating into C.
struct OpenBlas {
  Problem* p;
  void operator()() const {
    for (int i = 0; i < p->count; ++i)
      cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, p->m, p->n, p->k, 1.0f, p->a.data() + i * p->stride_a(),
                  p->m, p->b.data() + i * p->stride_b(), p->k, 1.0f, p->c.data(), p->m);
  }
};

void BM_openblas(benchmark::State& state) {
  Problem p(state);
  const OpenBlas blas{&p};
  for (auto _ : state) {
    blas();
    benchmark::ClobberMemory();
  }
  set_gflops(state, p);
}

// weft / OpenBLAS interleaved (as BM_ratio): the figure to quote where libxsmm does not exist
// (AArch64: Debian builds libxsmm for amd64 only).
void BM_ratio_openblas(benchmark::State& state) {
  Problem p(state);
  const Weft w(p);
  const OpenBlas blas{&p};
  const int calls = std::max(16, static_cast<int>(2e6 / p.flops()));
  weft::bench::Interleaved t;
  for (auto _ : state) t = weft::bench::interleave(w, blas, calls);
  state.counters["weft_gflops"] = p.flops() * calls / t.first * 1e-9;
  state.counters["openblas_gflops"] = p.flops() * calls / t.second * 1e-9;
  state.counters["ratio"] = t.second / t.first;
}
#endif

// {m, n, k, batch}: the targets of PERF.md first, then odd shapes with tails in every dimension,
// then narrow shapes (m or n = 1, small m, small n). WEFT_BENCH_SHAPES="m,n,k,br;m,n,k,br..."
// measures the given shapes instead.
void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "n", "k", "br"});
  if (weft::bench::env_shapes(b)) return;
  for (const auto& s : std::vector<std::vector<std::int64_t>>{{32, 32, 32, 8},
                                                             {64, 64, 64, 1},
                                                             {32, 32, 32, 1},
                                                             {32, 32, 32, 16},
                                                             {16, 16, 16, 1},
                                                             {24, 24, 64, 4},
                                                             {80, 80, 80, 1},
                                                             {23, 17, 31, 4},
                                                             {7, 50, 64, 1},
                                                             {61, 13, 128, 1},
                                                             {64, 1, 128, 1},
                                                             {32, 1, 64, 4},
                                                             {23, 1, 64, 1},
                                                             {1, 64, 128, 1},
                                                             {1, 32, 64, 4},
                                                             {1, 23, 61, 1},
                                                             {1, 1, 128, 1},
                                                             {4, 64, 64, 1},
                                                             {64, 2, 64, 1}})
    b->Args(s);
}

BENCHMARK(BM_weft)->Apply(shapes);
#ifdef WEFT_HAVE_LIBXSMM
BENCHMARK(BM_libxsmm)->Apply(shapes);
BENCHMARK(BM_ratio)->Apply(shapes)->Iterations(1);
#endif
#ifdef WEFT_HAVE_OPENBLAS
BENCHMARK(BM_openblas)->Apply(shapes);
BENCHMARK(BM_ratio_openblas)->Apply(shapes)->Iterations(1);
#endif

}  // namespace

BENCHMARK_MAIN();
