// BrgemmDesc::b_transposed (B_i(p, j) = b_i[p * ldb + j]): the kernels against brgemm_reference on
// each instruction set, against the plain kernel on an explicitly transposed copy of B (so that a
// flag ignored by kernel and reference alike fails too), and the descriptor's identity, validation
// and plan.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "host_isas.hpp"

#include "brgemm_check.hpp"
#include "emitters.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/jit/error.hpp"
#include "weft/tpp/brgemm.hpp"

namespace {

using weft::jit::Isa;
using weft::test::Flush;
using namespace weft::tpp;
using namespace weft::test::brgemm;

struct Shape {
  int m, n, k;
};

// Tails in m (partial vectors on both ISAs, m = 1), remainders in n, k = 1, 3 and odd k, and the
// convolution weight-gradient shapes (bk x bc tiles summed over the pixels of a row).
constexpr Shape kShapes[] = {{1, 1, 1},   {1, 13, 19}, {5, 7, 3},   {8, 1, 56},   {13, 3, 1},  {16, 2, 23},
                             {29, 13, 35}, {37, 11, 19}, {71, 5, 7}, {20, 27, 45}, {32, 32, 28}, {64, 64, 56}};

void every_batch_kind_beta_and_epilogue(Isa isa) {
  if (!weft::jit::can_run(isa, weft::jit::cpu_features())) GTEST_SKIP() << "needs " << weft::jit::to_string(isa);
  std::uint32_t seed = 6000;
  for (Shape sh : kShapes)
    for (int batch = 0; batch < 3; ++batch)
      for (int beta = 0; beta < 2; ++beta) {
        Case c;
        c.desc = {.m = sh.m, .n = sh.n, .k = sh.k, .lda = sh.m + (seed % 3 == 0 ? 2 : 0),
                  .ldb = sh.n + (seed % 2 == 1 ? 3 : 0), .ldc = sh.m + static_cast<int>(seed % 2), .beta = beta,
                  .batch = static_cast<BrgemmBatch>(batch), .bias = static_cast<BrgemmBias>(seed % 3),
                  .activation = static_cast<BrgemmActivation>((seed / 3) % 3), .unary = kElementwise[seed % 12],
                  .b_transposed = true};
        if (c.desc.activation == BrgemmActivation::unary && c.desc.unary >= UnaryOp::increment) c.desc.unary_alpha = 0.5f;
        c.count = 1 + seed % 4;
        c.flush = seed % 5 < 2 ? Flush::front : Flush::back;
        c.seed = seed++;
        check_on(c, isa);
        if (::testing::Test::HasFatalFailure()) return;
      }
}

TEST(BrgemmTransposedB, Avx2EveryBatchKindBetaAndEpilogue) { every_batch_kind_beta_and_epilogue(Isa::avx2); }
TEST(BrgemmTransposedB, Avx512EveryBatchKindBetaAndEpilogue) { every_batch_kind_beta_and_epilogue(Isa::avx512); }

// Plans of other shapes than the plan's own: k loops with and without a remainder, the AVX2 m tail's
// piecewise last k step, partial sums, B broadcasts kept in registers or not.
TEST(BrgemmTransposedB, AlternativePlans) {
  if (!runs_avx2()) GTEST_SKIP() << "needs AVX2";
  std::uint32_t seed = 7000;
  for (int m : {8, 29, 64})
    for (int n : {3, 13})
      for (int vectors : {1, 2, 4})
        for (int k_unroll : {1, 4, 16})
          for (int split : {1, 2}) {
            Case c;
            c.desc = {.m = m, .n = n, .k = 35, .lda = m, .ldb = n + 1, .ldc = m, .beta = 1, .b_transposed = true};
            c.count = 2;
            c.options = {.panel_vectors = vectors, .max_cols = 0, .k_unroll = k_unroll, .k_split = split};
            c.custom_plan = true;
            c.seed = seed++;
            check(c);
          }
}

// The transposed kernel on B^T gives the plain kernel's bits on B (the same tiles, the same order).
TEST(BrgemmTransposedB, EqualsThePlainKernelOnATransposedCopy) {
  if (!runs_generated_code()) GTEST_SKIP() << "no ISA of this build runs here";
  std::mt19937 rng(77);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (Isa isa : weft::test::runnable_isas())
    for (Shape sh : {Shape{3, 5, 7}, Shape{17, 9, 1}, Shape{40, 13, 33}, Shape{64, 64, 56}}) {
      SCOPED_TRACE(std::string(weft::jit::to_string(isa)) + " " + std::to_string(sh.m) + "x" + std::to_string(sh.n) +
                   "x" + std::to_string(sh.k));
      const std::int64_t count = 3, ldb = sh.k + 1, ldb_t = sh.n + 2;
      const BrgemmDesc plain{.m = sh.m, .n = sh.n, .k = sh.k, .lda = sh.m, .ldb = ldb, .ldc = sh.m, .beta = 1};
      BrgemmDesc transposed = plain;
      transposed.ldb = ldb_t;
      transposed.b_transposed = true;
      const std::int64_t stride_a = sh.m * sh.k, stride_b = ldb * sh.n, stride_bt = ldb_t * sh.k;
      std::vector<float> a(static_cast<std::size_t>(count * stride_a)), b(static_cast<std::size_t>(count * stride_b), 7.0f),
          bt(static_cast<std::size_t>(count * stride_bt), -7.0f), c(static_cast<std::size_t>(sh.m * sh.n));
      for (float& x : a) x = u(rng);
      for (float& x : c) x = u(rng);
      for (std::int64_t e = 0; e < count; ++e)
        for (std::int64_t j = 0; j < sh.n; ++j)
          for (std::int64_t p = 0; p < sh.k; ++p) {
            const float x = u(rng);
            b[static_cast<std::size_t>(e * stride_b + p + j * ldb)] = x;
            bt[static_cast<std::size_t>(e * stride_bt + p * ldb_t + j)] = x;
          }
      std::vector<float> want = c, got = c;
      Brgemm(plain, isa)(a.data(), b.data(), want.data(), count, stride_a, stride_b);
      Brgemm(transposed, isa)(a.data(), bt.data(), got.data(), count, stride_a, stride_bt);
      for (std::size_t i = 0; i < c.size(); ++i)
        ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(want[i])) << "at " << i;
    }
}

