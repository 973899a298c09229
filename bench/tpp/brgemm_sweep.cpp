// The seed documents' BRGEMM sweep as CSV: M, N in 1..64, K in {1, 16, 32, 64, 128}, batch 1, tight
// leading dimensions, C += A * B, hot data. weft and libxsmm 1.17 are timed back to back for each
// shape (alternating rounds, median of each), so the ratio column compares like with like.
//
//   taskset -c 0 build/bench/weft-bench-brgemm-sweep --out sweep.csv [--step 1] [--rounds 5]
//       [--m 1:64] [--n 1:64] [--k 1,16,32,64,128]
//
// --m / --n take lo:hi (inclusive, walked with --step), --k a comma-separated list: a subset of the
// sweep, e.g. --m 1:8 --n 1:8 for the narrow shapes.
//
// Columns: m,n,k,br_size,trans_a,trans_b,trans_c,ld_a,ld_b,ld_c,br_stride_a,br_stride_b,num_reps,time
// (time: seconds for num_reps calls of weft's kernel), then ours: gflops, xsmm_time, xsmm_gflops,
// ratio (= xsmm_time / time, > 1: weft faster). Prints the average ratio at the end.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "aligned_buffer.hpp"
#include "weft/tpp/brgemm.hpp"

#ifdef WEFT_HAVE_LIBXSMM
#include <libxsmm.h>
#endif
#ifdef WEFT_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace {

using namespace weft::tpp;

template <class F>
double seconds(F&& f, std::int64_t reps) {
  const auto t0 = std::chrono::steady_clock::now();
  for (std::int64_t i = 0; i < reps; ++i) f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// One odd shape against OpenBLAS, so that a wrong kernel cannot produce a fast sweep. (It also
// makes this program use OpenBLAS directly, which libxsmm.a needs to link.)
void sanity_check() {
#ifdef WEFT_HAVE_OPENBLAS
  const int m = 37, n = 29, k = 64;
  std::vector<float> a(m * k), b(k * n), c(m * n, 0.0f), ref(m * n, 0.0f);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) - 3.0f;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) - 2.0f;
  Brgemm(BrgemmDesc{.m = m, .n = n, .k = k, .lda = m, .ldb = k, .ldc = m, .beta = 1})(a.data(), b.data(), c.data());
  cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), m, b.data(), k, 1.0f, ref.data(), m);
  if (c != ref) {
    std::fprintf(stderr, "weft result differs from OpenBLAS\n");
    std::exit(1);
  }
#endif
}

// "lo:hi" or a single number; invalid text leaves the defaults.
void parse_range(const char* text, int& lo, int& hi) {
  int a = 0, b = 0;
  const int got = std::sscanf(text, "%d:%d", &a, &b);
  if (got >= 1 && a >= 1) {
    lo = a;
    hi = got == 2 && b >= a ? b : a;
  }
}

std::vector<int> parse_list(const char* text) {
  std::vector<int> values;
  for (const char* p = text; *p != '\0';) {
    char* end = nullptr;
    const long v = std::strtol(p, &end, 10);
    if (end == p) break;
    if (v >= 1) values.push_back(static_cast<int>(v));
    p = *end == ',' ? end + 1 : end;
  }
  return values;
}

}  // namespace

int main(int argc, char** argv) {
  const char* out_path = "brgemm_sweep.csv";
  int step = 1, rounds = 5;
  int m_lo = 1, m_hi = 64, n_lo = 1, n_hi = 64;
  std::vector<int> ks{1, 16, 32, 64, 128};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--out") == 0) out_path = argv[i + 1];
    if (std::strcmp(argv[i], "--step") == 0) step = std::max(1, std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::max(1, std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--m") == 0) parse_range(argv[i + 1], m_lo, m_hi);
    if (std::strcmp(argv[i], "--n") == 0) parse_range(argv[i + 1], n_lo, n_hi);
    if (std::strcmp(argv[i], "--k") == 0) ks = parse_list(argv[i + 1]);
  }
  FILE* out = std::fopen(out_path, "w");
  if (out == nullptr) {
    std::perror(out_path);
    return 1;
  }
  std::fprintf(out,
               "m,n,k,br_size,trans_a,trans_b,trans_c,ld_a,ld_b,ld_c,br_stride_a,br_stride_b,num_reps,time,"
               "gflops,xsmm_time,xsmm_gflops,ratio\n");
  sanity_check();
#ifdef WEFT_HAVE_LIBXSMM
  libxsmm_init();
#endif
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  double ratio_sum = 0.0;
  int shapes = 0;
  for (int k : ks)
    for (int m = m_lo; m <= m_hi; m += step)
      for (int n = n_lo; n <= n_hi; n += step) {
        // 64-byte aligned, so that the figures do not depend on where malloc put the operands.
        weft::bench::AlignedVector<float> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n)),
            c(static_cast<std::size_t>(m * n));
        for (float& x : a) x = u(rng);
        for (float& x : b) x = u(rng);
        for (float& x : c) x = u(rng) * 1e-3f;
        const Brgemm ours(BrgemmDesc{.m = m, .n = n, .k = k, .lda = m, .ldb = k, .ldc = m, .beta = 1});
        const BrgemmKernelFn fn = ours.kernel();
        const BrgemmArgs args{.a = a.data(), .b = b.data(), .c = c.data(), .count = 1};
        auto run_ours = [&] { fn != nullptr ? fn(&args) : ours(args); };
        const double flops = 2.0 * m * n * k;
        // About 0.2 ms per timed round.
        const std::int64_t reps = std::max<std::int64_t>(16, static_cast<std::int64_t>(2e7 / (flops + 2000.0)));
        std::vector<double> t_ours, t_theirs;
#ifdef WEFT_HAVE_LIBXSMM
        const libxsmm_blasint lda = m, ldb = k, ldc = m;
        const float alpha = 1.0f, beta = 1.0f;
        const int flags = LIBXSMM_GEMM_FLAG_NONE;
        const libxsmm_smmfunction xk = libxsmm_smmdispatch(m, n, k, &lda, &ldb, &ldc, &alpha, &beta, &flags, nullptr);
        auto run_theirs = [&] { xk(a.data(), b.data(), c.data()); };
#endif
        run_ours();
        for (int r = 0; r < rounds; ++r) {
          t_ours.push_back(seconds(run_ours, reps));
#ifdef WEFT_HAVE_LIBXSMM
          if (xk != nullptr) t_theirs.push_back(seconds(run_theirs, reps));
#endif
        }
        const double t = median(t_ours);
        const double tx = t_theirs.empty() ? 0.0 : median(t_theirs);
        const double ratio = tx > 0.0 ? tx / t : 0.0;
        if (ratio > 0.0) {
          ratio_sum += ratio;
          ++shapes;
        }
        std::fprintf(out, "%d,%d,%d,1,0,0,0,%d,%d,%d,0,0,%lld,%.9f,%.3f,%.9f,%.3f,%.4f\n", m, n, k, m, k, m,
                     static_cast<long long>(reps), t, flops * static_cast<double>(reps) / t * 1e-9, tx,
                     tx > 0.0 ? flops * static_cast<double>(reps) / tx * 1e-9 : 0.0, ratio);
      }
  std::fclose(out);
  if (shapes > 0) std::printf("%d shapes, average weft/libxsmm speed ratio %.3f\n", shapes, ratio_sum / shapes);
  std::printf("wrote %s\n", out_path);
  return 0;
}
