// BRGEMM in bf16 and f64 against the peers that matter for each, hot data, strided batches, beta 1:
//
//   bf16_vs_f32/...:     weft bf16 (A in VNNI-2, B bf16, C f32) over weft f32 on the same shape,
//                        in FLOPS: `ratio` = bf16 GFLOPS / f32 GFLOPS.
//   bf16_vs_libxsmm/...: weft bf16 over libxsmm 1.17's bf16 batch-reduce GEMM (VNNI A, C f32).
//   f64_vs_libxsmm/...:  weft f64 over libxsmm's f64 batch-reduce GEMM.
//
// Each pair is interleaved (bench/support/interleaved.hpp), so `ratio` is the figure to quote.
// WEFT_ISA picks weft's path: avx512_bf16 (vdpbf16ps), avx512 or avx2 (bf16 widened to fp32).
//
//   taskset -c 1 build/bench/weft-bench-brgemm-types
//   WEFT_ISA=avx2 taskset -c 1 build/bench/weft-bench-brgemm-types --benchmark_filter=bf16_vs_f32
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "aligned_buffer.hpp"
#include "env_shapes.hpp"
#include "interleaved.hpp"
#include "weft/jit/bfloat16.hpp"
#include "weft/tpp/brgemm.hpp"

#ifdef WEFT_HAVE_LIBXSMM
#include <libxsmm.h>
#endif

