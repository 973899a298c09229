// Every unary primitive with a transposed output (in0 and out contiguous along different dims, as
// in issue 25 item 6: dims (c, c), in0 strides (1, rows), out strides (cols, 1)) through the seed
// interface, setup and setup_optimized, fp32 and fp64, against a plain loop; the TPP's transposing
// form runs, never the portable loop. ctest runs this suite on the host's ISA and with
// WEFT_ISA=avx2.
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "guarded_buffer.hpp"
#include "tensor_test_support.hpp"
#include "weft/tensor/reference.hpp"
#include "weft/tensor/tensor_operation.hpp"

namespace weft::tensor::test {
namespace {

using einsum::backend::TensorOperation;

// The unary primitives the seed interface offers in `dtype` (fp64 has no transcendentals).
std::vector<prim_t> unary_prims(dtype_t dtype) {
  std::vector<prim_t> prims;
  for (std::uint32_t v = 0; v <= 100; ++v) {
    const auto p = static_cast<prim_t>(v);
    const bool transcendental =
        p == prim_t::sigmoid || p == prim_t::exp || p == prim_t::tanh || p == prim_t::gelu;
    if (is_unary(p) && !(dtype == dtype_t::fp64 && transcendental)) prims.push_back(p);
  }
  return prims;
}

enum class SetupCall { prims, optimized_prims, optimized_seq };

std::string to_string(SetupCall s) {
  switch (s) {
    case SetupCall::prims: return "setup, exec (prim, prim)";
    case SetupCall::optimized_prims: return "setup_optimized, exec (prim, prim)";
    case SetupCall::optimized_seq: return "setup_optimized, exec (seq, seq)";
  }
  return "?";
}

// out(i, j) = main(in0(i, j)) for i < rows, j < cols: in0 column-major (i contiguous), out
// row-major (j contiguous). `in0_row_stride` 0 broadcasts in0 along j.
struct Transposed {
  std::int64_t rows, cols;
  std::int64_t in0_row_stride;  // stride of j in in0: rows, or 0
};

TensorOperation::error_t set_up(TensorOperation& top, SetupCall how, dtype_t dtype, prim_t main,
                                const Transposed& t) {
  const std::array dims{dim_t::c, dim_t::c};
  const exec_t e = how == SetupCall::optimized_seq ? exec_t::seq : exec_t::prim;
  const std::array exec{e, e};
  const std::array<std::int64_t, 2> sizes{t.rows, t.cols}, in0{1, t.in0_row_stride}, in1{0, 0},
      out{t.cols, 1};
  return how == SetupCall::prims
             ? top.setup(dtype, prim_t::none, main, prim_t::none, dims, exec, sizes, in0, in1, out)
             : top.setup_optimized(dtype, prim_t::none, main, prim_t::none, dims, exec, sizes, in0,
                                   in1, out);
}

// Values every primitive is defined on and computes differently: both signs (positive, away from
// 0, for sqrt and reciprocal).
template <class T>
std::vector<T> inputs(prim_t main, std::size_t n, std::uint32_t seed) {
  std::vector<double> v = random_doubles(n, seed);
  std::vector<T> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    const bool positive = main == prim_t::sqrt || main == prim_t::reciprocal;
    x[i] = static_cast<T>(positive ? std::fabs(v[i]) + 0.25 : 4.0 * v[i]);
  }
  return x;
}

// Sets up, runs and compares with a plain loop; returns describe(). fp64 bit for bit (every op is
// one correctly rounded double operation); fp32 within the TPPs' accuracy (docs/tpp_eltwise.md).
// in0 and out end at guard pages: an access past either faults.
template <class T>
std::string run_and_check(SetupCall how, dtype_t dtype, prim_t main, const Transposed& t) {
  TensorOperation top;
  const auto error = set_up(top, how, dtype, main, t);
  EXPECT_EQ(error, error_t::success) << top.error_message();
  if (error != error_t::success) return {};
  const std::size_t in_size = static_cast<std::size_t>(
      t.in0_row_stride == 0 ? t.rows : t.rows * t.cols);
  weft::test::GuardedBuffer<T> in0(in_size), out(static_cast<std::size_t>(t.rows * t.cols));
  std::ranges::copy(inputs<T>(main, in0.size(), 7), in0.begin());
  std::ranges::copy(inputs<T>(prim_t::copy, out.size(), 8), out.begin());
  top.execute(in0.data(), nullptr, out.data());
  std::size_t bad = 0;
  for (std::int64_t i = 0; i < t.rows; ++i)
    for (std::int64_t j = 0; j < t.cols && bad < 5; ++j) {
      const T x = in0[static_cast<std::size_t>(i + j * t.in0_row_stride)];
      const T want = static_cast<T>(unary_value(main, x));
      const T got = out[static_cast<std::size_t>(i * t.cols + j)];
      const double tol = sizeof(T) == 8 ? 0.0 : 1e-6 * (1.0 + std::fabs(want));
      if (!(std::fabs(static_cast<double>(got) - want) <= tol)) {
        ADD_FAILURE() << "out(" << i << ", " << j << ") = " << got << ", want " << want
                      << " (in0 " << x << ")";
        ++bad;
      }
    }
  return top.describe();
}

// The TPP op main runs as: copy is the transpose kernel, zero stores and reads nothing.
std::string tpp_name(prim_t main) {
  return main == prim_t::copy ? "transpose" : weft::tensor::to_string(main);
}

void check_every_primitive(dtype_t dtype, const Transposed& t) {
  for (SetupCall how : {SetupCall::prims, SetupCall::optimized_prims, SetupCall::optimized_seq})
    for (prim_t main : unary_prims(dtype)) {
      SCOPED_TRACE(to_string(how) + ", " + to_string(dtype) + " " + to_string(main) + ", " +
                   std::to_string(t.rows) + " x " + std::to_string(t.cols));
      const std::string described = dtype == dtype_t::fp64 ? run_and_check<double>(how, dtype, main, t)
                                                           : run_and_check<float>(how, dtype, main, t);
      if (described.empty()) continue;
      EXPECT_EQ(described.find("portable"), std::string::npos) << described;
      // A block of one row or one column is contiguous in both: the plain kernel takes it.
      const bool transposes = main != prim_t::zero && t.rows > 1 && t.cols > 1;
      const std::string name = transposes ? tpp_name(main) : weft::tensor::to_string(main);
      EXPECT_NE(described.find("main: " + name + "_m"), std::string::npos) << described;
      if (transposes && main != prim_t::copy) {
        EXPECT_NE(described.find("_transposed"), std::string::npos) << described;
      }
    }
}

// The issue's example, as the course's tests run it: refused with err_invalid_strides before.
TEST(TransposedUnary, ReluOfTheIssue) {
  for (SetupCall how : {SetupCall::prims, SetupCall::optimized_prims}) {
    SCOPED_TRACE(to_string(how));
    const std::string described =
        run_and_check<float>(how, dtype_t::fp32, prim_t::relu, Transposed{64, 64, 64});
    EXPECT_NE(described.find("main: relu_m64_n64_lda64_ldb64_transposed"), std::string::npos)
        << described;
  }
}

TEST(TransposedUnary, EveryPrimitiveFp32) {
  for (const Transposed& t : {Transposed{64, 64, 64}, Transposed{17, 40, 17}, Transposed{40, 17, 40},
                              Transposed{1, 33, 1}, Transposed{33, 1, 33}, Transposed{512, 384, 512}})
    check_every_primitive(dtype_t::fp32, t);
}

TEST(TransposedUnary, EveryPrimitiveFp64) {
  for (const Transposed& t : {Transposed{64, 64, 64}, Transposed{17, 40, 17}, Transposed{40, 17, 40},
                              Transposed{1, 33, 1}, Transposed{33, 1, 33}, Transposed{512, 384, 512}})
    check_every_primitive(dtype_t::fp64, t);
}

// in0 of stride 0 along the output's contiguous dim: each output row repeats one input column.
TEST(TransposedUnary, BroadcastInput) {
  for (dtype_t dtype : {dtype_t::fp32, dtype_t::fp64}) check_every_primitive(dtype, Transposed{17, 40, 0});
}

// The touches act in place on the output block, whatever the main read: each unary touch around
// a transposed main, in an outer loop shared by 1 and 2 threads.
TEST(TransposedUnary, TouchesAroundATransposedMain) {
  const exec_t p = exec_t::prim;
  for (prim_t main : {prim_t::relu, prim_t::exp, prim_t::sigmoid})
    for (prim_t touch : unary_prims(dtype_t::fp32)) {
      // relu leaves zeros, and 1 / 0, sqrt(-0) are no values to compare.
      if (main == prim_t::relu && (touch == prim_t::reciprocal || touch == prim_t::sqrt)) continue;
      Contraction op;
      op.main = main;
      op.first_touch = touch;
      op.last_touch = touch;
      op.dims = {Dim{dim_t::c, exec_t::shared, 3, 17 * 40, 0, 17 * 40}, Dim{dim_t::c, p, 17, 1, 0, 40},
                 Dim{dim_t::c, p, 40, 17, 0, 1}};
      SCOPED_TRACE(op.describe());
      for (int threads : {1, 2}) {
        omp_set_num_threads(threads);
        TensorOperation top;
        ASSERT_EQ(top.setup(op, {}), error_t::success) << top.error_message();
        const std::string described = top.describe();
        EXPECT_NE(described.find("_transposed"), std::string::npos) << described;
        EXPECT_NE(described.find("last touch: " + to_string(touch) + "_m"), std::string::npos) << described;
        EXPECT_EQ(described.find("portable"), std::string::npos) << described;
        const Tensors t = make_tensors(op, 11);
        std::vector<float> out = t.out;
        top.execute(t.in0.data(), nullptr, out.data());
        expect_matches_reference(op, t, out);
      }
    }
  omp_set_num_threads(2);
}

// A block of one column whose in0 is strided along the rows: the transposing TPP of a 1 x rows A,
// with B's leading dimension (never stepped over) one the TPP accepts whatever the size-1 dim's
// stride in out is (that stride made a transposing copy fail with err_invalid_main_configuration).
TEST(TransposedUnary, OneColumnOfAStridedInput) {
  const exec_t p = exec_t::prim;
  for (prim_t main : {prim_t::copy, prim_t::relu, prim_t::exp}) {
    Contraction op;
    op.main = main;
    op.dims = {Dim{dim_t::c, p, 33, 5, 0, 1}, Dim{dim_t::c, p, 1, 1, 0, 1}};
    SCOPED_TRACE(op.describe());
    TensorOperation top;
    ASSERT_EQ(top.setup(op, {}), error_t::success) << top.error_message();
    EXPECT_EQ(top.describe().find("portable"), std::string::npos) << top.describe();
    const Tensors t = make_tensors(op, 13);
    std::vector<float> out = t.out;
    top.execute(t.in0.data(), nullptr, out.data());
    expect_matches_reference(op, t, out);
  }
}

// What still has no TPP is refused with the reason, never run by the portable loop silently.
TEST(TransposedUnary, RefusedWithTheReason) {
  TensorOperation top;
  const std::array dims{dim_t::c, dim_t::c};
  const std::array exec{exec_t::prim, exec_t::prim};
  const std::array<std::int64_t, 2> sizes{64, 64}, in1{0, 0}, out{64, 1};
  // fp64 has no transcendental kernels, transposed or not.
  const std::array<std::int64_t, 2> in0{1, 64};
  EXPECT_EQ(top.setup(dtype_t::fp64, prim_t::none, prim_t::exp, prim_t::none, dims, exec, sizes, in0, in1, out),
            error_t::err_wrong_main_primitive);
  // in0 contiguous along neither dim.
  const std::array<std::int64_t, 2> strided{2, 128};
  EXPECT_EQ(top.setup(dtype_t::fp32, prim_t::none, prim_t::relu, prim_t::none, dims, exec, sizes, strided, in1, out),
            error_t::err_invalid_strides);
  EXPECT_NE(top.error_message().find("a transposed output"), std::string::npos) << top.error_message();
}

}  // namespace
}  // namespace weft::tensor::test
