#include <omp.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include <weft/jit/error.hpp>
#include <weft/ops/gemm_fwd.hpp>

#include "gemm_fwd_data.hpp"

namespace {

using weft::jit::DataType;
using weft::ops::bfloat16;
using weft::ops::GemmFwd;
using weft::ops::GemmFwdConfig;
using weft::samples::GemmFwdData;

// Runs the sample's forward pass (its driver's data, GemmFwdData) twice and returns the check's
// verdict: in FP32 the last output against the chain in double; in bf16 every layer within its
// element-wise bound. A single layer's output starts as garbage: beta = 0 on the first chunk must
// not read it, and the second run must not depend on the first.
template <class T>
weft::samples::Verdict run_and_check(const GemmFwdConfig& config, int threads, bool ring_buffer = false) {
  omp_set_num_threads(threads);
  const GemmFwd gemm(config);
  const float out_fill = config.n_layers > 1 ? 0.0f : 777.0f;
  const GemmFwdData<T> data(gemm, ring_buffer, {.a_seed = 11, .b_seed = 12, .bias_seed = 13, .out_fill = out_fill});
  data.run();
  data.run();
  return data.check();
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
  const auto v = run_and_check<float>(config, c.threads);
  EXPECT_EQ(v.tolerance, weft::ops::sum_tolerance(c.K));
  EXPECT_TRUE(v.norms.passed(v.tolerance)) << v.norms.to_string();
  if (c.bk % 2 != 0) return;  // bf16 weights pair their K
  // The same in bf16, on whichever path this run selects (avx512_bf16, or WEFT_ISA's).
  config.dtype = DataType::bf16;
  const auto bf16 = run_and_check<bfloat16>(config, c.threads);
  EXPECT_TRUE(bf16.norms.bounded);
  EXPECT_TRUE(bf16.norms.passed(0)) << bf16.norms.to_string();
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
  const auto v = run_and_check<float>(config, 2);
  EXPECT_EQ(v.tolerance, 3 * weft::ops::sum_tolerance(config.K));
  EXPECT_TRUE(v.norms.passed(v.tolerance)) << v.norms.to_string();
}

// bf16 MLPs chain bf16 activations: each layer is checked from its own bf16 input, with the ring
// of two buffers too (whose check reruns the layers one buffer each).
TEST(GemmFwd, Bf16MlpChecksEveryLayer) {
  GemmFwdConfig config;
  config.loop_string = "aBC";
  config.M = config.K = 72;
  config.N = 40;
  config.bm = config.bk = config.bn = 16;
  config.kbf = 2;
  config.fuse_bias = config.fuse_relu = true;
  config.dtype = DataType::bf16;
  for (int layers : {2, 3}) {
    config.n_layers = layers;
    for (bool ring : {false, true}) {
      const auto v = run_and_check<bfloat16>(config, 2, ring);
      EXPECT_TRUE(v.norms.passed(0)) << layers << " layers, ring " << ring << ": " << v.norms.to_string() << v.note;
      EXPECT_NE(v.note.find("worst layer: "), std::string::npos) << v.note;
    }
  }
}

// The check can fail: one output element off by far less than the values (but far more than
// bf16 rounding) is reported, in the last layer and in the first.
TEST(GemmFwd, Bf16CheckFindsOneWrongElement) {
  GemmFwdConfig config;
  config.loop_string = "aBC";
  config.M = config.K = 64;
  config.N = 48;
  config.bm = config.bk = config.bn = 16;
  config.fuse_bias = true;
  config.dtype = DataType::bf16;
  config.n_layers = 3;
  omp_set_num_threads(2);
  const GemmFwd gemm(config);
  for (int layer : {1, 3}) {
    const GemmFwdData<bfloat16> data(gemm, false);
    data.run();
    EXPECT_TRUE(data.check().norms.passed(0));
    bfloat16& element = data.activations()[static_cast<std::size_t>(layer)][5 * 16 + 3];
    // 1/16 of the value (16 times bf16's rounding) plus 1/4 (where the value is near 0).
    const float value = weft::jit::to_float(element);
    element = weft::jit::to_bfloat16(value + 0.25f + std::fabs(value) / 16);
    const auto v = data.check();
    EXPECT_FALSE(v.norms.passed(0)) << "layer " << layer << ": " << v.norms.to_string();
    if (layer < 3) continue;  // the next layer, computed from the right value, fails too (worse)
    EXPECT_EQ(v.norms.beyond_bound, 1) << v.norms.to_string();
    EXPECT_NE(v.note.find("worst layer: 3 of 3"), std::string::npos) << v.note;
  }
}

TEST(GemmFwd, Bf16NeedsEvenKTilesAndBf16Buffers) {
  GemmFwdConfig config;
  config.loop_string = "aBC";
  config.M = config.N = config.K = 64;
  config.bk = 33;
  config.dtype = DataType::bf16;
  try {
    GemmFwd{config};
    FAIL() << "an odd bk in bf16 was accepted";
  } catch (const weft::Error& e) {
    EXPECT_NE(std::string(e.what()).find("bk = 33 is odd"), std::string::npos) << e.what();
  }
  config.bk = 32;
  const GemmFwd gemm(config);
  std::vector<float> buffer(64 * 64);
  float* acts[] = {buffer.data(), buffer.data()};
  const float* weights[] = {buffer.data()};
  EXPECT_THROW(gemm.run(acts, weights, {}), weft::Error);  // float buffers into a bf16 pass
  config.dtype = static_cast<DataType>(7);                  // no DataType
  EXPECT_THROW(GemmFwd{config}, weft::Error);
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
