// The GEMM operators through their public API (weft/ops/gemm.hpp): descriptor -> configuration ->
// prepare -> pack -> execute -> unpack, against the double-precision reference, in f32 (the
// samples' relative L2 tolerance) and bf16 (every element within the samples' bf16 bound).
#include <weft/ops/gemm.hpp>

#include <omp.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include <weft/ops/element_type.hpp>
#include <weft/ops/gemm_reference.hpp>
#include <weft/ops/verification.hpp>
#include <weft/ops/vnni2_pairs.hpp>

namespace weft::ops {
namespace {

struct Shape {
  std::int64_t M, N, K;
};

// Random plain column-major values of `m` in [-1, 1), rounded to T (the values the operator sees).
template <class T>
std::vector<float> random_plain(const PassMatrix& m, std::uint64_t seed) {
  std::vector<float> plain(static_cast<std::size_t>(m.rows.size * m.cols.size));
  fill_random(plain.data(), static_cast<std::int64_t>(plain.size()), seed);
  round_to_element_type<T>(plain);
  return plain;
}

template <class T>
std::vector<T> packed(const std::vector<float>& plain, const PassMatrix& m) {
  const std::vector<T> typed = converted<T>(plain);
  std::vector<T> blocked(static_cast<std::size_t>(blocked_size(m)));
  pack(typed.data(), MatrixOrder::column_major, m, blocked.data());
  return blocked;
}

template <class T>
std::vector<float> unpacked(const std::vector<T>& blocked, const PassMatrix& m) {
  std::vector<T> plain(static_cast<std::size_t>(m.rows.size * m.cols.size));
  unpack(blocked.data(), m, plain.data(), MatrixOrder::column_major);
  std::vector<float> out(plain.size());
  for (std::size_t i = 0; i < plain.size(); ++i) out[i] = to_float(plain[i]);
  return out;
}

// The operator's output against op(left) x op(right) (+ bias, ReLU): the samples' checks.
template <class T>
void expect_matches_reference(const std::vector<float>& result, const GemmPassLayout& l, const std::vector<float>& left,
                              const std::vector<float>& right, const float* bias, bool relu, const Bf16Sum& sum) {
  const PassMatrix& o = l.out;
  const std::int64_t count = o.rows.size * o.cols.size;
  std::vector<float> ref(static_cast<std::size_t>(count));
  Bf16Magnitudes magnitudes;
  constexpr bool f32 = std::is_same_v<T, float>;
  gemm_reference(o.rows.size, o.cols.size, l.reduction(), {left.data(), l.left.transposed},
                 {right.data(), l.right.transposed}, bias, relu, ref.data(), f32 ? nullptr : &magnitudes,
                 sum.chunk_terms);
  if constexpr (f32) {
    const ErrorNorms e = compare(result.data(), ref.data(), count);
    EXPECT_TRUE(e.passed(sum_tolerance(l.reduction()))) << e.to_string();
  } else {
    const ErrorNorms e = compare_within(result.data(), ref.data(), magnitudes, count, sum);
    EXPECT_TRUE(e.passed(0)) << e.to_string();
  }
}

// "M70_N50_K90_bf16"
std::string case_name(const ::testing::TestParamInfo<std::tuple<Shape, jit::DataType>>& info) {
  const Shape& s = std::get<0>(info.param);
  return "M" + std::to_string(s.M) + "_N" + std::to_string(s.N) + "_K" + std::to_string(s.K) + "_" +
         std::string(jit::to_string(std::get<1>(info.param)));
}

class GemmOps : public ::testing::TestWithParam<std::tuple<Shape, jit::DataType>> {
 protected:
  GemmDesc desc() const {
    const auto [shape, dtype] = GetParam();
    return {.M = shape.M, .N = shape.N, .K = shape.K, .dtype = dtype};
  }
  static constexpr int kThreads = 2;
  // Elements past the output's layout, which no store may reach.
  static constexpr std::int64_t kGuard = 64;
  template <class T>
  static void expect_guard_untouched(const std::vector<T>& out) {
    for (std::size_t i = out.size() - kGuard; i < out.size(); ++i)
      ASSERT_EQ(to_float(out[i]), to_float(from_float<T>(777.0f))) << "a store past the output's layout, at element " << i;
  }
  void SetUp() override { omp_set_num_threads(kThreads); }