namespace {

using weft::jit::DataType;
using namespace weft::tpp;

struct Shape {
  int m, n, k, count;
  explicit Shape(const benchmark::State& s)
      : m(static_cast<int>(s.range(0))), n(static_cast<int>(s.range(1))), k(static_cast<int>(s.range(2))),
        count(static_cast<int>(s.range(3))) {}
  double flops() const { return 2.0 * m * n * k * count; }
  std::size_t a_size() const { return static_cast<std::size_t>(m) * k; }
  std::size_t b_size() const { return static_cast<std::size_t>(k) * n; }
  int calls() const { return std::max(16, static_cast<int>(2e6 / flops())); }
};

// Operands of one type for a shape; values in [-1, 1] (bf16: rounded), A in VNNI-2 for bf16 (the
// values' order does not matter to the speed).
template <class T>
struct Operands {
  weft::bench::AlignedVector<T> a, b;
  weft::bench::AlignedVector<float> c_f32;
  weft::bench::AlignedVector<double> c_f64;
  explicit Operands(const Shape& s)
      : a(s.a_size() * static_cast<std::size_t>(s.count)), b(s.b_size() * static_cast<std::size_t>(s.count)),
        c_f32(static_cast<std::size_t>(s.m) * static_cast<std::size_t>(s.n)),
        c_f64(static_cast<std::size_t>(s.m) * static_cast<std::size_t>(s.n)) {
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    auto fill = [&](auto& v) {
      for (auto& x : v) {
        if constexpr (std::is_same_v<T, weft::jit::bfloat16>) {
          x = weft::jit::to_bfloat16(u(rng));
        } else {
          x = static_cast<T>(u(rng));
        }
      }
    };
    fill(a);
    fill(b);
  }
};

BrgemmDesc desc(const Shape& s, DataTypes types) {
  return {.m = s.m, .n = s.n, .k = s.k, .lda = s.m, .ldb = s.k, .ldc = s.m, .beta = 1, .types = types};
}

// A weft kernel on operands, called raw (as the peers are).
struct Weft {
  Brgemm kernel;  // owns fn's code (the kernel cache may drop it)
  BrgemmKernelFn fn;
  BrgemmArgs args;
  template <class T, class C>
  Weft(const Shape& s, DataTypes types, const Operands<T>& ops, C* c)
      : kernel(desc(s, types)),
        fn(kernel.kernel()),
        args{.a = ops.a.data(), .b = ops.b.data(), .c = c, .count = s.count,
             .stride_a = static_cast<std::int64_t>(s.a_size()), .stride_b = static_cast<std::int64_t>(s.b_size())} {}
  void operator()() const { fn(&args); }
};

constexpr DataTypes kBf16{.in = DataType::bf16, .out = DataType::f32, .compute = DataType::f32};
constexpr DataTypes kF64{.in = DataType::f64, .out = DataType::f64, .compute = DataType::f64};

void report(benchmark::State& state, const Shape& s, const weft::bench::Interleaved& t, const char* first,
            const char* second) {
  state.counters[first] = s.flops() * s.calls() / t.first * 1e-9;
  state.counters[second] = s.flops() * s.calls() / t.second * 1e-9;
  state.counters["ratio"] = t.second / t.first;
}

void BM_bf16_vs_f32(benchmark::State& state) {
  const Shape s(state);
  const Operands<weft::jit::bfloat16> low(s);
  Operands<float> high(s);
  const Weft bf16(s, kBf16, low, high.c_f32.data());
  const Weft f32(s, DataTypes{}, high, high.c_f32.data());
  weft::bench::Interleaved t;
  for (auto _ : state) t = weft::bench::interleave(bf16, f32, s.calls());
  report(state, s, t, "bf16_gflops", "f32_gflops");
}

#ifdef WEFT_HAVE_LIBXSMM
void BM_bf16_vs_libxsmm(benchmark::State& state) {
  const Shape s(state);
  Operands<weft::jit::bfloat16> ops(s);
  const Weft ours(s, kBf16, ops, ops.c_f32.data());
  libxsmm_init();
  const libxsmm_blasint lda = s.m, ldb = s.k, ldc = s.m;
  const float alpha = 1.0f, beta = 1.0f;
  const int flags = LIBXSMM_GEMM_FLAG_VNNI_A;
  const auto kernel = libxsmm_bsmmdispatch_reducebatch_strd(
      s.m, s.n, s.k, static_cast<libxsmm_blasint>(s.a_size() * 2), static_cast<libxsmm_blasint>(s.b_size() * 2), &lda,
      &ldb, &ldc, &alpha, &beta, &flags, nullptr);
  if (kernel == nullptr) {
    state.SkipWithError("libxsmm bf16 dispatch failed");
    return;
  }
  const unsigned long long count = static_cast<unsigned long long>(s.count);
  auto theirs = [&] {
    kernel(reinterpret_cast<const libxsmm_bfloat16*>(ops.a.data()), reinterpret_cast<const libxsmm_bfloat16*>(ops.b.data()),
           ops.c_f32.data(), &count);
  };
  weft::bench::Interleaved t;
  for (auto _ : state) t = weft::bench::interleave(ours, theirs, s.calls());
  report(state, s, t, "weft_gflops", "xsmm_gflops");
}

void BM_f64_vs_libxsmm(benchmark::State& state) {
  const Shape s(state);
  Operands<double> ops(s);
  const Weft ours(s, kF64, ops, ops.c_f64.data());
  libxsmm_init();
  const libxsmm_blasint lda = s.m, ldb = s.k, ldc = s.m;
  const double alpha = 1.0, beta = 1.0;
  const int flags = LIBXSMM_GEMM_FLAG_NONE;
  const auto kernel = libxsmm_dmmdispatch_reducebatch_strd(
      s.m, s.n, s.k, static_cast<libxsmm_blasint>(s.a_size() * 8), static_cast<libxsmm_blasint>(s.b_size() * 8), &lda,
      &ldb, &ldc, &alpha, &beta, &flags, nullptr);
  if (kernel == nullptr) {
    state.SkipWithError("libxsmm f64 dispatch failed");
    return;
  }
  const unsigned long long count = static_cast<unsigned long long>(s.count);
  auto theirs = [&] { kernel(ops.a.data(), ops.b.data(), ops.c_f64.data(), &count); };
  weft::bench::Interleaved t;
  for (auto _ : state) t = weft::bench::interleave(ours, theirs, s.calls());
  report(state, s, t, "weft_gflops", "xsmm_gflops");
}
#endif

// {m, n, k, batch}: the targets (32^3 batch 8, 64^3) first, then tails and narrow shapes.
// WEFT_BENCH_SHAPES="m,n,k,br;m,n,k,br..." measures the given shapes instead (the GEMM passes'
// kernels, say: weft.ops' descriptions name their tiles).
void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "n", "k", "br"});
  if (weft::bench::env_shapes(b)) return;
  for (const auto& s : std::vector<std::vector<std::int64_t>>{
           {32, 32, 32, 8}, {64, 64, 64, 1}, {64, 64, 64, 8}, {32, 32, 32, 1}, {80, 80, 80, 1}, {23, 17, 32, 4}, {16, 16, 64, 4}})
    b->Args(s);
}

BENCHMARK(BM_bf16_vs_f32)->Apply(shapes)->Iterations(1);
#ifdef WEFT_HAVE_LIBXSMM
BENCHMARK(BM_bf16_vs_libxsmm)->Apply(shapes)->Iterations(1);
BENCHMARK(BM_f64_vs_libxsmm)->Apply(shapes)->Iterations(1);
#endif

}  // namespace

BENCHMARK_MAIN();
