// The seed documents' interface: mini_jit::Brgemm::generate + kernel_t with per-call leading
// dimensions and element strides, C += sum_i A_i * B_i.
#include "weft/tpp/mini_jit_brgemm.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "weft/jit/error.hpp"
#include "weft/tpp/brgemm.hpp"

namespace {

using mini_jit::Brgemm;

TEST(MiniJitBrgemm, MatchesTheReferenceForSeveralLeadingDimensions) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto [m, n, k, br] : std::vector<std::array<std::uint32_t, 4>>{{32, 32, 32, 8}, {7, 13, 5, 3}, {1, 1, 1, 1}, {45, 9, 64, 2}}) {
    Brgemm gen;
    ASSERT_EQ(gen.generate(m, n, k, br, 0, 0, 0, Brgemm::dtype_t::fp32), Brgemm::error_t::success) << gen.error_message();
    const Brgemm::kernel_t kernel = gen.get_kernel();
    // The same kernel_t called with tight and with padded leading dimensions, alternately.
    for (int pad : {0, 3, 0, 3}) {
      const std::int64_t lda = m + pad, ldb = k + pad, ldc = m + 2 * pad;
      const std::int64_t sa = lda * k + 1, sb = ldb * n + 2;
      std::vector<float> a(static_cast<std::size_t>(sa * br)), b(static_cast<std::size_t>(sb * br)),
          c(static_cast<std::size_t>(ldc * n));
      for (float& x : a) x = u(rng);
      for (float& x : b) x = u(rng);
      for (float& x : c) x = u(rng);
      std::vector<float> expected = c;
      const weft::tpp::BrgemmDesc d{.m = static_cast<int>(m), .n = static_cast<int>(n), .k = static_cast<int>(k),
                                    .lda = lda, .ldb = ldb, .ldc = ldc, .beta = 1};
      weft::tpp::brgemm_reference(d, {.a = a.data(), .b = b.data(), .c = expected.data(), .count = br,
                                      .stride_a = sa, .stride_b = sb});
      kernel(a.data(), b.data(), c.data(), lda, ldb, ldc, sa, sb);
      EXPECT_EQ(c, expected) << "m=" << m << " n=" << n << " k=" << k << " pad=" << pad;
    }
  }
}

// fp64 against a long double sum of the same terms: the kernel's fused multiply-adds in double
// stay within k * br rounding errors of it.
TEST(MiniJitBrgemm, Fp64MatchesALongDoubleReference) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto [m, n, k, br] : std::vector<std::array<std::uint32_t, 4>>{{32, 32, 32, 8}, {7, 13, 5, 3}, {1, 1, 1, 1}, {45, 9, 64, 2}}) {
    Brgemm gen;
    ASSERT_EQ(gen.generate(m, n, k, br, 0, 0, 0, Brgemm::dtype_t::fp64), Brgemm::error_t::success) << gen.error_message();
    for (int pad : {0, 3}) {
      const std::int64_t lda = m + pad, ldb = k + pad, ldc = m + 2 * pad;
      const std::int64_t sa = lda * k + 1, sb = ldb * n + 2;
      std::vector<double> a(static_cast<std::size_t>(sa * br)), b(static_cast<std::size_t>(sb * br)),
          c(static_cast<std::size_t>(ldc * n));
      for (double& x : a) x = u(rng);
      for (double& x : b) x = u(rng);
      for (double& x : c) x = u(rng);
      std::vector<long double> exact(c.begin(), c.end());
      std::vector<long double> magnitude(c.size());
      for (std::size_t i = 0; i < c.size(); ++i) magnitude[i] = std::fabs(exact[i]);
      for (std::int64_t r = 0; r < br; ++r)
        for (std::int64_t j = 0; j < n; ++j)
          for (std::int64_t p = 0; p < k; ++p)
            for (std::int64_t i = 0; i < m; ++i) {
              const long double t = static_cast<long double>(a[static_cast<std::size_t>(r * sa + i + p * lda)]) *
                                    b[static_cast<std::size_t>(r * sb + p + j * ldb)];
              exact[static_cast<std::size_t>(i + j * ldc)] += t;
              magnitude[static_cast<std::size_t>(i + j * ldc)] += std::fabs(t);
            }
      gen.get_kernel()(a.data(), b.data(), c.data(), lda, ldb, ldc, sa, sb);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < ldc; ++i) {
          const auto at = static_cast<std::size_t>(i + j * ldc);
          const long double bound = std::ldexp(static_cast<long double>(k * br + 1), -53) * magnitude[at];
          EXPECT_LE(std::fabs(c[at] - exact[at]), bound) << "m=" << m << " k=" << k << " C(" << i << "," << j << ")";
        }
    }
  }
}