// A hand-computed product, on the reference and on every ISA the host runs.
TEST(BrgemmTransposedB, SmallProductByHand) {
  // A = [1 2; 3 4] (column-major {1, 3, 2, 4}); B^T is 3 x 2 with ldb 4: B = [1 0 2; 5 -1 1].
  const BrgemmDesc d{.m = 2, .n = 3, .k = 2, .lda = 2, .ldb = 4, .ldc = 2, .beta = 0, .b_transposed = true};
  const std::vector<float> a = {1, 3, 2, 4}, bt = {1, 0, 2, 99, 5, -1, 1, 99};
  const std::vector<float> want = {11, 23, -2, -4, 4, 10};  // A * B, column-major
  std::vector<Isa> isas = weft::test::runnable_isas();
  isas.push_back(Isa::reference);
  for (Isa isa : isas) {
    std::vector<float> c(6, -1.0f);
    Brgemm(d, isa)(a.data(), bt.data(), c.data());
    EXPECT_EQ(c, want) << weft::jit::to_string(isa);
  }
}

TEST(BrgemmTransposedB, ValidateNamesLdb) {
  auto message = [](const BrgemmDesc& d) -> std::string {
    try {
      validate(d);
    } catch (const weft::Error& e) {
      return e.what();
    }
    return "";
  };
  // B^T is n x k: ldb >= n is required, ldb >= k is not.
  BrgemmDesc d{.m = 4, .n = 6, .k = 9, .lda = 4, .ldb = 5, .ldc = 4, .b_transposed = true};
  EXPECT_NE(message(d).find("ldb must be >= n (b_transposed"), std::string::npos) << message(d);
  d.ldb = 6;
  EXPECT_EQ(message(d), "");
  d.b_transposed = false;
  EXPECT_NE(message(d).find("ldb must be >= k"), std::string::npos) << message(d);
  // Its span is ldb * k.
  d = {.m = 4, .n = 1, .k = 8, .lda = 4, .ldb = std::int64_t{1} << 27, .ldc = 4, .b_transposed = true};
  EXPECT_NE(message(d).find("the bytes B spans (ldb x k x element bytes, b_transposed): 1073741824 x 4 is beyond the "
                            "limit 2147483647"),
            std::string::npos)
      << message(d);
  d.b_transposed = false;
  EXPECT_EQ(message(d), "");
}

