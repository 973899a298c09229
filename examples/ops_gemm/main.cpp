// C = relu(A x B + bias) through weft's GEMM operator (weft/ops/gemm.hpp), on plain row-major
// matrices converted to the operator's blocked layouts and back, checked against a plain loop.
// Prints "ops_gemm: ok (...)" and exits 0, or says what differs and exits 1.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include <weft/ops/gemm.hpp>

int main() {
  using namespace weft::ops;
  const GemmDesc desc{.M = 96, .N = 80, .K = 112, .bias = true, .relu = true};
  const int threads = omp_get_max_threads();

  // Prepare once: the machine's default loops and tiles, kernels and loop nest generated here.
  const GemmFwd gemm(default_gemm_config<GemmFwdConfig>(desc, threads));
  const GemmPassLayout layout = gemm.layout();  // left = A (M x K), right = B (K x N), out = C (M x N)

  std::vector<float> a(desc.M * desc.K), b(desc.K * desc.N), bias(gemm.m_blocking().padded(), 0.0f);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) - 3.0f;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) * 0.5f - 1.0f;
  for (std::int64_t m = 0; m < desc.M; ++m) bias[m] = static_cast<float>(m % 3) - 1.0f;

  // Layout conversions, separate from the run (a weight is converted once for many runs).
  std::vector<float> a_blocked(blocked_size(layout.left)), b_blocked(blocked_size(layout.right)),
      c_blocked(blocked_size(layout.out));
  pack(a.data(), MatrixOrder::row_major, layout.left, a_blocked.data());
  pack(b.data(), MatrixOrder::row_major, layout.right, b_blocked.data());

  float* activations[] = {b_blocked.data(), c_blocked.data()};
  const float* weights[] = {a_blocked.data()};
  const float* biases[] = {bias.data()};
  gemm.run(activations, weights, biases);  // execute, as many times as needed

  std::vector<float> c(desc.M * desc.N);
  unpack(c_blocked.data(), layout.out, c.data(), MatrixOrder::row_major);

  double worst = 0;
  for (std::int64_t m = 0; m < desc.M; ++m)
    for (std::int64_t n = 0; n < desc.N; ++n) {
      double sum = bias[m];
      for (std::int64_t k = 0; k < desc.K; ++k) sum += double(a[m * desc.K + k]) * b[k * desc.N + n];
      worst = std::max(worst, std::abs(std::max(sum, 0.0) - c[m * desc.N + n]));
    }
  if (worst > 1e-3) {
    std::printf("ops_gemm: C differs from the reference by %g\n", worst);
    return 1;
  }
  std::printf("ops_gemm: ok (%lld x %lld x %lld, loop string %s, %d threads)\n", (long long)desc.M,
              (long long)desc.N, (long long)desc.K, gemm.config().loop_string.c_str(), threads);
  return 0;
}
