// BRGEMM with B given as its transpose (BrgemmDesc::b_transposed) against the same product with a
// plain B, in the convolution weight gradient's shape: dW(m x n) += sum over output rows of
// dO_row(m x k) * I_row^T, I_row(w, c) at w * stride * n + c (ldb = stride * n), a strided batch of
// rows. The plain kernel reads the same buffer as k x n matrices (ldb = stride * k), so that both
// touch the same bytes and meet the same cache state. libxsmm 1.17 with its 'T' flag for B runs
// alongside where it dispatches.
//
//   taskset -c 1 build/bench/weft-bench-brgemm-transposed-b --benchmark_repetitions=5
//
// Rounds of back-to-back calls alternate the kernels; the counters are each one's GFLOPS at its
// median round and `ratio` = transposed / plain GFLOPS.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "aligned_buffer.hpp"
#include "weft/tpp/brgemm.hpp"

#ifdef WEFT_HAVE_LIBXSMM
#include <libxsmm.h>
#endif

namespace {

using namespace weft::tpp;

struct Problem {
  int m, n, k, count, stride;
  weft::bench::AlignedVector<float> a, b, c;  // b: B_i, or B_i^T for the transposed kernels

  explicit Problem(const benchmark::State& state)
      : m(static_cast<int>(state.range(0))),
        n(static_cast<int>(state.range(1))),
        k(static_cast<int>(state.range(2))),
        count(static_cast<int>(state.range(3))),
        stride(static_cast<int>(state.range(4))),
        a(static_cast<std::size_t>(stride_a() * count)),
        b(static_cast<std::size_t>(stride_b() * count)),
        c(static_cast<std::size_t>(m) * n) {
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (auto* v : {&a, &b, &c})
      for (float& x : *v) x = u(rng);
  }

  double flops() const { return 2.0 * m * n * k * count; }
  std::int64_t stride_a() const { return static_cast<std::int64_t>(m) * k; }
  std::int64_t ldb() const { return static_cast<std::int64_t>(stride) * k; }
  std::int64_t ldb_t() const { return static_cast<std::int64_t>(stride) * n; }
  std::int64_t stride_b() const { return static_cast<std::int64_t>(stride) * k * n; }  // the same for both

  BrgemmDesc desc(bool transposed) const {
    return {.m = m, .n = n, .k = k, .lda = m, .ldb = transposed ? ldb_t() : ldb(), .ldc = m, .beta = 1,
            .b_transposed = transposed};
  }
};

struct Weft {
  Brgemm kernel;  // owns fn's code (the kernel cache may drop it)
  BrgemmKernelFn fn;
  BrgemmArgs args;
  Weft(Problem& p, bool transposed)
      : kernel(p.desc(transposed)),
        fn(kernel.kernel()),
        args{.a = p.a.data(), .b = p.b.data(), .c = p.c.data(), .count = p.count, .stride_a = p.stride_a(),
             .stride_b = p.stride_b()} {}
  void operator()() const { fn(&args); }
};

#ifdef WEFT_HAVE_LIBXSMM
struct LibxsmmTransposedB {
  libxsmm_smmfunction_reducebatch_strd fn = nullptr;
  const float *a, *b;
  float* c;
  unsigned long long count;
  explicit LibxsmmTransposedB(Problem& p)
      : a(p.a.data()), b(p.b.data()), c(p.c.data()), count(static_cast<unsigned long long>(p.count)) {
    libxsmm_init();
    const libxsmm_blasint lda = p.m, ldb = static_cast<libxsmm_blasint>(p.ldb_t()), ldc = p.m;
    const float alpha = 1.0f, beta = 1.0f;
    const int flags = LIBXSMM_GEMM_FLAG_TRANS_B;
    // libxsmm 1.17: the batch strides are in bytes.
    fn = libxsmm_smmdispatch_reducebatch_strd(p.m, p.n, p.k, static_cast<libxsmm_blasint>(p.stride_a() * 4),
                                              static_cast<libxsmm_blasint>(p.stride_b() * 4), &lda, &ldb, &ldc,
                                              &alpha, &beta, &flags, nullptr);
  }
  void operator()() const { fn(a, b, c, &count); }
};

// Whether libxsmm's kernel computes what ours does (its 'T' for B means what b_transposed means).
bool agrees(Problem& p, const Weft& ours, const LibxsmmTransposedB& theirs) {
  const std::vector<float> before(p.c.begin(), p.c.end());
  ours();
  const std::vector<float> want(p.c.begin(), p.c.end());
  std::copy(before.begin(), before.end(), p.c.begin());
  theirs();
  bool same = true;
  for (std::size_t i = 0; i < want.size(); ++i)
    same = same && std::abs(want[i] - p.c[i]) <= 1e-3f * (1.0f + std::abs(want[i]));
  std::copy(before.begin(), before.end(), p.c.begin());
  return same;
}
#endif

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

struct Contender {
  const char* counter;
  std::function<void()> call;
  std::vector<double> seconds;  // per round
};

void BM_transposed_b(benchmark::State& state) {
  Problem p(state);
  const Weft plain(p, false), transposed(p, true);
  std::vector<Contender> contenders = {{"plain_gflops", plain, {}}, {"transposed_gflops", transposed, {}}};
#ifdef WEFT_HAVE_LIBXSMM
  const LibxsmmTransposedB xsmm(p);
  if (xsmm.fn != nullptr && agrees(p, transposed, xsmm)) contenders.push_back({"xsmm_t_gflops", xsmm, {}});
#endif
  // Short rounds (about 0.1 ms), each kernel first in turn: rounds a time slice of another process
  // cuts into are outliers the median ignores, and no kernel always runs on the cache state one
  // particular other kernel leaves behind.
  const int calls = std::max(1, static_cast<int>(1e7 / p.flops()));
  for (auto _ : state) {
    for (std::size_t round = 0; round < 201; ++round)
      for (std::size_t i = 0; i < contenders.size(); ++i) {
        Contender& c = contenders[(round + i) % contenders.size()];
        const auto t0 = std::chrono::steady_clock::now();
        for (int call = 0; call < calls; ++call) c.call();
        c.seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
  }
  const double work = p.flops() * calls * 1e-9;
  for (const Contender& c : contenders) state.counters[c.counter] = work / median(c.seconds);
  state.counters["ratio"] = median(contenders[0].seconds) / median(contenders[1].seconds);
}

// {m = bk, n = bc, k = output columns, batch = output rows, stride}: 3x3 convolutions' weight
// gradients of ResNet-50's 56 x 56 and 28 x 28 stages, one with stride 2, and one hot row.
BENCHMARK(BM_transposed_b)
    ->ArgNames({"m", "n", "k", "br", "stride"})
    ->Args({64, 64, 56, 56, 1})
    ->Args({32, 32, 28, 28, 1})
    ->Args({64, 64, 28, 28, 2})
    ->Args({64, 64, 56, 1, 1})
    ->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
