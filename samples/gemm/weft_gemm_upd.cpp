// weft-gemm-upd: backward by weights, dW = dY x X^T, on ThreadedLoop + BRGEMM (+ partial filters
// and a reduction TPP), verified against a double-precision reference.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <weft/jit/error.hpp>

#include "gemm_reference.hpp"
#include "gemm_upd.hpp"
#include "sample_args.hpp"
#include "sample_driver.hpp"

namespace {

using namespace weft::samples;

constexpr const char* kUsage =
    "usage: weft-gemm-upd LOOP_STRING M N K bm bn bk [nbf] [private_trans] [n_partial_filters] [n_iters]\n"
    "                     [--threads T] [--check 0|1] [--warmup W]\n"
    "                     [--k-blocks L] [--m-blocks L] [--n-blocks L]\n"
    "  computes dW (M x K) = dY (M x N) x X^T (N x K) over a = K blocks, b = M blocks, c = N blocks\n"
    "  (the reduction, split into nbf batch-reduce chunks)\n"
    "  private_trans 1: each thread transposes X on first use (default 0: up front)\n"
    "  n_partial_filters P > 0 with a parallel c: thread p along c accumulates into copy p of dW,\n"
    "  summed at the end (P must be >= the parallel degree of c)\n"
    "  FP32 only: USE_BF16 other than 0 in the environment is refused (no bf16 yet)\n";

constexpr const char* kForm =
    "LOOP_STRING M N K bm bn bk [nbf] [private_trans] [n_partial_filters] [n_iters]";

// Allocates, runs, times and checks; every allocation happens in here.
int run_allocated(const GemmUpd& upd, bool check, std::int64_t warmup, std::int64_t n_iters, int threads) {
  const GemmUpdConfig& config = upd.config();
  const Blocking mB = upd.m_blocking(), nB = upd.n_blocking(), kB = upd.k_blocking();
  const std::int64_t M = config.M, N = config.N, K = config.K;
  std::vector<float> dy(static_cast<std::size_t>(M * N)), x(static_cast<std::size_t>(K * N));
  fill_random(dy.data(), M * N, 1);
  fill_random(x.data(), K * N, 2);
  const std::vector<float> grad_out = to_blocked(dy.data(), mB, nB, false);
  const std::vector<float> input = to_blocked(x.data(), kB, nB, false);
  std::vector<float> grad_weight(static_cast<std::size_t>(mB.blocks() * mB.block * kB.blocks() * kB.block));

  std::printf("weft-gemm-upd: %s, M x N x K = %lld x %lld x %lld, blocks %lld x %lld x %lld, nbf %lld, "
              "%s transposes, partial filters %lld%s, threads %d\n",
              config.loop_string.c_str(), (long long)M, (long long)N, (long long)K, (long long)config.bm,
              (long long)config.bn, (long long)config.bk, (long long)config.nbf,
              config.private_trans ? "private" : "up-front", (long long)config.n_partial_filters,
              upd.uses_partial_filters() ? "" : " (unused: c is not parallel)", threads);
  SampleResult result;
  result.seconds = seconds_per_call([&] { upd.run(grad_out.data(), input.data(), grad_weight.data()); },
                                    warmup, n_iters);
  result.iterations = n_iters;
  result.flops = upd.flops();
  result.measure_tag = upd.measure_tag(threads);
  if (check) {
    std::vector<float> xt(x.size()), ref(static_cast<std::size_t>(M * K)), out(ref.size());
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t k = 0; k < K; ++k) xt[k * N + n] = x[n * K + k];  // X^T, N x K
    gemm_reference(M, K, N, dy.data(), xt.data(), nullptr, false, ref.data());
    from_blocked(grad_weight.data(), out.data(), mB, kB, true);
    result.norms = compare(out.data(), ref.data(), M * K);
    result.tolerance = gemm_tolerance(N);
  }
  return report(result);
}

// What run_allocated() and the sample's run() allocate, for the memory check before any of it is.
std::uint64_t memory_needed(const GemmUpd& upd, bool check, int threads) {
  const GemmUpdConfig& c = upd.config();
  const Blocking mB = upd.m_blocking(), nB = upd.n_blocking(), kB = upd.k_blocking();
  std::uint64_t bytes = upd.run_memory_bytes(threads);
  auto add = [&](std::initializer_list<std::int64_t> dims) {
    bytes = weft::add_bytes(bytes, weft::bytes_needed(dims, sizeof(float)));
  };
  add({c.M, c.N});                                          // dY
  add({c.K, c.N});                                          // X
  add({nB.blocks(), nB.block, mB.blocks(), mB.block});      // blocked dY
  add({nB.blocks(), nB.block, kB.blocks(), kB.block});      // blocked X
  add({mB.blocks(), mB.block, kB.blocks(), kB.block});      // blocked dW
  if (check) {
    add({c.K, c.N});  // X^T
    add({c.M, c.K});  // the reference
    add({c.M, c.K});  // the result, unblocked
  }
  return bytes;
}

int run(int argc, char** argv) {
  reject_bf16_request();
  const SampleArgs args = SampleArgs::parse(argc, argv, kGemmOptions);
  args.require_at_most(11, kForm);
  GemmUpdConfig config;
  parse_gemm_arguments(args, config);
  config.nbf = args.integer(7, "nbf", 1);
  config.private_trans = args.integer(8, "private_trans", 0, 0, 1) != 0;
  config.n_partial_filters = args.integer(9, "n_partial_filters", 0, 0, 4096);
  const auto n_iters = args.integer(10, "n_iters", 10, 1, 1000000);
  const bool check = args.option_integer("check", 1, 0, 1) != 0;
  const auto warmup = args.option_integer("warmup", 1, 0, 1000);
  const int threads = apply_thread_option(args.option_integer("threads", 0, 0, 4096));

  const GemmUpd upd(config);  // validates everything before memory is allocated
  const std::string what = "weft-gemm-upd with M x N x K = " + std::to_string(config.M) + " x " +
                           std::to_string(config.N) + " x " + std::to_string(config.K) +
                           " (dY, X, dW, their blocked copies, X^T" +
                           (config.private_trans ? " per thread" : "") +
                           (upd.uses_partial_filters() ? ", partial filters" : "") +
                           (check ? " and the check's reference)" : ")");
  const std::uint64_t bytes = memory_needed(upd, check, threads);
  weft::require_memory(what, bytes);
  return weft::allocating(what, bytes, [&] { return run_allocated(upd, check, warmup, n_iters, threads); });
}

}  // namespace

int main(int argc, char** argv) { return sample_main("weft-gemm-upd", kUsage, run, argc, argv); }