TEST(BrgemmTransposedB, PartOfTheIdentity) {
  const BrgemmDesc plain{.m = 4, .n = 6, .k = 3, .lda = 4, .ldb = 6, .ldc = 4};
  BrgemmDesc transposed = plain;
  transposed.b_transposed = true;
  // Names of plain kernels are unchanged (perf maps, logs).
  EXPECT_EQ(to_string(plain), "brgemm_m4_n6_k3_lda4_ldb6_ldc4_beta1_strided");
  EXPECT_EQ(to_string(transposed), "brgemm_m4_n6_k3_lda4_ldb6_ldc4_beta1_strided_b_transposed");
  EXPECT_FALSE(plain == transposed);
  EXPECT_NE(BrgemmDescHash{}(plain), BrgemmDescHash{}(transposed));
  for (Isa isa : weft::test::runnable_isas()) EXPECT_NE(Brgemm(plain, isa).kernel(), Brgemm(transposed, isa).kernel());
}

// Dot tiles load columns of B as vectors along k: never planned for a transposed B, not even on
// request, and the emitter refuses such a plan. Every other plan has the plain descriptor's tiles.
TEST(BrgemmTransposedB, NoDotTilesOtherwiseThePlainPlan) {
  BrgemmDesc row{.m = 1, .n = 64, .k = 128, .lda = 1, .ldb = 128, .ldc = 1};
  ASSERT_TRUE(plan_brgemm(row, Isa::avx2).panels[0].dot);
  const BrgemmPlan dot_plan = plan_brgemm(row, Isa::avx2);
  row.ldb = 64;
  row.b_transposed = true;
  EXPECT_FALSE(plan_brgemm(row, Isa::avx2).panels[0].dot);
  EXPECT_FALSE(plan_brgemm(row, Isa::avx2, {.dot = 1}).panels[0].dot);
  EXPECT_THROW(weft::tpp::detail::emit_kernel(row, dot_plan), weft::Error);
  for (Isa isa : {Isa::avx2, Isa::avx512})
    for (Shape sh : kShapes) {
      if (sh.m == 1) continue;
      const BrgemmDesc plain{.m = sh.m, .n = sh.n, .k = sh.k, .lda = sh.m, .ldb = sh.k, .ldc = sh.m};
      BrgemmDesc transposed = plain;
      transposed.ldb = sh.n;
      transposed.b_transposed = true;
      EXPECT_EQ(plan_brgemm(transposed, isa), plan_brgemm(plain, isa)) << to_string(transposed);
    }
}

// AVX-512 code for a transposed B is emitted on any host (running it is the tests above, where the
// CPU has AVX-512), and differs from the plain kernel's.
TEST(BrgemmTransposedB, Avx512EmitsOnAnyHost) {
  WEFT_SKIP_UNLESS_BUILT_FOR(weft::jit::Isa::avx512);
  const BrgemmDesc plain{.m = 37, .n = 13, .k = 19, .lda = 37, .ldb = 19, .ldc = 37, .batch = BrgemmBatch::offsets};
  BrgemmDesc transposed = plain;
  transposed.ldb = 16;
  transposed.b_transposed = true;
  auto code = weft::tpp::detail::emit_kernel(transposed, plan_brgemm(transposed, Isa::avx512));
  auto plain_code = weft::tpp::detail::emit_kernel(plain, plan_brgemm(plain, Isa::avx512));
  ASSERT_GT(code->code_bytes().size(), 100u);
  const auto bytes = code->code_bytes();
  const auto plain_bytes = plain_code->code_bytes();
  EXPECT_FALSE(std::ranges::equal(bytes, plain_bytes));
}

}  // namespace
