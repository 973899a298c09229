// The GEMM operators in f64 through their public API (weft/ops/gemm.hpp): descriptor ->
// configuration -> prepare -> pack -> execute -> unpack, on doubles with all 53 bits random,
// against the reference summed in double, within sum_tolerance_f64 (an f32 computation anywhere on
// the way misses it by orders of magnitude). Default configurations and explicit ones that take
// every code path: several chunks of the reduction, W^T / X^T transposed up front and per thread,
// partial filters, tiles that do not divide the shapes, odd tiles (no VNNI pairs in f64).
#include <weft/ops/gemm.hpp>

#include <omp.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include <weft/ops/gemm_defaults.hpp>
#include <weft/ops/gemm_reference.hpp>
#include <weft/ops/verification.hpp>

namespace weft::ops {
namespace {

constexpr int kThreads = 2;

struct Shape {
  std::int64_t M, N, K;
};

std::vector<double> random_plain(const PassMatrix& m, std::uint64_t seed) {
  std::vector<double> plain(static_cast<std::size_t>(m.rows.size * m.cols.size));
  fill_random(plain.data(), static_cast<std::int64_t>(plain.size()), seed);
  return plain;
}

std::vector<double> packed(const std::vector<double>& plain, const PassMatrix& m) {
  std::vector<double> blocked(static_cast<std::size_t>(blocked_size(m)), 555.0);  // pack writes the padding too
  pack(plain.data(), MatrixOrder::column_major, m, blocked.data());
  return blocked;
}

std::vector<double> unpacked(const std::vector<double>& blocked, const PassMatrix& m) {
  std::vector<double> plain(static_cast<std::size_t>(m.rows.size * m.cols.size));
  unpack(blocked.data(), m, plain.data(), MatrixOrder::column_major);
  return plain;
}

// op(left) x op(right) (+ bias, ReLU) in double against `result`, within the f64 tolerance.
void expect_matches_reference(const std::vector<double>& result, const GemmPassLayout& l,
                              const std::vector<double>& left, const std::vector<double>& right, const double* bias,
                              bool relu) {
  const PassMatrix& o = l.out;
  const std::int64_t count = o.rows.size * o.cols.size;
  std::vector<double> ref(static_cast<std::size_t>(count));
  gemm_reference(o.rows.size, o.cols.size, l.reduction(), {left.data(), l.left.transposed},
                 {right.data(), l.right.transposed}, bias, relu, ref.data());
  const ErrorNorms e = compare(result.data(), ref.data(), count);
  EXPECT_TRUE(e.passed(sum_tolerance_f64(l.reduction()))) << e.to_string();
  EXPECT_GT(e.max_abs_ref, 0.0);  // a vacuous comparison would pass too
}

void forward(const GemmFwdConfig& config) {
  const GemmFwd gemm(config);
  const GemmPassLayout l = gemm.layout();
  ASSERT_EQ(l.dtype, jit::DataType::f64);
  const std::vector<double> a = random_plain(l.left, 1), b = random_plain(l.right, 2);
  std::vector<double> bias(static_cast<std::size_t>(gemm.m_blocking().padded()), 0.0);
  fill_random(bias.data(), config.M, 3);
  const std::vector<double> a_b = packed(a, l.left);
  std::vector<double> b_b = packed(b, l.right);
  std::vector<double> c_b(static_cast<std::size_t>(blocked_size(l.out)), 777.0);
  double* acts[] = {b_b.data(), c_b.data()};
  const double* weights[] = {a_b.data()};
  const double* biases[] = {bias.data()};
  gemm.run(acts, weights, biases);
  gemm.run(acts, weights, biases);  // prepared once, run many times
  expect_matches_reference(unpacked(c_b, l.out), l, a, b, config.fuse_bias ? bias.data() : nullptr,
                           config.fuse_relu);
}

template <class Pass, class Config>
void backward(const Config& config) {
  const Pass pass(config);
  const GemmPassLayout l = pass.layout();
  ASSERT_EQ(l.dtype, jit::DataType::f64);
  const std::vector<double> left = random_plain(l.left, 4), right = random_plain(l.right, 5);
  const std::vector<double> left_b = packed(left, l.left), right_b = packed(right, l.right);
  std::vector<double> out_b(static_cast<std::size_t>(blocked_size(l.out)), 777.0);
  pass.run(left_b.data(), right_b.data(), out_b.data());
  pass.run(left_b.data(), right_b.data(), out_b.data());  // the second run starts from the first's output
  expect_matches_reference(unpacked(out_b, l.out), l, left, right, nullptr, false);
}

GemmDesc f64_desc(const Shape& s) { return {.M = s.M, .N = s.N, .K = s.K, .dtype = jit::DataType::f64}; }

// "M70_N50_K90"
std::string shape_name(const ::testing::TestParamInfo<Shape>& info) {
  const Shape& s = info.param;
  return "M" + std::to_string(s.M) + "_N" + std::to_string(s.N) + "_K" + std::to_string(s.K);
}

class GemmOpsF64 : public ::testing::TestWithParam<Shape> {
 protected:
  void SetUp() override { omp_set_num_threads(kThreads); }
  GemmDesc desc() const { return f64_desc(GetParam()); }
};

TEST_P(GemmOpsF64, DefaultForwardWithFusedBiasAndReluMatchesTheReference) {
  GemmDesc d = desc();
  d.bias = d.relu = true;
  forward(default_gemm_config<GemmFwdConfig>(d, kThreads));
}

TEST_P(GemmOpsF64, DefaultForwardWithoutEpilogueMatchesTheReference) {
  forward(default_gemm_config<GemmFwdConfig>(desc(), kThreads));
}

// Three chunks of K (beta = 0 first, the epilogue last), odd tiles, parallel N.
TEST_P(GemmOpsF64, ChunkedForwardWithOddTilesMatchesTheReference) {
  GemmDesc d = desc();
  d.bias = d.relu = true;
  GemmFwdConfig c = gemm_config<GemmFwdConfig>(d);
  c.loop_string = "bCa";
  c.bm = 13;
  c.bn = 7;
  c.bk = 9;
  c.kbf = 3;
  forward(c);
}

TEST_P(GemmOpsF64, DefaultBackwardByDataMatchesTheReference) {
  backward<GemmBwd>(default_gemm_config<GemmBwdConfig>(desc(), kThreads));
}

// W^T tiles transposed per thread on first use, two chunks of M, odd tiles.
TEST_P(GemmOpsF64, BackwardByDataWithPrivateTransposesMatchesTheReference) {
  GemmBwdConfig c = gemm_config<GemmBwdConfig>(desc());
  c.loop_string = "aCb";
  c.bm = 11;
  c.bn = 16;
  c.bk = 5;
  c.mbf = 2;
  c.private_trans = true;
  backward<GemmBwd>(c);
}

TEST_P(GemmOpsF64, DefaultBackwardByWeightsMatchesTheReference) {
  backward<GemmUpd>(default_gemm_config<GemmUpdConfig>(desc(), kThreads));
}

// The reduction loop c in parallel: f64 partial filters, summed by the f64 reduction kernels.
TEST_P(GemmOpsF64, BackwardByWeightsWithPartialFiltersMatchesTheReference) {
  GemmUpdConfig c = gemm_config<GemmUpdConfig>(desc());
  c.loop_string = "abC";
  c.bm = 16;
  c.bn = 8;
  c.bk = 24;
  c.nbf = 2;
  c.n_partial_filters = kThreads;
  const GemmUpd upd(c);
  EXPECT_TRUE(upd.uses_partial_filters());
  backward<GemmUpd>(c);
}

// X^T tiles per thread, odd tiles, the reduction in one sequential loop.
TEST_P(GemmOpsF64, BackwardByWeightsWithPrivateTransposesMatchesTheReference) {
  GemmUpdConfig c = gemm_config<GemmUpdConfig>(desc());
  c.loop_string = "aBc";
  c.bm = 9;
  c.bn = 5;
  c.bk = 7;
  c.nbf = 3;
  c.private_trans = true;
  backward<GemmUpd>(c);
}

// Exact multiples of the default tiles, partial tiles in every dimension, a single tile.
INSTANTIATE_TEST_SUITE_P(Shapes, GemmOpsF64,
                         ::testing::Values(Shape{64, 96, 128}, Shape{70, 50, 90}, Shape{8, 8, 8}, Shape{33, 17, 65}),
                         shape_name);

// An MLP of three layers with bias and ReLU: each layer's double output is the next one's input,
// checked against the chain of double references.
TEST(GemmOpsF64Mlp, ThreeLayersWithBiasAndReluMatchTheChainedReference) {
  omp_set_num_threads(kThreads);
  constexpr std::int64_t M = 72, N = 40, layers = 3;
  const GemmDesc desc{.M = M, .N = N, .K = M, .dtype = jit::DataType::f64, .layers = layers, .bias = true,
                      .relu = true};
  for (const GemmFwdConfig& config : {default_gemm_config<GemmFwdConfig>(desc, kThreads), [&] {
         GemmFwdConfig c = gemm_config<GemmFwdConfig>(desc);
         c.loop_string = "aCb";
         c.bm = c.bk = 24;
         c.bn = 8;
         c.kbf = 2;
         return c;
       }()}) {
    SCOPED_TRACE(config.loop_string + " bm " + std::to_string(config.bm));
    const GemmFwd mlp(config);
    const GemmPassLayout l = mlp.layout();
    const std::vector<double> x = random_plain(l.right, 7);
    std::vector<std::vector<double>> w, bias, blocked_w, blocked_act{packed(x, l.right)};
    for (int layer = 0; layer < layers; ++layer) {
      w.push_back(random_plain(l.left, 10 + static_cast<std::uint64_t>(layer)));
      blocked_w.push_back(packed(w.back(), l.left));
      bias.emplace_back(static_cast<std::size_t>(mlp.m_blocking().padded()), 0.0);
      fill_random(bias.back().data(), M, 20 + static_cast<std::uint64_t>(layer));
      blocked_act.emplace_back(static_cast<std::size_t>(blocked_size(l.out)), 0.0);
    }
    std::vector<double*> acts;
    std::vector<const double*> weights, biases;
    for (auto& a : blocked_act) acts.push_back(a.data());
    for (std::size_t layer = 0; layer < layers; ++layer) {
      weights.push_back(blocked_w[layer].data());
      biases.push_back(bias[layer].data());
    }
    mlp.run(acts, weights, biases);

    std::vector<double> in = x, ref(static_cast<std::size_t>(M * N));
    for (std::size_t layer = 0; layer < layers; ++layer) {
      gemm_reference(M, N, M, w[layer].data(), in.data(), bias[layer].data(), true, ref.data());
      in = ref;
    }
    const std::vector<double> result = unpacked(blocked_act.back(), l.out);
    const ErrorNorms e = compare(result.data(), ref.data(), M * N);
    EXPECT_TRUE(e.passed(layers * sum_tolerance_f64(M))) << e.to_string();
  }
}

// f64 has no VNNI: the weights (and dW) are plain column-major tiles, and the tiles bf16 pairs
// need no parity.
TEST(GemmOpsF64Layout, WeightsArePlainTilesAndOddTilesAreTaken) {
  const GemmDesc desc = f64_desc({32, 32, 32});
  GemmFwdConfig fwd = gemm_config<GemmFwdConfig>(desc);
  GemmBwdConfig bwd = gemm_config<GemmBwdConfig>(desc);
  GemmUpdConfig upd = gemm_config<GemmUpdConfig>(desc);
  fwd.bk = bwd.bk = bwd.bm = upd.bn = upd.bk = 31;
  EXPECT_NO_THROW(GemmFwd::check(fwd));
  EXPECT_NO_THROW(GemmBwd::check(bwd));
  EXPECT_NO_THROW(GemmUpd::check(upd));
  EXPECT_EQ(GemmFwd(fwd).layout().left.order, TileOrder::column_major);
  EXPECT_EQ(GemmBwd(bwd).layout().left.order, TileOrder::column_major);
  EXPECT_EQ(GemmUpd(upd).layout().out.order, TileOrder::column_major);
  EXPECT_EQ(GemmFwd(fwd).measure_tag(2).substr(GemmFwd(fwd).measure_tag(2).size() - 4), "_f64");
}

// The untuned forward tiles in f64: FP32's with half the rows (four vectors of doubles), the K
// chunking of FP32; an MLP keeps bm == bk.
TEST(GemmOpsF64Defaults, TilesHoldFourVectorsOfDoubles) {
  GemmFwdConfig problem = gemm_config<GemmFwdConfig>(f64_desc({1024, 1024, 1024}));
  const GemmFwdConfig avx512 = recommended_gemm_config(problem, 2, {.vector_bytes = 64});
  const GemmFwdConfig avx2 = recommended_gemm_config(problem, 2, {.vector_bytes = 32});
  EXPECT_EQ(avx512.bm, 32);
  EXPECT_EQ(avx2.bm, 16);
  problem.dtype = jit::DataType::f32;
  EXPECT_EQ(avx512.kbf, recommended_gemm_config(problem, 2, {.vector_bytes = 64}).kbf);
  EXPECT_EQ(avx2.kbf, recommended_gemm_config(problem, 2, {.vector_bytes = 32}).kbf);
  EXPECT_EQ(avx512.dtype, jit::DataType::f64);
  GemmFwdConfig mlp = gemm_config<GemmFwdConfig>({.M = 256, .N = 64, .K = 256, .dtype = jit::DataType::f64, .layers = 2});
  mlp = recommended_gemm_config(mlp, 2, {.vector_bytes = 64});
  EXPECT_EQ(mlp.bm, mlp.bk);
  EXPECT_NO_THROW(GemmFwd::check(mlp));
  // The tuned path falls back to these (no fp64 record in a test's database).
  const GemmDesc d = f64_desc({96, 64, 32});
  EXPECT_NO_THROW(GemmFwd::check(tuned_gemm_config<GemmFwdConfig>(d, 2)));
  EXPECT_NO_THROW(GemmBwd::check(tuned_gemm_config<GemmBwdConfig>(d, 2)));
  EXPECT_NO_THROW(GemmUpd::check(tuned_gemm_config<GemmUpdConfig>(d, 2)));
}

// pack and unpack move doubles bit for bit, and zero the padding.
TEST(GemmOpsF64Packing, RoundTripsExactlyAndZeroesThePadding) {
  const GemmFwd gemm(gemm_config<GemmFwdConfig>(f64_desc({37, 11, 19})));
  for (const PassMatrix& m : {gemm.layout().left, gemm.layout().right, gemm.layout().out}) {
    for (MatrixOrder order : {MatrixOrder::row_major, MatrixOrder::column_major}) {
      const std::vector<double> plain = random_plain(m, 9);
      std::vector<double> blocked(static_cast<std::size_t>(blocked_size(m)), 555.0);
      pack(plain.data(), order, m, blocked.data());
      double sum = 0;
      for (double v : blocked) sum += v == 555.0 ? 1e9 : v;
      double plain_sum = 0;
      for (double v : plain) plain_sum += v;
      EXPECT_NEAR(sum, plain_sum, 1e-12);  // every padding element written, with 0
      std::vector<double> back(plain.size());
      unpack(blocked.data(), m, back.data(), order);
      EXPECT_EQ(back, plain);
    }
  }
}

}  // namespace
}  // namespace weft::ops
