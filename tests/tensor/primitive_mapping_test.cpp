// Each element-wise tensor primitive runs the TPP op of the same meaning (as main primitive and as
// touch), and a value that is no such primitive is an error, never a copy or an add.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tensor_test_support.hpp"
#include "tpp_ops.hpp"
#include "weft/tensor/lowering.hpp"
#include "weft/tensor/reference.hpp"

namespace weft::tensor::test {
namespace {

// Every value prim_t takes and the gaps between them.
std::vector<prim_t> every_prim_value() {
  std::vector<prim_t> all;
  for (std::uint32_t v = 0; v <= 100; ++v) all.push_back(static_cast<prim_t>(v));
  return all;
}

// Inputs where the primitives differ from a copy and from each other: both signs, zero, below
// and above one; few bits, so that GEMM sums of them are exact.
std::vector<float> mixed_values(std::size_t n, float shift) {
  const float pattern[] = {-2.5f, -0.75f, -0.125f, 0.0f, 0.25f, 0.875f, 1.5f, 3.0f, 7.25f};
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = pattern[i % std::size(pattern)] + shift;
  return v;
}

// Equal within rounding; NaN matches NaN and infinities match by sign.
void expect_same_values(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    if (std::isnan(w) || std::isinf(w)) {
      EXPECT_TRUE((std::isnan(w) && std::isnan(g)) || g == w) << what << " element " << i << ": got " << g << ", want " << w;
    } else {
      EXPECT_NEAR(g, w, 1e-6 + 1e-5 * std::fabs(w)) << what << " element " << i;
    }
  }
}

// out(9 x 4 block, 2 blocks) = main(in0) or in0 main in1, in1 a row broadcast (stride 0 along
// the rows), both strided as the TPPs take them.
Contraction elementwise(prim_t main) {
  const exec_t s = exec_t::seq, p = exec_t::prim;
  Contraction op;
  op.main = main;
  op.dims = {Dim{dim_t::c, s, 2, 48, 4, 40}, Dim{dim_t::c, p, 9, 1, 0, 1},
             Dim{dim_t::c, p, 4, 12, 1, 10}};
  return op;
}

void run_against_reference(const Contraction& op, const std::string& expect_in_description) {
  const LoweredOperation lowered(op);
  EXPECT_NE(lowered.describe().find(expect_in_description), std::string::npos) << lowered.describe();
  const std::vector<float> in0 = mixed_values(extent(op, &Dim::stride_in0), 0.0f);
  const std::vector<float> in1 = mixed_values(extent(op, &Dim::stride_in1), 0.5f);
  const std::vector<float> initial = mixed_values(extent(op, &Dim::stride_out), -0.25f);
  std::vector<float> got = initial, want = initial;
  lowered.execute(in0.data(), in1.data(), got.data());
  reference_contraction(op, in0.data(), in1.data(), want.data());
  expect_same_values(got, want, op.describe());
}

// Runs every primitive of a kind (is_unary, is_binary_elementwise) as the main primitive;
// returns how many there are.
int run_each_main_primitive(bool (*of_kind)(prim_t)) {
  int count = 0;
  for (prim_t p : every_prim_value()) {
    if (!of_kind(p)) continue;
    ++count;
    SCOPED_TRACE(to_string(p));
    run_against_reference(elementwise(p), "main: " + to_string(p) + "_m");
  }
  return count;
}

TEST(PrimitiveMapping, EachUnaryPrimitiveRunsItsTppOp) {
  EXPECT_EQ(run_each_main_primitive(is_unary), 10);
}

TEST(PrimitiveMapping, EachBinaryPrimitiveRunsItsTppOp) {
  EXPECT_EQ(run_each_main_primitive(is_binary_elementwise), 6);
}

TEST(PrimitiveMapping, EachUnaryTouchRunsItsTppOp) {
  for (prim_t p : every_prim_value()) {
    if (!is_unary(p) || p == prim_t::relu) continue;  // relu is the GEMM's fused epilogue
    SCOPED_TRACE(to_string(p));
    // C(8 x 3, two blocks along n) += A(8 x 4) B(4 x 3), column-major.
    const exec_t s = exec_t::seq, pr = exec_t::prim;
    Contraction op;
    op.main = prim_t::gemm;
    op.last_touch = p;
    op.dims = {Dim{dim_t::n, s, 2, 0, 12, 24}, Dim{dim_t::m, pr, 8, 1, 0, 1},
               Dim{dim_t::n, pr, 3, 0, 4, 8}, Dim{dim_t::k, pr, 4, 8, 1, 0}};
    run_against_reference(op, "last touch: " + to_string(p) + "_m");
    // As first touch (zero is the GEMM's beta = 0).
    if (p == prim_t::zero) continue;
    op.first_touch = p;
    op.last_touch = prim_t::none;
    run_against_reference(op, "first touch: " + to_string(p) + "_m");
  }
}

TEST(PrimitiveMapping, EveryElementwisePrimitiveHasItsOwnTppOp) {
  for (prim_t p : every_prim_value()) {
    SCOPED_TRACE(static_cast<std::uint32_t>(p));
    if (is_unary(p)) {
      EXPECT_EQ(tpp::to_string(detail::unary_tpp_op(p)), to_string(p));
    } else {
      EXPECT_THROW((void)detail::unary_tpp_op(p), ConfigError);
    }
    if (is_binary_elementwise(p)) {
      EXPECT_EQ(tpp::to_string(detail::binary_tpp_op(p)), to_string(p));
    } else {
      EXPECT_THROW((void)detail::binary_tpp_op(p), ConfigError);
    }
  }
  try {
    (void)detail::unary_tpp_op(prim_t::add);
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.code(), error_t::err_wrong_primitive);
    EXPECT_NE(std::string(e.what()).find("add is no unary primitive"), std::string::npos) << e.what();
  }
}

TEST(PrimitiveMapping, TheReferenceRejectsWhatIsNoSuchPrimitive) {
  // Before, any value passed its input through: a primitive the reference did not know would
  // have agreed with a kernel that copied.
  for (prim_t p : every_prim_value()) {
    SCOPED_TRACE(static_cast<std::uint32_t>(p));
    if (is_unary(p) || p == prim_t::none) {
      EXPECT_NO_THROW((void)unary_value(p, 0.5));
    } else {
      EXPECT_THROW((void)unary_value(p, 0.5), ConfigError);
    }
    if (is_binary_elementwise(p)) {
      EXPECT_NO_THROW((void)binary_value(p, 0.5, 2.0));
    } else {
      EXPECT_THROW((void)binary_value(p, 0.5, 2.0), ConfigError);
    }
  }
  EXPECT_EQ(unary_value(prim_t::none, 0.5), 0.5);
}

}  // namespace
}  // namespace weft::tensor::test