TEST(MiniJitBrgemm, UnsupportedRequestsReportErrors) {
  Brgemm gen;
  EXPECT_EQ(gen.generate(4, 4, 4, 1, 1, 0, 0, Brgemm::dtype_t::fp64), Brgemm::error_t::unsupported);
  EXPECT_THROW(gen.get_kernel(), weft::Error);
  EXPECT_EQ(gen.generate(4, 4, 4, 1, 1, 0, 0, Brgemm::dtype_t::fp32), Brgemm::error_t::unsupported);
  EXPECT_EQ(gen.generate(4, 4, 4, 1, 0, 0, 1, Brgemm::dtype_t::fp32), Brgemm::error_t::unsupported);
  EXPECT_EQ(gen.generate(4, 4, 4, 1, 0, 2, 0, Brgemm::dtype_t::fp32), Brgemm::error_t::bad_param);
  EXPECT_EQ(gen.generate(0, 4, 4, 1, 0, 0, 0, Brgemm::dtype_t::fp32), Brgemm::error_t::bad_param);
  EXPECT_EQ(gen.generate(4, 4, 4, 1, 0, 0, 0, static_cast<Brgemm::dtype_t>(7)), Brgemm::error_t::bad_param);
  EXPECT_EQ(gen.generate(4, 4, 4, 1, 0, 0, 0, Brgemm::dtype_t::fp32), Brgemm::error_t::success);
  EXPECT_TRUE(gen.error_message().empty());
  EXPECT_NE(gen.get_kernel(), nullptr);
}

// kernel_t used to print and abort: now the call throws, names the argument, and the kernel stays
// usable afterwards.
TEST(MiniJitBrgemm, InvalidCallsThrowNamingTheArgument) {
  Brgemm gen;
  ASSERT_EQ(gen.generate(8, 2, 2, 1, 0, 0, 0, Brgemm::dtype_t::fp32), Brgemm::error_t::success);
  const Brgemm::kernel_t kernel = gen.get_kernel();
  std::vector<float> x(64, 1.0f), c(16, 0.0f);
  struct Case {
    const void *a, *b;
    void* c;
    std::int64_t ld_a, ld_b, ld_c;
    const char* says;
  };
  const Case cases[] = {
      {x.data(), x.data(), c.data(), 4, 2, 8, "ld_a is 4, must be in [m = 8"},
      {x.data(), x.data(), c.data(), 0, 2, 8, "ld_a is 0"},
      {x.data(), x.data(), c.data(), 8, 1, 8, "ld_b is 1, must be in [k = 2"},
      {x.data(), x.data(), c.data(), 8, 2, -8, "ld_c is -8"},
      {x.data(), x.data(), c.data(), std::int64_t{1} << 40, 2, 8, "ld_a is 1099511627776"},
      {nullptr, x.data(), c.data(), 8, 2, 8, "a is null"},
      {x.data(), nullptr, c.data(), 8, 2, 8, "b is null"},
      {x.data(), x.data(), nullptr, 8, 2, 8, "c is null"},
  };
  for (const Case& k : cases) {
    try {
      kernel(k.a, k.b, k.c, k.ld_a, k.ld_b, k.ld_c, 0, 0);
      ADD_FAILURE() << "no error: " << k.says;
    } catch (const weft::Error& e) {
      EXPECT_NE(std::string(e.what()).find(k.says), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("mini_jit::Brgemm kernel_t (m=8 n=2 k=2"), std::string::npos) << e.what();
    }
  }
  kernel(x.data(), x.data(), c.data(), 8, 2, 8, 0, 0);  // C += A * B, all ones: 2 per element
  for (std::size_t i = 0; i < 16; ++i) EXPECT_EQ(c[i], 2.0f) << i;
}

}  // namespace