  // plain: x and y in their plain layouts (one tile each, no padding), bk a divisor of K.
  template <class T>
  void forward(GemmDesc d, bool plain = false) {
    d.bias = d.relu = true;
    GemmFwdConfig config = default_gemm_config<GemmFwdConfig>(d, kThreads);
    config.plain_activations = plain;
    if (plain && d.K % config.bk != 0) config.bk = d.K;
    const GemmFwd gemm(config);
    const GemmPassLayout l = gemm.layout();
    const std::vector<float> a = random_plain<T>(l.left, 1), b = random_plain<T>(l.right, 2);
    std::vector<float> bias(static_cast<std::size_t>(gemm.m_blocking().padded()), 0.0f);
    fill_random(bias.data(), d.M, 3);
    round_to_element_type<T>(bias);
    const std::vector<T> a_b = packed<T>(a, l.left), bias_t = converted<T>(bias);
    std::vector<T> b_b = packed<T>(b, l.right);
    std::vector<T> c_b(static_cast<std::size_t>(blocked_size(l.out) + kGuard), from_float<T>(777.0f));
    T* acts[] = {b_b.data(), c_b.data()};
    const T* weights[] = {a_b.data()};
    const T* biases[] = {bias_t.data()};
    gemm.run(acts, weights, biases);
    gemm.run(acts, weights, biases);  // prepared once, run many times
    expect_guard_untouched(c_b);
    expect_matches_reference<T>(unpacked(c_b, l.out), l, a, b, bias.data(), true, gemm.bf16_sum());
  }

  template <class T, class Pass, class Config>
  void backward(void (*adjust)(Config&) = nullptr) {
    Config config = default_gemm_config<Config>(desc(), kThreads);
    if (adjust != nullptr) adjust(config);
    const Pass pass(config);
    const GemmPassLayout l = pass.layout();
    const std::vector<float> left = random_plain<T>(l.left, 4), right = random_plain<T>(l.right, 5);
    const std::vector<T> left_b = packed<T>(left, l.left), right_b = packed<T>(right, l.right);
    std::vector<T> out_b(static_cast<std::size_t>(blocked_size(l.out) + kGuard), from_float<T>(777.0f));
    pass.run(left_b.data(), right_b.data(), out_b.data());
    expect_guard_untouched(out_b);
    expect_matches_reference<T>(unpacked(out_b, l.out), l, left, right, nullptr, false, pass.bf16_sum());
  }

