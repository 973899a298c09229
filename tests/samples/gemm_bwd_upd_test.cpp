// The backward GEMM passes against the plain reference, through the pass driver the samples use.
#include <cctype>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <weft/jit/error.hpp>
#include <weft/ops/gemm_bwd.hpp>
#include <weft/ops/gemm_upd.hpp>

#include "gemm_pass.hpp"

namespace {

using namespace weft::samples;
using weft::jit::DataType;
using weft::ops::bfloat16;
using weft::ops::GemmBwd;
using weft::ops::GemmBwdConfig;
using weft::ops::GemmUpd;
using weft::ops::GemmUpdConfig;
using weft::ops::sum_tolerance;
using weft::ops::sum_tolerance_f64;

enum class Pass { bwd, upd };

struct Shape {
  Pass pass;
  std::string loop_string;
  std::int64_t M, N, K, bm, bn, bk, chunks;
  bool private_trans;
  std::int64_t partial_filters;  // upd only
  int threads;
};

// How ctest and failure messages show a case (the default dumps the struct's bytes).
void PrintTo(const Shape& s, std::ostream* os) {
  *os << (s.pass == Pass::bwd ? "bwd " : "upd ") << s.loop_string << " M " << s.M << " N " << s.N << " K " << s.K
      << " tiles " << s.bm << "x" << s.bn << "x" << s.bk << " chunks " << s.chunks << " threads " << s.threads;
}

template <class Config>
Config config_of(const Shape& s) {
  Config c;
  c.loop_string = s.loop_string;
  c.M = s.M, c.N = s.N, c.K = s.K, c.bm = s.bm, c.bn = s.bn, c.bk = s.bk;
  c.private_trans = s.private_trans;
  return c;
}

// The pass run twice (the second run must not see the first one's state) on an output that starts
// as garbage, compared with the plain reference. T: float, bfloat16 or double, the pass's precision.
template <class T, class Pass>
Verdict pass_error(const Pass& pass, int threads) {
  omp_set_num_threads(threads);
  GemmPassData<T> data(pass.layout(), 21, 22, 555.0f);
  pass.run(data.left(), data.right(), data.out());
  pass.run(data.left(), data.right(), data.out());
  return data.check(pass.bf16_sum());
}

GemmBwdConfig bwd_config(const Shape& s, DataType dtype) {
  GemmBwdConfig c = config_of<GemmBwdConfig>(s);
  c.mbf = s.chunks;
  c.dtype = dtype;
  return c;
}

GemmUpdConfig upd_config(const Shape& s, DataType dtype) {
  GemmUpdConfig c = config_of<GemmUpdConfig>(s);
  c.nbf = s.chunks;
  c.n_partial_filters = s.partial_filters;
  c.dtype = dtype;
  return c;
}

// dX = W^T dY or dW = dY X^T through the sample.
template <class T>
Verdict pass_error(const Shape& s) {
  const DataType dtype = weft::ops::data_type_of<T>();
  if (s.pass == Pass::bwd) return pass_error<T>(GemmBwd(bwd_config(s, dtype)), s.threads);
  return pass_error<T>(GemmUpd(upd_config(s, dtype)), s.threads);
}

class GemmBackwardCases : public ::testing::TestWithParam<Shape> {};
TEST_P(GemmBackwardCases, MatchesReference) {
  const Shape& s = GetParam();
  const Verdict v = pass_error<float>(s);
  EXPECT_EQ(v.tolerance, sum_tolerance(s.pass == Pass::bwd ? s.M : s.N));  // the reduction's length
  EXPECT_TRUE(v.norms.passed(v.tolerance)) << v.norms.to_string();
}

// The same shapes in bf16 (all their tiles are even), on whichever path this run selects
// (avx512_bf16, or WEFT_ISA's): every element within its bf16 bound.
TEST_P(GemmBackwardCases, MatchesReferenceInBf16) {
  const Verdict v = pass_error<bfloat16>(GetParam());
  EXPECT_TRUE(v.norms.bounded);
  EXPECT_TRUE(v.norms.passed(0)) << v.norms.to_string();
}

// The same shapes in f64 (weft-gemm-bwd / -upd ... FP64): doubles with all 53 bits random, against
// the reference summed in double, within the f64 tolerance of the reduction's length.
TEST_P(GemmBackwardCases, MatchesReferenceInF64) {
  const Shape& s = GetParam();
  const Verdict v = pass_error<double>(s);
  EXPECT_EQ(v.tolerance, sum_tolerance_f64(s.pass == Pass::bwd ? s.M : s.N));
  EXPECT_TRUE(v.norms.passed(v.tolerance)) << v.norms.to_string();
  EXPECT_GT(v.norms.max_abs_ref, 0.0);  // a vacuous comparison would pass too
}
INSTANTIATE_TEST_SUITE_P(
    Shapes, GemmBackwardCases,
    ::testing::Values(Shape{Pass::bwd, "aBC", 64, 64, 64, 32, 32, 32, 1, false, 0, 2},
                      Shape{Pass::bwd, "ACb", 70, 45, 50, 16, 16, 16, 2, false, 0, 2},   // remainders, 2 chunks
                      Shape{Pass::bwd, "ACb", 70, 45, 50, 16, 16, 16, 3, true, 0, 3},    // private transposes
                      Shape{Pass::bwd, "A{R:2}C{C:1}b", 33, 40, 65, 8, 16, 16, 2, true, 0, 2},  // grid
                      Shape{Pass::bwd, "bcaBCb", 48, 48, 48, 8, 8, 8, 1, false, 0, 1},
                      Shape{Pass::upd, "ABc", 64, 64, 64, 32, 32, 32, 2, false, 0, 2},
                      Shape{Pass::upd, "ABc", 70, 45, 50, 16, 16, 16, 3, true, 0, 2},
                      // Partial filters: work-shared c (copy = thread id) ...
                      Shape{Pass::upd, "abC", 70, 95, 50, 16, 16, 16, 3, false, 2, 2},
                      Shape{Pass::upd, "aBC", 40, 64, 40, 8, 8, 8, 4, true, 4, 4},
                      // ... and c split over grid columns (copy = column coordinate).
                      Shape{Pass::upd, "aB{R:2}C{C:2}", 40, 70, 33, 8, 8, 8, 9, false, 2, 4},
                      // P > 0 but c sequential: no copies, plain beta = 0 first touch.
                      Shape{Pass::upd, "ABc", 33, 33, 33, 8, 8, 8, 2, false, 3, 2}),
    // "<index>_<pass>_<loop string's letters>": stable names (the default printed the struct's bytes,
    // a pointer among them, so ctest's names changed from build to build).
    [](const ::testing::TestParamInfo<Shape>& param_info) {
      std::string letters;
      for (char ch : param_info.param.loop_string)
        if (std::isalnum(static_cast<unsigned char>(ch))) letters += ch;
      return std::to_string(param_info.index) + (param_info.param.pass == Pass::bwd ? "_bwd_" : "_upd_") + letters;
    });

TEST(GemmBackward, ParallelReductionWithSeveralChunksIsAnError) {
  GemmBwdConfig b;
  b.loop_string = "aBC";
  b.M = b.N = b.K = 64;
  b.mbf = 2;
  EXPECT_THROW(GemmBwd{b}, weft::Error);
  b.mbf = 1;  // one chunk: the reduction loop has one iteration, nothing to race on
  EXPECT_NO_THROW(GemmBwd{b});

  GemmUpdConfig u;
  u.loop_string = "abC";
  u.M = u.N = u.K = 64;
  u.nbf = 2;
  EXPECT_THROW(GemmUpd{u}, weft::Error);
  u.n_partial_filters = 2;  // partial filters make a parallel reduction legal
  EXPECT_NO_THROW(GemmUpd{u});
}

// Runs `pass` in T and checks it (it must pass); then `spoil` changes one element of its blocked
// output (all of it, padding included), and returns the check of that.
template <class T, class Pass, class Spoil>
Verdict check_after_spoiling(const Pass& pass, const Spoil& spoil) {
  omp_set_num_threads(2);
  GemmPassData<T> data(pass.layout(), 21, 22);
  pass.run(data.left(), data.right(), data.out());
  const Verdict right = data.check(pass.bf16_sum());
  EXPECT_TRUE(right.norms.passed(right.tolerance)) << right.norms.to_string();
  const weft::ops::PassMatrix& o = pass.layout().out;
  spoil(std::span<T>(data.out(), static_cast<std::size_t>(o.rows.padded() * o.cols.padded())));
  return data.check(pass.bf16_sum());
}

// In bf16 one wrong element (the first, in either layout) must fail the check.
template <class Pass>
void expect_wrong_element_found(const Pass& pass) {
  const Verdict wrong = check_after_spoiling<bfloat16>(pass, [](std::span<bfloat16> out) {
    const float value = weft::jit::to_float(out[0]);
    out[0] = weft::jit::to_bfloat16(value + 0.25f + std::fabs(value) / 16);
  });
  EXPECT_FALSE(wrong.norms.passed(0)) << wrong.norms.to_string();
  EXPECT_EQ(wrong.norms.beyond_bound, 1) << wrong.norms.to_string();
}

// In f64 the largest element rounded to float (what an f32 computation of it is off by, at least)
// must fail the check.
template <class Pass>
void expect_float_element_found(const Pass& pass) {
  const Verdict wrong = check_after_spoiling<double>(pass, [](std::span<double> out) {
    double& largest = *std::max_element(out.begin(), out.end(),
                                        [](double a, double b) { return std::fabs(a) < std::fabs(b); });
    ASSERT_NE(largest, static_cast<double>(static_cast<float>(largest)));
    largest = static_cast<float>(largest);
  });
  EXPECT_FALSE(wrong.norms.passed(wrong.tolerance)) << wrong.norms.to_string();
}

// The check can fail: dX, dW, and dW reduced from partial filters.
TEST(GemmBackward, Bf16CheckFindsOneWrongElement) {
  expect_wrong_element_found(
      GemmBwd(bwd_config({Pass::bwd, "ACb", 64, 48, 64, 16, 16, 16, 2, false, 0, 2}, DataType::bf16)));
  expect_wrong_element_found(
      GemmUpd(upd_config({Pass::upd, "ABc", 64, 48, 64, 16, 16, 16, 2, false, 0, 2}, DataType::bf16)));
  const GemmUpd partial(upd_config({Pass::upd, "abC", 64, 48, 64, 16, 16, 16, 3, false, 2, 2}, DataType::bf16));
  EXPECT_TRUE(partial.uses_partial_filters());
  expect_wrong_element_found(partial);
}

TEST(GemmBackward, F64CheckFindsOneElementRoundedToFloat) {
  expect_float_element_found(
      GemmBwd(bwd_config({Pass::bwd, "ACb", 64, 48, 64, 16, 16, 16, 2, false, 0, 2}, DataType::f64)));
  const GemmUpd partial(upd_config({Pass::upd, "abC", 64, 48, 64, 16, 16, 16, 3, false, 2, 2}, DataType::f64));
  EXPECT_TRUE(partial.uses_partial_filters());
  expect_float_element_found(partial);
}

TEST(GemmBackward, Bf16NeedsEvenReductionTilesAndBf16Buffers) {
  GemmBwdConfig b;
  b.loop_string = "aBC";
  b.M = b.N = b.K = 64;
  b.dtype = DataType::bf16;
  b.bm = 15;
  EXPECT_THROW(GemmBwd{b}, weft::Error);  // W^T pairs M
  b.bm = 16, b.bk = 17;
  EXPECT_THROW(GemmBwd{b}, weft::Error);  // W (the forward's) pairs K
  b.bk = 16, b.bn = 17;
  const GemmBwd bwd(b);                   // dY and dX are column-major: any bn
  std::vector<float> f(64 * 64);
  EXPECT_THROW(bwd.run(f.data(), f.data(), f.data()), weft::Error);

  GemmUpdConfig u;
  u.loop_string = "abC";
  u.M = u.N = u.K = 64;
  u.dtype = DataType::bf16;
  u.bn = 15;
  EXPECT_THROW(GemmUpd{u}, weft::Error);  // dY pairs N
  u.bn = 16, u.bk = 9;
  EXPECT_THROW(GemmUpd{u}, weft::Error);  // dW in the weights' layout pairs K
  u.bk = 16, u.bm = 9;
  EXPECT_NO_THROW(GemmUpd{u});
}

TEST(GemmUpd, TooFewPartialFiltersIsAnError) {
  omp_set_num_threads(2);
  GemmUpdConfig c;
  c.loop_string = "abC";
  c.M = c.N = c.K = 64;
  c.bm = c.bn = c.bk = 16;
  c.nbf = 4;
  c.n_partial_filters = 1;
  const GemmUpd upd(c);
  std::vector<float> dy(64 * 64, 1.0f), x(64 * 64, 1.0f), dw(64 * 64);
  EXPECT_THROW(upd.run(dy.data(), x.data(), dw.data()), weft::Error);
}

}  // namespace
