// Accuracy of the generated transcendentals against double precision over the whole float range:
// every 509th bit pattern (about 8.4 million values, both signs, denormals, infinities, NaNs) plus
// the edges. Relative error <= 1e-6 where the exact result is a normal float; absolute error
// <= 4 * 2^-149 where it is denormal; overflow only where the exact result is within 1e-6 of
// FLT_MAX or beyond.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "weft/jit/cpu.hpp"
#include "weft/tpp/unary.hpp"
#include "activation_accuracy.hpp"
#include "host_isas.hpp"

namespace {

using weft::tpp::Unary;
using weft::tpp::UnaryArgs;
using weft::tpp::unary_kernel;
using weft::tpp::UnaryDesc;
using weft::tpp::UnaryOp;

struct Error {
  double max_rel = 0;
  float worst_x = 0;
  std::int64_t failures = 0;
  float first_bad_x = 0;
  float first_bad_got = 0;
};

// op(x) in double for every x: computed once per op and reused for every ISA (under qemu the
// double-precision references took as long as the kernels of one ISA).
std::vector<double> exact_values(UnaryOp op, const std::vector<float>& xs) {
  std::vector<double> exact(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) exact[i] = weft::test::exact_activation(op, xs[i]);
  return exact;
}

Error sweep(UnaryOp op, const std::vector<float>& xs, const std::vector<double>& exact, weft::jit::Isa isa) {
  const auto m = static_cast<std::int64_t>(xs.size());
  std::vector<float> out(xs.size());
  const UnaryArgs args{xs.data(), out.data()};
  unary_kernel(UnaryDesc{.op = op, .m = m, .n = 1, .ld_in = m, .ld_out = m}, isa)(&args);
  Error e;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    double rel = 0;
    if (!weft::test::within_activation_bound(exact[i], out[i], rel)) {
      if (e.failures++ == 0) {
        e.first_bad_x = xs[i];
        e.first_bad_got = out[i];
      }
    }
    if (rel > e.max_rel) {
      e.max_rel = rel;
      e.worst_x = xs[i];
    }
  }
  return e;
}

std::vector<float> whole_range() {
  std::vector<float> xs;
  xs.reserve((std::uint64_t{1} << 32) / 509 + 64);
  for (std::uint64_t b = 0; b < (std::uint64_t{1} << 32); b += 509) xs.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(b)));
  // Edges: zeros, denormals, the smallest normal, the largest float, infinities, around the
  // thresholds of each formula.
  const float edges[] = {0.0f, -0.0f, 1e-45f, -1e-45f, 1e-40f, -1e-40f, 1.17549435e-38f, -1.17549435e-38f,
                         3.40282347e38f, -3.40282347e38f, std::numeric_limits<float>::infinity(),
                         -std::numeric_limits<float>::infinity(), 88.7228f, 88.72284f, 88.7229f, -87.33655f,
                         -103.97f, -104.0f, -104.5f, 0.55f, -0.55f, 0.5499999f, 0.8f, -0.8f, 0.7999999f, -15.0f,
                         -14.1f, 15.0f, 9.01f, -9.01f, 1e-8f, -1e-8f, 0.3465736f, -0.3465736f};
  for (float e : edges) {
    xs.push_back(e);
    xs.push_back(std::nextafter(e, 0.0f));
    xs.push_back(std::nextafter(e, std::numeric_limits<float>::infinity()));
  }
  return xs;
}

// A dense uniform sample over the interesting part of each function's domain.
std::vector<float> dense(float lo, float hi, int count) {
  std::vector<float> xs(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) xs[static_cast<std::size_t>(i)] = lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(count - 1);
  return xs;
}

class Accuracy : public ::testing::TestWithParam<UnaryOp> {};

TEST_P(Accuracy, WholeFloatRangeWithinBound) {
  static const std::vector<float> xs = whole_range();
  const std::vector<double> exact = exact_values(GetParam(), xs);
  for (weft::jit::Isa isa : weft::test::runnable_elementwise_isas()) {
    const Error e = sweep(GetParam(), xs, exact, isa);
    std::printf("[ accuracy ] %-8s %-6s whole range: max rel error %.3g at x = %.9g (%lld violations)\n",
                weft::tpp::to_string(GetParam()).c_str(), std::string(weft::jit::to_string(isa)).c_str(), e.max_rel,
                static_cast<double>(e.worst_x), static_cast<long long>(e.failures));
    EXPECT_EQ(e.failures, 0) << weft::jit::to_string(isa) << ": first violation at x = " << e.first_bad_x << " got "
                             << e.first_bad_got;
  }
}

TEST_P(Accuracy, DenseCoreWithinBound) {
  static const std::vector<float> xs = dense(-20.0f, 20.0f, 2'000'001);
  const std::vector<double> exact = exact_values(GetParam(), xs);
  for (weft::jit::Isa isa : weft::test::runnable_elementwise_isas()) {
    const Error e = sweep(GetParam(), xs, exact, isa);
    std::printf("[ accuracy ] %-8s %-6s [-20, 20]:   max rel error %.3g at x = %.9g\n", weft::tpp::to_string(GetParam()).c_str(),
                std::string(weft::jit::to_string(isa)).c_str(), e.max_rel, static_cast<double>(e.worst_x));
    EXPECT_EQ(e.failures, 0) << weft::jit::to_string(isa) << ": first violation at x = " << e.first_bad_x << " got "
                             << e.first_bad_got;
  }
}