  // forward / backward in the parameter's dtype.
  void forward_in_dtype(bool plain = false) {
    if (desc().dtype == jit::DataType::bf16) {
      forward<bfloat16>(desc(), plain);
    } else {
      forward<float>(desc(), plain);
    }
  }
  template <class Pass, class Config>
  void backward_in_dtype(void (*adjust)(Config&) = nullptr) {
    if (desc().dtype == jit::DataType::bf16) {
      backward<bfloat16, Pass, Config>(adjust);
    } else {
      backward<float, Pass, Config>(adjust);
    }
  }
};

TEST_P(GemmOps, ForwardWithFusedBiasAndReluMatchesTheReference) {
  forward_in_dtype();
}

TEST_P(GemmOps, BackwardByDataMatchesTheReference) {
  backward_in_dtype<GemmBwd, GemmBwdConfig>();
}

// The forward reading x and writing y in place as PyTorch's row-major tensors: the remainder tiles
// along M and N (70 x 50) touch only the real elements (the guard past the output shows a stray
// store, the reference a wrong one).
TEST_P(GemmOps, ForwardOnPlainActivationsMatchesTheReference) {
  forward_in_dtype(true);
}

TEST_P(GemmOps, BackwardByDataIntoAPlainGradientMatchesTheReference) {
  const auto plain = [](GemmBwdConfig& c) { c.plain_grad_input = true; };
  backward_in_dtype<GemmBwd, GemmBwdConfig>(plain);
}

// X read from PyTorch's row-major tensor in place: its tiles transposed straight from it (tiles
// that divide K and N).
TEST_P(GemmOps, BackwardByWeightsFromAPlainInputMatchesTheReference) {
  const auto plain = [](GemmUpdConfig& c) {
    c.plain_input = true;
    if (c.K % c.bk != 0) c.bk = c.K;
    if (c.N % c.bn != 0) c.bn = c.N;
  };
  backward_in_dtype<GemmUpd, GemmUpdConfig>(plain);
}

// dY read in place by both backward passes (tiles that divide M, and for the update N).
TEST_P(GemmOps, BackwardByDataFromAPlainGradientMatchesTheReference) {
  const auto plain = [](GemmBwdConfig& c) {
    c.plain_grad_output = c.plain_grad_input = true;
    if (c.M % c.bm != 0) c.bm = c.M;
  };
  backward_in_dtype<GemmBwd, GemmBwdConfig>(plain);
}

TEST_P(GemmOps, BackwardByWeightsFromPlainActivationsMatchesTheReference) {
  const auto plain = [](GemmUpdConfig& c) {
    c.plain_input = c.plain_grad_output = true;
    if (c.K % c.bk != 0) c.bk = c.K;
    if (c.N % c.bn != 0) c.bn = c.N;
    if (c.M % c.bm != 0) c.bm = c.M;
  };
  backward_in_dtype<GemmUpd, GemmUpdConfig>(plain);
}

TEST_P(GemmOps, BackwardByWeightsMatchesTheReference) {
  backward_in_dtype<GemmUpd, GemmUpdConfig>();
}

// Exact multiples of the default tiles and shapes with partial tiles in every dimension.
INSTANTIATE_TEST_SUITE_P(Shapes, GemmOps,
                         ::testing::Combine(::testing::Values(Shape{64, 96, 128}, Shape{70, 50, 90}, Shape{8, 8, 8}),
                                            ::testing::Values(jit::DataType::f32, jit::DataType::bf16)),
                         case_name);

// An MLP of three layers with explicit loops: the output of one layer is the next one's input,
// checked against the chain of references (each layer's relative error adds up).
TEST(GemmOpsMlp, ThreeLayersWithExplicitLoopsMatchTheChainedReference) {
  omp_set_num_threads(2);
  GemmFwdConfig config = gemm_config<GemmFwdConfig>({.M = 64, .N = 40, .K = 64, .layers = 3, .bias = true, .relu = true});
  config.loop_string = "aCb";
  config.bm = config.bk = 16;
  config.bn = 8;
  config.kbf = 2;
  const GemmFwd mlp(config);
  const GemmPassLayout l = mlp.layout();
  const std::vector<float> x = random_plain<float>(l.right, 7);
  std::vector<std::vector<float>> w, bias, blocked_w, blocked_act{packed<float>(x, l.right)};
  for (int layer = 0; layer < 3; ++layer) {
    w.push_back(random_plain<float>(l.left, 10 + static_cast<std::uint64_t>(layer)));
    blocked_w.push_back(packed<float>(w.back(), l.left));
    bias.emplace_back(64);
    fill_random(bias.back().data(), 64, 20 + static_cast<std::uint64_t>(layer));
    blocked_act.emplace_back(static_cast<std::size_t>(blocked_size(l.out)));
  }
  std::vector<float*> acts;
  std::vector<const float*> weights, biases;
  for (auto& a : blocked_act) acts.push_back(a.data());
  for (int layer = 0; layer < 3; ++layer) weights.push_back(blocked_w[layer].data()), biases.push_back(bias[layer].data());
  mlp.run(acts, weights, biases);

  std::vector<float> in = x, ref(64 * 40);
  for (int layer = 0; layer < 3; ++layer) {
    gemm_reference(64, 40, 64, w[layer].data(), in.data(), bias[layer].data(), true, ref.data());
    in = ref;
  }
  const std::vector<float> result = unpacked(blocked_act.back(), l.out);
  const ErrorNorms e = compare(result.data(), ref.data(), 64 * 40);
  EXPECT_TRUE(e.passed(3 * sum_tolerance(64))) << e.to_string();
}

// A bf16 backward-by-weights pass writing dW in f32 (the gradient of fp32 master weights): the
// VNNI-2 positions of its bf16 dW, the sums unrounded, the padding zero. With one reduction chunk,
// or with partial filters, the bf16 pass rounds those very f32 sums once, so each f32 element
// rounds to the bf16 one bit for bit; with two chunks the bf16 pass rounds twice, and the f32
// sums are checked against the reference alone. run_f32_column_major writes the same sums in the
// f32 layout's column-major tiles.
TEST(GemmUpdF32Weights, WritesTheBf16PassSumsUnroundedInItsVnni2TilesOrInColumnMajorOnes) {
  omp_set_num_threads(2);
  struct Case {
    const char* loop_string;
    std::int64_t nbf, partial_filters;
    bool one_rounding;
  };
  for (const Case& k : {Case{"Abc", 1, 0, true}, Case{"aBc", 2, 0, false}, Case{"abC", 1, 2, true}}) {
    SCOPED_TRACE(k.loop_string);
    GemmUpdConfig config = gemm_config<GemmUpdConfig>({.M = 70, .N = 52, .K = 90, .dtype = jit::DataType::bf16});
    config.loop_string = k.loop_string;
    config.bm = 16;
    config.bn = 14;  // 4 N blocks, the last one partial
    config.bk = 16;
    config.nbf = k.nbf;
    config.n_partial_filters = k.partial_filters;
    const GemmUpd pass(config);
    ASSERT_EQ(pass.uses_partial_filters(), k.partial_filters > 0);
    const GemmPassLayout l = pass.layout();
    const std::vector<float> left = random_plain<bfloat16>(l.left, 31), right = random_plain<bfloat16>(l.right, 32);
    const std::vector<bfloat16> left_b = packed<bfloat16>(left, l.left), right_b = packed<bfloat16>(right, l.right);
    const std::size_t size = static_cast<std::size_t>(blocked_size(l.out));
    std::vector<bfloat16> dw16(size);
    std::vector<float> dw32(size, 777.0f);
    pass.run(left_b.data(), right_b.data(), dw16.data());
    pass.run(left_b.data(), right_b.data(), dw32.data());

    // Where the real elements are: ones packed into the f32 copy of the layout, zeros elsewhere.
    const std::vector<float> ones(static_cast<std::size_t>(l.out.rows.size * l.out.cols.size), 1.0f);
    std::vector<float> real(size);
    pack(ones.data(), MatrixOrder::column_major, l.out, real.data());
    for (std::size_t i = 0; i < size; ++i) {
      if (real[i] == 0.0f) {
        ASSERT_EQ(dw32[i], 0.0f) << "padding at " << i;
      } else if (k.one_rounding) {
        ASSERT_EQ(jit::to_bfloat16(dw32[i]).bits, dw16[i].bits) << "at " << i << ": " << dw32[i] << " vs " << to_float(dw16[i]);
      }
    }
    std::vector<float> plain(ones.size()), ref(ones.size());
    unpack(dw32.data(), l.out, plain.data(), MatrixOrder::column_major);
    gemm_reference(l.out.rows.size, l.out.cols.size, l.reduction(), {left.data(), l.left.transposed},
                   {right.data(), l.right.transposed}, nullptr, false, ref.data());
    const ErrorNorms e = compare(plain.data(), ref.data(), static_cast<std::int64_t>(plain.size()));
    EXPECT_TRUE(e.passed(sum_tolerance(l.reduction()))) << e.to_string();

    // In column-major tiles (run_f32_column_major): the same sums, each tile's columns unpaired.
    std::vector<float> columns(size, 777.0f), unpaired(size);
    pass.run_f32_column_major(left_b.data(), right_b.data(), columns.data());
    unpack_vnni2(dw32.data(), config.bm, static_cast<std::int64_t>(size) / config.bm, unpaired.data());
    EXPECT_EQ(columns, unpaired);
  }
  // An f32 pass has no such runs.
  const GemmUpd f32(gemm_config<GemmUpdConfig>({.M = 16, .N = 16, .K = 16}));
  std::vector<bfloat16> in(4096);
  std::vector<float> out(4096);
  EXPECT_THROW(f32.run(in.data(), in.data(), out.data()), Error);
  EXPECT_THROW(f32.run_f32_column_major(in.data(), in.data(), out.data()), Error);
}

// dW's padding comes out zero whatever the buffer held, in every dtype and way of reducing (one
// chunk through scratch, two chunks in place, partial filters): an optimizer step then leaves the
// padding of a blocked weight zero. The f32 pass and the bf16 one with bf16 dW left the buffer's
// bytes in the padding of edge blocks before.
TEST(GemmUpdPadding, TheWeightGradientsPaddingIsZeroWhateverTheBufferHeld) {
  omp_set_num_threads(2);
  struct Case {
    const char* loop_string;
    std::int64_t nbf, partial_filters;
  };
  for (const jit::DataType dtype : {jit::DataType::f32, jit::DataType::bf16}) {
    for (const Case& k : {Case{"Abc", 1, 0}, Case{"aBc", 2, 0}, Case{"abC", 1, 2}}) {
      SCOPED_TRACE(std::string(jit::to_string(dtype)) + " " + k.loop_string);
      GemmUpdConfig config = gemm_config<GemmUpdConfig>({.M = 70, .N = 52, .K = 90, .dtype = dtype});
      config.loop_string = k.loop_string;
      config.bm = config.bk = 16;
      config.bn = 14;
      config.nbf = k.nbf;
      config.n_partial_filters = k.partial_filters;
      const GemmUpd pass(config);
      const GemmPassLayout l = pass.layout();
      const std::size_t size = static_cast<std::size_t>(blocked_size(l.out));
      const std::vector<float> ones(static_cast<std::size_t>(l.out.rows.size * l.out.cols.size), 1.0f);
      std::vector<float> real(size);
      pack(ones.data(), MatrixOrder::column_major, l.out, real.data());
      const auto check = [&](auto tag) {
        using T = decltype(tag);
        const std::vector<float> left = random_plain<T>(l.left, 41), right = random_plain<T>(l.right, 42);
        const std::vector<T> left_b = packed<T>(left, l.left), right_b = packed<T>(right, l.right);
        std::vector<T> dw(size, from_float<T>(777.0f));
        pass.run(left_b.data(), right_b.data(), dw.data());
        for (std::size_t i = 0; i < size; ++i) {
          if (real[i] == 0.0f) {
            ASSERT_EQ(to_float(dw[i]), 0.0f) << "padding at " << i;
          }
        }
        expect_matches_reference<T>(unpacked(dw, l.out), l, left, right, nullptr, false, pass.bf16_sum());
      };
      if (dtype == jit::DataType::bf16) {
        check(bfloat16{});
      } else {
        check(0.0f);
      }
    }
  }
}

// The three ways to a configuration keep the descriptor and give the operator something it takes.
TEST(GemmOpsConfig, ExplicitTunedAndDefaultConfigurationsKeepTheDescriptor) {
  const GemmDesc desc{.M = 96, .N = 64, .K = 32, .dtype = jit::DataType::bf16, .layers = 1, .bias = true, .relu = false};
  for (const GemmFwdConfig& c : {gemm_config<GemmFwdConfig>(desc), tuned_gemm_config<GemmFwdConfig>(desc, 2),
                                 default_gemm_config<GemmFwdConfig>(desc, 2)}) {
    EXPECT_EQ(c.M, 96);
    EXPECT_EQ(c.N, 64);
    EXPECT_EQ(c.K, 32);
    EXPECT_EQ(c.dtype, jit::DataType::bf16);
    EXPECT_TRUE(c.fuse_bias);
    EXPECT_FALSE(c.fuse_relu);
    EXPECT_NO_THROW(GemmFwd::check(c)) << c.loop_string;
  }
  EXPECT_EQ(gemm_config<GemmBwdConfig>(desc).loop_string, "aBC");
  EXPECT_NO_THROW(GemmUpd::check(tuned_gemm_config<GemmUpdConfig>(desc, 2)));
}

}  // namespace
}  // namespace weft::ops
