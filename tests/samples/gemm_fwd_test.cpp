#include "gemm_fwd.hpp"

#include <omp.h>

#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "blocked_layout.hpp"
#include "gemm_reference.hpp"

namespace {

using weft::samples::Blocking;
using weft::samples::GemmFwd;
using weft::samples::GemmFwdConfig;

// Runs the sample's forward pass on random inputs and returns the error against the reference.
weft::samples::ErrorNorms run_against_reference(const GemmFwdConfig& config, int threads) {
  omp_set_num_threads(threads);
  const GemmFwd gemm(config);
  const Blocking mB = gemm.m_blocking(), nB = gemm.n_blocking(), kB = gemm.k_blocking();
  const std::int64_t M = config.M, N = config.N, K = config.K;
  std::vector<float> a(static_cast<std::size_t>(M * K)), b(static_cast<std::size_t>(K * N));
  std::vector<float> bias(static_cast<std::size_t>(mB.blocks() * mB.block), 0.0f);
  weft::samples::fill_random(a.data(), M * K, 11);
  weft::samples::fill_random(b.data(), K * N, 12);
  weft::samples::fill_random(bias.data(), M, 13);
  std::vector<float> weight = weft::samples::to_blocked(a.data(), mB, kB, true);
  std::vector<float> input = weft::samples::to_blocked(b.data(), kB, nB, false);
  const auto out_size = static_cast<std::size_t>(nB.blocks() * nB.block * mB.blocks() * mB.block);
  // Output buffers start as garbage: beta = 0 on the first chunk must not read them.
  std::vector<float> ping(out_size, 777.0f), pong(out_size, -777.0f);
  // The MLP reads padded rows of the previous output as K padding: those must stay zero.
  if (config.n_layers > 1) ping.assign(out_size, 0.0f), pong.assign(out_size, 0.0f);
  std::vector<float*> acts{input.data()};
  std::vector<const float*> weights, biases;
  for (int l = 0; l < config.n_layers; ++l) {
    acts.push_back(l % 2 == 0 ? ping.data() : pong.data());
    weights.push_back(weight.data());
    biases.push_back(bias.data());
  }
  gemm.run(acts, weights, biases);
  gemm.run(acts, weights, biases);  // twice: results must not depend on what C held before

  std::vector<float> result(static_cast<std::size_t>(M * N)), ref_in = b, ref_out(result.size());
  weft::samples::from_blocked(acts.back(), result.data(), mB, nB, false);
  for (int l = 0; l < config.n_layers; ++l) {
    weft::samples::gemm_reference(M, N, K, a.data(), ref_in.data(),
                                  config.fuse_bias ? bias.data() : nullptr, config.fuse_relu,
                                  ref_out.data());
    ref_in.swap(ref_out);
  }
  return weft::samples::compare(result.data(), ref_in.data(), M * N);
}

struct Case {
  std::string loop_string;
  std::int64_t M, N, K, bm, bn, bk, kbf;
  int threads;
  bool bias, relu;
};

class GemmFwdCases : public ::testing::TestWithParam<Case> {};

TEST_P(GemmFwdCases, MatchesReference) {
  const Case& c = GetParam();
  GemmFwdConfig config;
  config.loop_string = c.loop_string;
  config.M = c.M, config.N = c.N, config.K = c.K;
  config.bm = c.bm, config.bn = c.bn, config.bk = c.bk, config.kbf = c.kbf;
  config.fuse_bias = c.bias, config.fuse_relu = c.relu;
  const auto norms = run_against_reference(config, c.threads);
  EXPECT_TRUE(norms.passed(weft::samples::sum_tolerance(c.K))) << norms.to_string();
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GemmFwdCases,
    ::testing::Values(
        Case{"aBC", 64, 64, 64, 32, 32, 32, 1, 1, false, false},
        Case{"aBC", 64, 96, 128, 32, 32, 32, 2, 2, false, false},
        Case{"aBC", 70, 45, 50, 32, 16, 16, 1, 2, true, true},      // remainders in M, N, K
        Case{"aBC", 33, 17, 9, 8, 8, 4, 3, 3, true, false},         // kbf not dividing Kb
        Case{"bcaBCb", 100, 60, 72, 16, 16, 8, 2, 2, false, true},  // blocked, remainder blocks
        Case{"acBCb", 40, 40, 40, 8, 8, 8, 5, 4, true, true},
        Case{"aB{R:2}C{C:2}", 65, 66, 67, 16, 16, 16, 1, 4, true, true},  // thread grid
        Case{"aC{R:2}B{C:1}", 48, 48, 48, 16, 16, 16, 3, 2, false, false},
        Case{"BCa", 31, 29, 37, 8, 8, 8, 2, 2, true, true},          // K innermost, sequential
        Case{"aBC", 1, 1, 1, 32, 32, 32, 1, 1, false, true}));       // degenerate shape

TEST(GemmFwd, MlpOfThreeLayersWithBiasAndRelu) {
  GemmFwdConfig config;
  config.loop_string = "aBC";
  config.M = config.K = 72;
  config.N = 40;
  config.bm = config.bk = 16;
  config.bn = 16;
  config.kbf = 2;
  config.n_layers = 3;
  config.fuse_bias = config.fuse_relu = true;
  const auto norms = run_against_reference(config, 2);
  EXPECT_TRUE(norms.passed(3 * weft::samples::sum_tolerance(config.K))) << norms.to_string();
}

TEST(GemmFwd, BadConfigurationsAreErrors) {
  GemmFwdConfig config;
  config.M = config.N = config.K = 64;
  config.loop_string = "aBD";  // 'd' is beyond the three loops
  EXPECT_THROW(GemmFwd{config}, weft::Error);
  config.loop_string = "aBC";
  config.bm = 0;
  EXPECT_THROW(GemmFwd{config}, weft::Error);
  config.bm = 32;
  config.n_layers = 2;
  config.K = 32;  // an MLP needs M == K
  EXPECT_THROW(GemmFwd{config}, weft::Error);
}

}  // namespace
