// mini_jit::Unary in fp64: the kernels of weft's f64 unary TPPs behind the seed's kernel_t (zero,
// identity and relu, each also transposed), bit for bit against plain double loops, with padded
// leading dimensions whose gaps must stay untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "weft/tpp/mini_jit_unary.hpp"

namespace {

using mini_jit::Unary;

constexpr double kGap = -1234.5;  // what the padding rows hold before and after every call

std::vector<double> random_doubles(std::size_t n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = dist(gen);
  return v;
}

// What the kernel of `ptype` makes of x: relu as the TPPs define it (x > 0 or NaN stays, everything
// else, -0 included, is +0).
double expected(Unary::ptype_t ptype, double x) {
  if (ptype == Unary::ptype_t::zero) return 0.0;
  if (ptype == Unary::ptype_t::identity) return x;
  return x > 0.0 || std::isnan(x) ? x : 0.0;
}

// got == want, bit for bit but for NaN payloads (the element at row i, column j of the output).
void expect_same(double got, double want, std::int64_t i, std::int64_t j) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << i << ", " << j;
  } else {
    EXPECT_EQ(got, want) << i << ", " << j;
    EXPECT_EQ(std::signbit(got), std::signbit(want)) << i << ", " << j;
  }
}

TEST(MiniJitUnaryFp64, ZeroIdentityReluMatchDoubleLoops) {
  // m = 13: one AVX-512 vector of 8 doubles and a tail of 5 (three AVX2 vectors and a tail of 1).
  const std::int64_t m = 13, n = 7, lda = 16, ldb = 15;
  std::vector<double> a = random_doubles(static_cast<std::size_t>(lda * n), 1);
  a[3] = -0.0;
  a[4] = std::numeric_limits<double>::quiet_NaN();
  a[5] = std::numeric_limits<double>::denorm_min();  // a double denormal: no flush to zero
  a[6] = -std::numeric_limits<double>::denorm_min();
  for (Unary::ptype_t ptype : {Unary::ptype_t::zero, Unary::ptype_t::identity, Unary::ptype_t::relu}) {
    SCOPED_TRACE(static_cast<int>(ptype));
    Unary u;
    ASSERT_EQ(u.generate(m, n, 0, Unary::dtype_t::fp64, ptype), Unary::error_t::success) << u.error_message();
    std::vector<double> b(static_cast<std::size_t>(ldb * n), kGap);
    u.get_kernel()(ptype == Unary::ptype_t::zero ? nullptr : a.data(), b.data(), lda, ldb);
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t i = 0; i < ldb; ++i) {
        const double got = b[static_cast<std::size_t>(i + j * ldb)];
        if (i >= m) {
          EXPECT_EQ(got, kGap) << "gap row " << i << " of column " << j;
          continue;
        }
        expect_same(got, expected(ptype, a[static_cast<std::size_t>(i + j * lda)]), i, j);
      }
    }
  }
}

TEST(MiniJitUnaryFp64, ZeroTransposedIsAZeroNByMMatrix) {
  const std::int64_t m = 5, n = 9, ldbt = 11;
  Unary u;
  ASSERT_EQ(u.generate(m, n, 1, Unary::dtype_t::fp64, Unary::ptype_t::zero), Unary::error_t::success) << u.error_message();
  std::vector<double> bt(static_cast<std::size_t>(ldbt * m), kGap);
  u.get_kernel()(nullptr, bt.data(), 0, ldbt);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < ldbt; ++j) EXPECT_EQ(bt[static_cast<std::size_t>(j + i * ldbt)], j < n ? 0.0 : kGap);
}

// The same shape in fp32 and fp64 are two kernels: the fp64 one must not be the cached fp32 one.
TEST(MiniJitUnaryFp64, Fp32AndFp64KernelsOfOneShapeAreDistinct) {
  Unary u32, u64;
  ASSERT_EQ(u32.generate(8, 3, 0, Unary::dtype_t::fp32, Unary::ptype_t::identity), Unary::error_t::success);
  ASSERT_EQ(u64.generate(8, 3, 0, Unary::dtype_t::fp64, Unary::ptype_t::identity), Unary::error_t::success);
  EXPECT_NE(u32.get_kernel(), u64.get_kernel());
  const std::vector<double> a = random_doubles(24, 2);
  std::vector<double> b(24, kGap);
  u64.get_kernel()(a.data(), b.data(), 8, 8);
  EXPECT_EQ(a, b);
}

// identity and relu with trans_b = 1: B = op(A)^T, n x m with ld_b >= n, the gap columns untouched.
TEST(MiniJitUnaryFp64, TransposingKernelsMatchDoubleLoops) {
  const std::int64_t m = 7, n = 6, lda = 9, ldbt = 8;
  std::vector<double> a = random_doubles(static_cast<std::size_t>(lda * n), 3);
  a[2] = -0.0;
  a[10] = std::numeric_limits<double>::quiet_NaN();
  a[11] = -std::numeric_limits<double>::denorm_min();
  for (Unary::ptype_t ptype : {Unary::ptype_t::identity, Unary::ptype_t::relu}) {
    SCOPED_TRACE(static_cast<int>(ptype));
    Unary u;
    ASSERT_EQ(u.generate(m, n, 1, Unary::dtype_t::fp64, ptype), Unary::error_t::success) << u.error_message();
    std::vector<double> bt(static_cast<std::size_t>(ldbt * m), kGap);
    u.get_kernel()(a.data(), bt.data(), lda, ldbt);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < ldbt; ++j) {
        const double got = bt[static_cast<std::size_t>(j + i * ldbt)];
        if (j >= n) {
          EXPECT_EQ(got, kGap) << "gap " << j << " of row " << i;
          continue;
        }
        expect_same(got, expected(ptype, a[static_cast<std::size_t>(i + j * lda)]), i, j);
      }
  }
}

}  // namespace
