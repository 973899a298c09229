// The one rule of min, max and ReLU (docs/tpp_eltwise.md, "NaN and signed zeros") in the tensor
// layer, on every path a contraction may take: the reference contraction (and its scalar
// binary_value / unary_value), the TPP kernels, the portable kernels (layouts no TPP takes, with
// allow_generic_primitives), the fused BRGEMM ReLU and the portable strided GEMM's ReLU, the ReLU
// touch in place; fp32 and fp64. A min / max contraction's NaN and zero results no longer depend on
// which kernel ran. The expected values come from the rule, computed here.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "weft/tensor/contraction.hpp"
#include "weft/tensor/reference.hpp"
#include "weft/tensor/tensor_operation.hpp"

namespace weft::tensor {
namespace {

using einsum::backend::TensorOperation;

const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
const std::vector<double> kSpecials = {kNan, -kNan, 0.0, -0.0, kInf, -kInf, 1.0, -1.0, 2.5};

double maximum(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNan;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
double minimum(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNan;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
double relu(double x) { return std::isnan(x) || x > 0 ? x : 0.0; }

std::string show(double x) { return std::to_string(x); }  // "-0.000000" for -0

// Empty when got is what the rule wants (NaN for NaN; the same number, the sign of a zero included).
std::string mismatch(double want, double got) {
  if (std::isnan(want)) return std::isnan(got) ? "" : "want NaN, got " + show(got);
  if (want == got && std::signbit(want) == std::signbit(got)) return "";
  return "want " + show(want) + ", got " + show(got);
}

TEST(TensorNanRule, ReferenceScalars) {
  for (double x : kSpecials) {
    for (double y : kSpecials) {
      EXPECT_EQ(mismatch(maximum(x, y), binary_value(prim_t::max, x, y)), "") << "max(" << show(x) << ", " << show(y) << ")";
      EXPECT_EQ(mismatch(minimum(x, y), binary_value(prim_t::min, x, y)), "") << "min(" << show(x) << ", " << show(y) << ")";
    }
    EXPECT_EQ(mismatch(relu(x), unary_value(prim_t::relu, x)), "") << "relu(" << show(x) << ")";
  }
}

template <class T>
constexpr dtype_t dtype_of() {
  return sizeof(T) == sizeof(double) ? dtype_t::fp64 : dtype_t::fp32;
}

// Runs `op` through TensorOperation and through the reference; checks both against want(e) at every
// output element e (listed in `outputs`), and that TensorOperation took the path `path` names
// ("portable" in its description, or not).
template <class T, class Want>
void check(const Contraction& op, const std::vector<T>& in0, const std::vector<T>& in1, const std::vector<T>& out0,
           const std::vector<std::size_t>& outputs, bool portable, Want want) {
  SCOPED_TRACE(op.describe());
  TensorOperation top;
  ASSERT_EQ(top.setup(op, {.allow_generic_primitives = portable}), error_t::success) << top.error_message();
  EXPECT_EQ(top.describe().find("portable") != std::string::npos, portable) << top.describe();
  std::vector<T> got = out0, ref = out0;
  top.execute(in0.data(), in1.empty() ? nullptr : in1.data(), got.data());
  reference_contraction(op, in0.data(), in1.empty() ? nullptr : in1.data(), ref.data());
  for (std::size_t e : outputs) {
    EXPECT_EQ(mismatch(want(e), got[e]), "") << "kernel, output " << e << " (" << want.describe(e) << ")";
    EXPECT_EQ(mismatch(want(e), ref[e]), "") << "reference, output " << e << " (" << want.describe(e) << ")";
  }
}

template <class T>
class TensorNanRuleTyped : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(TensorNanRuleTyped, Types);

// out(i, j) = in0 op in1 over every ordered pair of specials, on the TPP (unit-stride rows) and on
// the portable loop (in0's rows two elements apart).
TYPED_TEST(TensorNanRuleTyped, BinaryMinMax) {
  using T = TypeParam;
  const std::int64_t s = static_cast<std::int64_t>(kSpecials.size()), rows = s, cols = s;
  for (prim_t main : {prim_t::min, prim_t::max})
    for (bool portable : {false, true}) {
      const std::int64_t row_stride0 = portable ? 2 : 1;
      Contraction op;
      op.dtype = dtype_of<T>();
      op.main = main;
      op.dims = {Dim{dim_t::c, exec_t::prim, rows, row_stride0, 1, 1},
                 Dim{dim_t::c, exec_t::prim, cols, row_stride0 * rows, rows, rows}};
      std::vector<T> in0(static_cast<std::size_t>(row_stride0 * rows * cols)), in1(static_cast<std::size_t>(rows * cols)),
          out(static_cast<std::size_t>(rows * cols), T(7));
      std::vector<std::size_t> outputs;
      for (std::int64_t j = 0; j < cols; ++j)
        for (std::int64_t i = 0; i < rows; ++i) {
          in0[static_cast<std::size_t>(i * row_stride0 + j * row_stride0 * rows)] = static_cast<T>(kSpecials[static_cast<std::size_t>(i)]);
          in1[static_cast<std::size_t>(i + j * rows)] = static_cast<T>(kSpecials[static_cast<std::size_t>(j)]);
          outputs.push_back(static_cast<std::size_t>(i + j * rows));
        }
      struct {
        prim_t main;
        std::int64_t rows;
        double operator()(std::size_t e) const {
          const double x = kSpecials[e % static_cast<std::size_t>(rows)], y = kSpecials[e / static_cast<std::size_t>(rows)];
          return main == prim_t::max ? maximum(x, y) : minimum(x, y);
        }
        std::string describe(std::size_t e) const {
          return to_string(main) + "(" + show(kSpecials[e % static_cast<std::size_t>(rows)]) + ", " +
                 show(kSpecials[e / static_cast<std::size_t>(rows)]) + ")";
        }
      } want{main, rows};
      check<T>(op, in0, in1, out, outputs, portable, want);
    }
}

struct ReluOfSpecials {
  std::vector<std::size_t> index;  // output element -> special
  double operator()(std::size_t e) const { return relu(kSpecials[index[e]]); }
  std::string describe(std::size_t e) const { return "relu(" + show(kSpecials[index[e]]) + ")"; }
};

// relu as the main primitive: the unary TPP, and the portable loop (in0's rows strided).
TYPED_TEST(TensorNanRuleTyped, ReluMain) {
  using T = TypeParam;
  const std::int64_t rows = static_cast<std::int64_t>(kSpecials.size()), cols = 3;
  for (bool portable : {false, true}) {
    const std::int64_t row_stride0 = portable ? 2 : 1;
    Contraction op;
    op.dtype = dtype_of<T>();
    op.main = prim_t::relu;
    op.dims = {Dim{dim_t::c, exec_t::prim, rows, row_stride0, 0, 1}, Dim{dim_t::c, exec_t::prim, cols, row_stride0 * rows, 0, rows}};
    std::vector<T> in0(static_cast<std::size_t>(row_stride0 * rows * cols)), out(static_cast<std::size_t>(rows * cols), T(7));
    ReluOfSpecials want;
    std::vector<std::size_t> outputs;
    for (std::int64_t j = 0; j < cols; ++j)
      for (std::int64_t i = 0; i < rows; ++i) {
        const std::size_t special = static_cast<std::size_t>((i + j) % rows);
        in0[static_cast<std::size_t>(i * row_stride0 + j * row_stride0 * rows)] = static_cast<T>(kSpecials[special]);
        want.index.push_back(special);
        outputs.push_back(static_cast<std::size_t>(i + j * rows));
      }
    check<T>(op, in0, {}, out, outputs, portable, want);
  }
}

// out = relu(out + A * B) with A = -0 and B = 1 (so that the sum is out's special itself, -0
// included) as the last touch: fused into BRGEMM, or the portable strided GEMM's (C transposed);
// and relu as the first touch (out = relu(out), then + A * B = -0): the unary TPP in place, or the
// portable touch.
TYPED_TEST(TensorNanRuleTyped, ReluTouchesOfGemm) {
  using T = TypeParam;
  const std::int64_t m = static_cast<std::int64_t>(kSpecials.size()), n = 3, k = 1;
  for (bool last : {true, false})
    for (bool portable : {false, true}) {
      Contraction op;
      op.dtype = dtype_of<T>();
      op.main = prim_t::gemm;
      (last ? op.last_touch : op.first_touch) = prim_t::relu;
      // C column-major (BRGEMM), or transposed (no BRGEMM layout: the portable kernels).
      const std::int64_t c_m = portable ? n : 1, c_n = portable ? 1 : m;
      op.dims = {Dim{dim_t::m, exec_t::prim, m, 1, 0, c_m}, Dim{dim_t::n, exec_t::prim, n, 0, k, c_n},
                 Dim{dim_t::k, exec_t::prim, k, m, 1, 0}};
      std::vector<T> a(static_cast<std::size_t>(m * k), T(-0.0)), b(static_cast<std::size_t>(k * n), T(1)),
          out(static_cast<std::size_t>(m * n));
      ReluOfSpecials want;
      want.index.resize(out.size());
      std::vector<std::size_t> outputs;
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < m; ++i) {
          const std::size_t e = static_cast<std::size_t>(i * c_m + j * c_n);
          const std::size_t special = static_cast<std::size_t>((i + j) % m);
          out[e] = static_cast<T>(kSpecials[special]);
          want.index[e] = special;
          outputs.push_back(e);
        }
      check<T>(op, a, b, out, outputs, portable, want);
    }
}

}  // namespace
}  // namespace weft::tensor