INSTANTIATE_TEST_SUITE_P(Transcendentals, Accuracy,
                         ::testing::Values(UnaryOp::exp, UnaryOp::sigmoid, UnaryOp::tanh, UnaryOp::gelu),
                         [](const auto& param_info) { return weft::tpp::to_string(param_info.param); });

// The instruction set run() uses; SpecialValues sets it to each one the host runs.
weft::jit::Isa g_special_isa = weft::jit::Isa::avx2;

float run(UnaryOp op, float x) {
  // 9 elements on AVX2 (one whole vector and a tail), 17 on AVX-512: the value sits in a whole
  // vector and in the tail.
  const std::int64_t m = g_special_isa == weft::jit::Isa::avx512 ? 17 : 9;
  std::vector<float> in(static_cast<std::size_t>(m), x), out(static_cast<std::size_t>(m));
  const UnaryArgs args{in.data(), out.data()};
  unary_kernel(UnaryDesc{.op = op, .m = m, .n = 1, .ld_in = m, .ld_out = m}, g_special_isa)(&args);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(out[0]), std::bit_cast<std::uint32_t>(out[static_cast<std::size_t>(m - 1)]));
  return out[0];
}

TEST(SpecialValues, AsDocumented) {
  for (weft::jit::Isa isa : weft::test::runnable_elementwise_isas()) {
    SCOPED_TRACE(std::string("isa ") + std::string(weft::jit::to_string(isa)));
    g_special_isa = isa;
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (UnaryOp op : {UnaryOp::exp, UnaryOp::sigmoid, UnaryOp::tanh, UnaryOp::gelu, UnaryOp::relu, UnaryOp::sqrt,
                       UnaryOp::reciprocal, UnaryOp::square}) {
      EXPECT_TRUE(std::isnan(run(op, nan))) << weft::tpp::to_string(op);
      EXPECT_TRUE(std::isnan(run(op, -nan))) << weft::tpp::to_string(op);
    }
    EXPECT_EQ(run(UnaryOp::exp, inf), inf);
    EXPECT_EQ(run(UnaryOp::exp, -inf), 0.0f);
    EXPECT_EQ(run(UnaryOp::exp, 0.0f), 1.0f);
    EXPECT_EQ(run(UnaryOp::exp, -0.0f), 1.0f);
    EXPECT_EQ(run(UnaryOp::exp, 89.0f), inf);
    EXPECT_EQ(run(UnaryOp::exp, -110.0f), 0.0f);
    EXPECT_GT(run(UnaryOp::exp, -100.0f), 0.0f);  // denormal, not flushed
    EXPECT_EQ(run(UnaryOp::sigmoid, inf), 1.0f);
    EXPECT_EQ(run(UnaryOp::sigmoid, -inf), 0.0f);
    EXPECT_EQ(run(UnaryOp::sigmoid, 0.0f), 0.5f);
    EXPECT_EQ(run(UnaryOp::sigmoid, -0.0f), 0.5f);
    EXPECT_EQ(run(UnaryOp::sigmoid, 20.0f), 1.0f);
    EXPECT_GT(run(UnaryOp::sigmoid, -100.0f), 0.0f);  // e^-100, denormal
    EXPECT_EQ(run(UnaryOp::tanh, inf), 1.0f);
    EXPECT_EQ(run(UnaryOp::tanh, -inf), -1.0f);
    EXPECT_EQ(run(UnaryOp::tanh, 10.0f), 1.0f);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(run(UnaryOp::tanh, -0.0f)), 0x80000000u);
    EXPECT_EQ(run(UnaryOp::tanh, 1e-30f), 1e-30f);
    EXPECT_EQ(run(UnaryOp::tanh, 1e-40f), 1e-40f);
    EXPECT_EQ(run(UnaryOp::gelu, inf), inf);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(run(UnaryOp::gelu, -inf)), 0x80000000u);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(run(UnaryOp::gelu, -0.0f)), 0x80000000u);
    EXPECT_EQ(run(UnaryOp::gelu, 0.0f), 0.0f);
    EXPECT_EQ(run(UnaryOp::gelu, 1e30f), 1e30f);
    EXPECT_EQ(run(UnaryOp::gelu, -30.0f), 0.0f);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(run(UnaryOp::relu, -0.0f)), 0u);
    EXPECT_EQ(run(UnaryOp::relu, -inf), 0.0f);
    EXPECT_EQ(run(UnaryOp::relu, inf), inf);
    EXPECT_EQ(run(UnaryOp::reciprocal, 0.0f), inf);
    EXPECT_EQ(run(UnaryOp::reciprocal, -0.0f), -inf);
    EXPECT_TRUE(std::isnan(run(UnaryOp::sqrt, -1.0f)));
    EXPECT_EQ(std::bit_cast<std::uint32_t>(run(UnaryOp::sqrt, -0.0f)), 0x80000000u);
  }
}

}  // namespace
