// weft-gemm-bwd: backward by data, dX = W^T x dY, on ThreadedLoop + BRGEMM, verified against a
// double-precision reference.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <weft/jit/error.hpp>

#include "gemm_bwd.hpp"
#include "gemm_reference.hpp"
#include "sample_args.hpp"
#include "sample_driver.hpp"

namespace {

using namespace weft::samples;

constexpr const char* kUsage =
    "usage: weft-gemm-bwd LOOP_STRING M N K bm bn bk [mbf] [private_trans] [n_iters]\n"
    "                     [--threads T] [--check 0|1] [--warmup W]\n"
    "                     [--k-blocks L] [--m-blocks L] [--n-blocks L]\n"
    "  computes dX (K x N) = W^T (K x M) x dY (M x N) over a = K blocks, b = M blocks (the\n"
    "  reduction, split into mbf batch-reduce chunks), c = N blocks\n"
    "  private_trans 1: each thread transposes W on first use (default 0: up front)\n"
    "  FP32 only: USE_BF16 other than 0 in the environment is refused (no bf16 yet)\n";

constexpr const char* kForm = "LOOP_STRING M N K bm bn bk [mbf] [private_trans] [n_iters]";

// Allocates, runs, times and checks; every allocation happens in here.
int run_allocated(const GemmBwd& bwd, bool check, std::int64_t warmup, std::int64_t n_iters, int threads) {
  const GemmBwdConfig& config = bwd.config();
  const Blocking mB = bwd.m_blocking(), nB = bwd.n_blocking(), kB = bwd.k_blocking();
  const std::int64_t M = config.M, N = config.N, K = config.K;
  std::vector<float> w(static_cast<std::size_t>(M * K)), dy(static_cast<std::size_t>(M * N));
  fill_random(w.data(), M * K, 1);
  fill_random(dy.data(), M * N, 2);
  const std::vector<float> weight = to_blocked(w.data(), mB, kB, true);
  const std::vector<float> grad_out = to_blocked(dy.data(), mB, nB, false);
  std::vector<float> grad_in(static_cast<std::size_t>(nB.blocks() * nB.block * kB.blocks() * kB.block));

  std::printf("weft-gemm-bwd: %s, M x N x K = %lld x %lld x %lld, blocks %lld x %lld x %lld, mbf %lld, "
              "%s transposes, threads %d\n",
              config.loop_string.c_str(), (long long)M, (long long)N, (long long)K, (long long)config.bm,
              (long long)config.bn, (long long)config.bk, (long long)config.mbf,
              config.private_trans ? "private" : "up-front", threads);
  SampleResult result;
  result.seconds = seconds_per_call([&] { bwd.run(weight.data(), grad_out.data(), grad_in.data()); },
                                    warmup, n_iters);
  result.iterations = n_iters;
  result.flops = bwd.flops();
  result.measure_tag = bwd.measure_tag(threads);
  if (check) {
    std::vector<float> wt(w.size()), ref(static_cast<std::size_t>(K * N)), out(ref.size());
    for (std::int64_t m = 0; m < M; ++m)
      for (std::int64_t k = 0; k < K; ++k) wt[m * K + k] = w[k * M + m];  // W^T, K x M
    gemm_reference(K, N, M, wt.data(), dy.data(), nullptr, false, ref.data());
    from_blocked(grad_in.data(), out.data(), kB, nB, false);
    result.norms = compare(out.data(), ref.data(), K * N);
    result.tolerance = gemm_tolerance(M);
  }
  return report(result);
}

// What run_allocated() and the sample's run() allocate, for the memory check before any of it is.
std::uint64_t memory_needed(const GemmBwd& bwd, bool check, int threads) {
  const GemmBwdConfig& c = bwd.config();
  const Blocking mB = bwd.m_blocking(), nB = bwd.n_blocking(), kB = bwd.k_blocking();
  std::uint64_t bytes = bwd.run_memory_bytes(threads);
  auto add = [&](std::initializer_list<std::int64_t> dims) {
    bytes = weft::add_bytes(bytes, weft::bytes_needed(dims, sizeof(float)));
  };
  add({c.M, c.K});                                          // W
  add({c.M, c.N});                                          // dY
  add({mB.blocks(), mB.block, kB.blocks(), kB.block});      // blocked W
  add({mB.blocks(), mB.block, nB.blocks(), nB.block});      // blocked dY
  add({nB.blocks(), nB.block, kB.blocks(), kB.block});      // blocked dX
  if (check) {
    add({c.M, c.K});  // W^T
    add({c.K, c.N});  // the reference
    add({c.K, c.N});  // the result, unblocked
  }
  return bytes;
}

int run(int argc, char** argv) {
  reject_bf16_request();
  const SampleArgs args = SampleArgs::parse(argc, argv, kGemmOptions);
  args.require_at_most(10, kForm);
  GemmBwdConfig config;
  parse_gemm_arguments(args, config);
  config.mbf = args.integer(7, "mbf", 1);
  config.private_trans = args.integer(8, "private_trans", 0, 0, 1) != 0;
  const auto n_iters = args.integer(9, "n_iters", 10, 1, 1000000);
  const bool check = args.option_integer("check", 1, 0, 1) != 0;
  const auto warmup = args.option_integer("warmup", 1, 0, 1000);
  const int threads = apply_thread_option(args.option_integer("threads", 0, 0, 4096));

  const GemmBwd bwd(config);  // validates everything before memory is allocated
  const std::string what = "weft-gemm-bwd with M x N x K = " + std::to_string(config.M) + " x " +
                           std::to_string(config.N) + " x " + std::to_string(config.K) +
                           " (W, dY, dX, their blocked copies, W^T" +
                           (config.private_trans ? " per thread" : "") +
                           (check ? " and the check's reference)" : ")");
  const std::uint64_t bytes = memory_needed(bwd, check, threads);
  weft::require_memory(what, bytes);
  return weft::allocating(what, bytes, [&] { return run_allocated(bwd, check, warmup, n_iters, threads); });
}

}  // namespace

int main(int argc, char** argv) { return sample_main("weft-gemm-bwd", kUsage, run, argc, argv); }
