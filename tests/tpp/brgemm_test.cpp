// Generated BRGEMM kernels against brgemm_reference: randomized shapes with fixed seeds, every batch
// kind, both betas, every epilogue, all operands in guard-page buffers.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "brgemm_check.hpp"
#include "guarded_buffer.hpp"
#include "host_isas.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/jit/error.hpp"
#include "weft/tpp/brgemm.hpp"

namespace {

using weft::test::Flush;
using weft::test::GuardedBuffer;
using namespace weft::tpp;
using namespace weft::test::brgemm;

BrgemmDesc random_desc(std::mt19937& rng) {
  static constexpr int ks[] = {1, 2, 3, 7, 16, 31, 64, 128};
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  BrgemmDesc d;
  d.m = pick(1, 80);
  d.n = pick(1, 80);
  d.k = ks[pick(0, 7)];
  d.lda = d.m + pick(0, 1) * pick(1, 9);
  d.ldb = d.k + pick(0, 1) * pick(1, 9);
  d.ldc = d.m + pick(0, 1) * pick(1, 9);
  d.beta = pick(0, 1);
  d.batch = static_cast<BrgemmBatch>(pick(0, 2));
  d.bias = static_cast<BrgemmBias>(pick(0, 2));
  d.activation = static_cast<BrgemmActivation>(pick(0, 2));
  if (d.activation == BrgemmActivation::unary) {
    d.unary = kElementwise[pick(0, 11)];
    if (d.unary == UnaryOp::increment || d.unary == UnaryOp::decrement || d.unary == UnaryOp::scale) d.unary_alpha = 0.75f;
  }
  return d;
}

TEST(Brgemm, RandomShapesAgainstReference) {
  if (!runs_generated_code()) GTEST_SKIP() << "no ISA of this build runs here";
  std::mt19937 rng(20240531);
  for (int t = 0; t < 300; ++t) {
    Case c;
    c.desc = random_desc(rng);
    c.count = std::uniform_int_distribution<int>(1, 16)(rng);
    // Keep the suite fast: the reference is scalar.
    while (c.count > 1 && static_cast<std::int64_t>(c.desc.m) * c.desc.n * c.desc.k * c.count > 4'000'000) c.count /= 2;
    c.flush = t % 2 == 0 ? Flush::back : Flush::front;
    c.seed = static_cast<std::uint32_t>(t + 1);
    check(c);
  }
}

TEST(Brgemm, EverySmallShapeEveryTail) {
  if (!runs_generated_code()) GTEST_SKIP() << "no ISA of this build runs here";
  for (int m = 1; m <= 26; ++m)
    for (int n = 1; n <= 15; ++n) {
      Case c;
      c.desc = {.m = m, .n = n, .k = 3, .lda = m, .ldb = 3, .ldc = m, .beta = (m + n) % 2};
      c.count = 2;
      c.flush = n % 2 == 0 ? Flush::back : Flush::front;
      c.seed = static_cast<std::uint32_t>(m * 100 + n);
      check(c);
    }
}

TEST(Brgemm, EveryBatchKindBetaAndEpilogue) {
  if (!runs_generated_code()) GTEST_SKIP() << "no ISA of this build runs here";
  std::uint32_t seed = 7;
  for (int batch = 0; batch < 3; ++batch)
    for (int beta = 0; beta < 2; ++beta)
      for (int bias = 0; bias < 3; ++bias)
        for (int act = 0; act < 3; ++act)
          for (int m : {5, 37})
            for (Flush flush : {Flush::back, Flush::front}) {
              Case c;
              c.desc = {.m = m, .n = 11, .k = 19, .lda = m + 2, .ldb = 21, .ldc = m + 1, .beta = beta,
                        .batch = static_cast<BrgemmBatch>(batch), .bias = static_cast<BrgemmBias>(bias),
                        .activation = static_cast<BrgemmActivation>(act),
                        .unary = kElementwise[(seed * 5) % 12]};
              if (act == 2 && c.desc.unary >= UnaryOp::increment) c.desc.unary_alpha = 0.5f;
              c.count = 5;
              c.flush = flush;
              c.seed = seed++;
              check(c);
            }
}

// Shapes whose plans sum in another order: dot tiles (m = 1: vectors along k, horizontal sums,
// a masked k tail, A and C gathered when lda / ldc > 1) and partial sums (n = 1, small tiles).
// Every batch kind, beta, bias and activation, leading dimensions past the matrices, guard pages
// after and before every operand.
TEST(Brgemm, NarrowShapesEveryBatchKindBetaAndEpilogue) {
  if (!runs_generated_code()) GTEST_SKIP() << "no ISA of this build runs here";
  struct Shape {
    int m, n, k;
  };
  std::uint32_t seed = 3000;
  for (Shape sh : {Shape{1, 1, 8}, Shape{1, 1, 67}, Shape{1, 5, 19}, Shape{1, 13, 8}, Shape{1, 14, 33},
                   Shape{1, 40, 130}, Shape{1, 9, 5}, Shape{1, 3, 16}, Shape{8, 1, 128}, Shape{5, 1, 9},
                   Shape{29, 1, 31}, Shape{72, 1, 17}, Shape{16, 2, 23}, Shape{3, 2, 40}, Shape{13, 3, 7}})
    for (int batch = 0; batch < 3; ++batch)
      for (int beta = 0; beta < 2; ++beta)
        for (int bias = 0; bias < 3; ++bias)
          for (int act = 0; act < 3; ++act) {
            const bool wide = seed % 2 == 1;  // leading dimensions larger than the matrices
            Case c;
            c.desc = {.m = sh.m, .n = sh.n, .k = sh.k, .lda = sh.m + (wide ? 2 : 0), .ldb = sh.k + (wide ? 3 : 0),
                      .ldc = sh.m + (wide ? 1 : 0), .beta = beta, .batch = static_cast<BrgemmBatch>(batch),
                      .bias = static_cast<BrgemmBias>(bias), .activation = static_cast<BrgemmActivation>(act),
                      .unary = kElementwise[seed % 12]};
            if (act == 2 && c.desc.unary >= UnaryOp::increment) c.desc.unary_alpha = 0.5f;
            c.count = 1 + seed % 4;
            c.flush = seed % 3 == 0 ? Flush::front : Flush::back;
            c.seed = seed++;
            check(c);
          }
}

// The m = 1 dot tiles and the partial sums under other unrolls, splits and tile widths than the
// plan's own: each within rounding of the exact sum (k_split 1 and m > 1: bit for bit).
TEST(Brgemm, NarrowShapesAlternativePlans) {
  if (!runs_avx2()) GTEST_SKIP() << "needs AVX2";
  std::uint32_t seed = 4000;
  for (int m : {1, 8, 20})
    for (int n : {1, 2, 7, 27})
      for (int k : {8, 45})
        for (int split : {1, 2, 3, 8})
          for (int unroll : {1, 16, 24})
            for (int cols : {0, 5}) {
              Case c;
              c.desc = {.m = m, .n = n, .k = k, .lda = m, .ldb = k, .ldc = m, .beta = 1};
              c.count = 2;
              c.options = {.panel_vectors = 0, .max_cols = cols, .k_unroll = unroll, .k_split = split};
              c.custom_plan = true;
              c.seed = seed++;
              check(c);
            }
}

// IEEE special values through the dot tiles: inf in B inside the masked part of the k tail must
// not turn into 0 * inf = NaN; NaN and inf in A or B propagate; beta = 0 never reads C.
TEST(Brgemm, DotTileSpecialValues) {
  for (weft::jit::Isa isa : weft::test::runnable_isas()) {
    SCOPED_TRACE(std::string("isa ") + std::string(weft::jit::to_string(isa)));
    if (!runs_avx2()) GTEST_SKIP() << "needs AVX2";
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    for (int beta : {0, 1}) {
      const BrgemmDesc d{.m = 1, .n = 4, .k = 11, .lda = 1, .ldb = 11, .ldc = 1, .beta = beta};
      // Dot tiles on every ISA (AVX-512 runs the AVX2 kernel for m = 1, plan_brgemm).
      ASSERT_TRUE(plan_brgemm(d, isa).panels[0].dot);
      GuardedBuffer<float> a(11), b(44), c(4);
      for (int p = 0; p < 11; ++p) a[static_cast<std::size_t>(p)] = 1.0f;
      for (std::size_t i = 0; i < 44; ++i) b[i] = 0.5f;
      b[0 * 11 + 5] = inf;  // column 0: k = 5 lies in both the last whole vector and the masked tail
      b[1 * 11 + 4] = -inf;
      b[1 * 11 + 6] = inf;  // column 1: inf - inf = NaN
      a[3] = 0.0f;
      b[2 * 11 + 3] = inf;  // column 2: 0 * inf = NaN
      for (std::size_t j = 0; j < 4; ++j) c[j] = nan;
      c[3] = beta == 1 ? -2.0f : nan;
      Brgemm(d, isa)(a.data(), b.data(), c.data());
      SCOPED_TRACE("beta=" + std::to_string(beta));
      if (beta == 0) {
        EXPECT_EQ(c[0], inf);
        EXPECT_TRUE(std::isnan(c[1]));
        EXPECT_TRUE(std::isnan(c[2]));
        EXPECT_EQ(c[3], 5.0f);  // 10 * 0.5 (a[3] = 0), C not read
      } else {
        EXPECT_TRUE(std::isnan(c[0]));  // NaN in C propagates
        EXPECT_EQ(c[3], 3.0f);
      }
      // inf in A inside the masked part of the tail: inf * 0.5 = inf in every column, not NaN.
      for (std::size_t i = 0; i < 44; ++i) b[i] = 0.5f;
      for (int p = 0; p < 11; ++p) a[static_cast<std::size_t>(p)] = p == 5 ? inf : 1.0f;
      for (std::size_t j = 0; j < 4; ++j) c[j] = 1.0f;
      Brgemm(d, isa)(a.data(), b.data(), c.data());
      for (std::size_t j = 0; j < 4; ++j) EXPECT_EQ(c[j], inf) << j;
    }
  }
}

TEST(Brgemm, AlternativePlansAgree) {
  if (!runs_avx2()) GTEST_SKIP() << "needs AVX2";
  std::uint32_t seed = 99;
  for (int m : {8, 29, 64, 71})
    for (int n : {3, 13, 64})
      for (int vectors : {1, 2, 3, 4})
        for (int k_unroll : {1, 4, 16}) {
          Case c;
          c.desc = {.m = m, .n = n, .k = 35, .lda = m, .ldb = 35, .ldc = m + 3, .beta = 1};
          c.count = 3;
          c.options = {.panel_vectors = vectors, .max_cols = 0, .k_unroll = k_unroll};
          c.custom_plan = true;
          c.seed = seed++;
          check(c);
        }
}

// BrgemmPrefetch::next_c changes no result: bit for bit against the reference, with C flush
// against a guard page so that the last tile's prefetch of the columns past C (and, with a wide
// ldc, far past it) lands in inaccessible memory, which a prefetch must not fault on. Every batch
// kind and epilogue, tails in m and n, several tile widths.
TEST(Brgemm, PrefetchNextCKeepsResultsAndNeverFaults) {
  if (!runs_generated_code()) GTEST_SKIP() << "no ISA of this build runs here";
  std::uint32_t seed = 5000;
  for (int m : {1, 7, 32, 45, 64})
    for (int n : {1, 5, 32, 37})
      for (int ldc_extra : {0, 3, 1000})
        for (int batch = 0; batch < 3; ++batch) {
          Case c;
          c.desc = {.m = m, .n = n, .k = 17, .lda = m, .ldb = 17, .ldc = m + ldc_extra, .beta = 1,
                    .batch = static_cast<BrgemmBatch>(batch),
                    .bias = static_cast<BrgemmBias>(seed % 3),
                    .activation = static_cast<BrgemmActivation>(seed % 2),
                    .prefetch = BrgemmPrefetch::next_c};
          c.count = 1 + seed % 4;
          c.flush = seed % 2 == 0 ? Flush::back : Flush::front;
          c.seed = seed++;
          check(c);
        }
}

TEST(Brgemm, ZeroBatchCountIsAnEmptySum) {
  for (weft::jit::Isa isa : weft::test::runnable_isas()) {
    SCOPED_TRACE(std::string("isa ") + std::string(weft::jit::to_string(isa)));
    if (!runs_generated_code()) GTEST_SKIP() << "no ISA of this build runs here";
    for (int beta : {0, 1}) {
      const BrgemmDesc d{.m = 13, .n = 5, .k = 4, .lda = 13, .ldb = 4, .ldc = 13, .beta = beta,
                         .bias = BrgemmBias::per_col, .activation = BrgemmActivation::relu};
      std::vector<float> a(13 * 4, 1.0f), b(4 * 5, 1.0f), c(13 * 5), bias = {1, -1, 2, -2, 0.5f};
      for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<float>(i % 3) - 1.0f;
      const std::vector<float> before = c;
      BrgemmArgs args{.a = a.data(), .b = b.data(), .c = c.data(), .count = 0, .bias = bias.data()};
      Brgemm(d, isa)(args);
      for (std::size_t i = 0; i < c.size(); ++i) {
        const float sum = (beta == 1 ? before[i] : 0.0f) + bias[i / 13];
        EXPECT_EQ(c[i], sum < 0 ? 0.0f : sum) << "beta=" << beta << " i=" << i;
      }
    }
  }
}

// beta = 0 never reads C (NaN there does not leak); NaN and infinity in A or B propagate like IEEE
// arithmetic; relu keeps NaN and -0; the generated kernel matches the reference bit for bit.
TEST(Brgemm, SpecialValues) {
  for (weft::jit::Isa isa : weft::test::runnable_isas()) {
    SCOPED_TRACE(std::string("isa ") + std::string(weft::jit::to_string(isa)));
    if (!runs_generated_code()) GTEST_SKIP() << "no ISA of this build runs here";
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    for (int beta : {0, 1})
      for (int act : {0, 1}) {
        const BrgemmDesc d{.m = 11, .n = 3, .k = 2, .lda = 11, .ldb = 2, .ldc = 11, .beta = beta,
                           .activation = static_cast<BrgemmActivation>(act)};
        std::vector<float> a(11 * 2, 0.0f), b(2 * 3, 0.0f), c(11 * 3, nan);
        a[0] = nan;             // row 0, every column: NaN
        a[1] = inf;             // row 1: inf * b
        a[2] = -1.0f;           // row 2: -1 * b
        b[0] = 1.0f;            // column 0: k=0 -> 1
        b[2] = 0.0f;            // column 1: zeros -> inf * 0 = NaN in row 1
        b[4] = -0.0f;
        a[3] = 0.0f;            // row 3 of column 2: 0 * -0 = -0; -0 + (+0 sum start) = +0
        std::vector<float> expected = c;
        BrgemmArgs args{.a = a.data(), .b = b.data(), .c = expected.data()};
        brgemm_reference(d, args);
        args.c = c.data();
        Brgemm(d, isa)(args);
        for (std::size_t i = 0; i < c.size(); ++i)
          EXPECT_TRUE(same(c[i], expected[i])) << "beta=" << beta << " act=" << act << " i=" << i << ": " << c[i]
                                               << " vs " << expected[i];
        EXPECT_TRUE(std::isnan(c[0]));                    // NaN in A propagates
        EXPECT_TRUE(std::isnan(c[1 + 11]));               // inf * 0
        if (beta == 0) {
          EXPECT_FALSE(std::isnan(c[5]));                 // C was NaN but never read
          EXPECT_EQ(c[2], act == 1 ? 0.0f : -1.0f);
        } else {
          EXPECT_TRUE(std::isnan(c[5]));                  // NaN in C propagates with beta = 1
        }
      }
    // relu(-0) = +0 (as the unary ReLU): an empty sum (count 0) into C = -0.
    const BrgemmDesc d{.m = 3, .n = 1, .k = 1, .lda = 3, .ldb = 1, .ldc = 3, .beta = 1,
                       .activation = BrgemmActivation::relu};
    std::vector<float> a = {0, 0, 0}, b = {1}, c = {-0.0f, -2.0f, 3.0f};
    Brgemm(d, isa)(BrgemmArgs{.a = a.data(), .b = b.data(), .c = c.data(), .count = 0});
    EXPECT_TRUE(!std::signbit(c[0]) && c[0] == 0.0f);
    EXPECT_EQ(c[1], 0.0f);
    EXPECT_EQ(c[2], 3.0f);
  }
}

// The fused epilogue gives the same bits as a BRGEMM followed by the unary TPP: both run one
// instruction sequence per op.
TEST(Brgemm, FusedUnaryEpilogueMatchesTheUnaryKernel) {
  for (weft::jit::Isa isa : weft::test::runnable_isas()) {
    SCOPED_TRACE(std::string("isa ") + std::string(weft::jit::to_string(isa)));
    if (!runs_generated_code()) GTEST_SKIP() << "no ISA of this build runs here";
    std::uint32_t seed = 500;
    for (UnaryOp op : kElementwise)
      for (int m : {8, 29}) {
        const bool takes_alpha = op == UnaryOp::increment || op == UnaryOp::decrement || op == UnaryOp::scale;
        const float alpha = takes_alpha ? -1.25f : 0.0f;
        BrgemmDesc d{.m = m, .n = 7, .k = 16, .lda = m, .ldb = 16, .ldc = m + 1, .beta = 0,
                     .activation = BrgemmActivation::unary, .unary = op, .unary_alpha = alpha};
        Case c{.desc = d, .count = 2, .seed = seed++};
        check(c);  // against the reference

        std::mt19937 rng(c.seed);
        Operands ops(c, rng);
        std::vector<float> separate(ops.out.begin(), ops.out.end());
        BrgemmDesc plain = d;
        plain.activation = BrgemmActivation::none;
        plain.unary_alpha = 0.0f;
        Brgemm(plain, isa)(ops.args(separate.data()));
        // The unary kernel of the same ISA (not the selected one: under WEFT_ISA=reference that is the
        // reference, whose transcendentals are rounded from double).
        Unary(UnaryDesc{.op = op, .m = m, .n = 7, .ld_in = m + 1, .ld_out = m + 1, .alpha = alpha}, isa)(
            separate.data(), separate.data());
        Brgemm(d, isa)(ops.args(ops.out.data()));
        for (int j = 0; j < 7; ++j)
          for (int i = 0; i < m; ++i) {
            const std::size_t at = static_cast<std::size_t>(i + j * (m + 1));
            EXPECT_TRUE(same(ops.out[at], separate[at])) << to_string(op) << " m=" << m << " (" << i << "," << j << ")";
          }
      }
  }
}

TEST(Brgemm, InvalidDescriptorsThrow) {
  const BrgemmDesc good{.m = 4, .n = 4, .k = 4, .lda = 4, .ldb = 4, .ldc = 4};
  auto rejects = [&](BrgemmDesc d, const char* word) {
    try {
      Brgemm g(d);
      ADD_FAILURE() << "accepted " << to_string(d);
    } catch (const weft::Error& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  BrgemmDesc d = good;
  d.m = 0;
  rejects(d, "m must be");
  d = good;
  d.k = -3;
  rejects(d, "k must be");
  d = good;
  d.lda = 3;
  rejects(d, "lda");
  d = good;
  d.ldb = 2;
  rejects(d, "ldb");
  d = good;
  d.ldc = 1;
  rejects(d, "ldc");
  d = good;
  d.beta = 2;
  rejects(d, "beta");
  d = good;
  d.batch = static_cast<BrgemmBatch>(7);
  rejects(d, "batch");
  d = good;
  d.activation = BrgemmActivation::unary;
  d.unary = UnaryOp::transpose;
  rejects(d, "element-wise");
  d.unary = UnaryOp::exp;
  d.unary_alpha = 2.0f;
  rejects(d, "alpha");
  d = good;
  d.lda = std::int64_t{1} << 40;
  rejects(d, "the bytes A spans (lda x k x element bytes): 1099511627776 x ");
  rejects(d, "is beyond the limit 2147483647 (2^31 - 1)");
  d.lda = std::int64_t{1} << 62;  // lda x k beyond int64
  rejects(d, "4611686018427387904 x ");
  d = good;
  d.ldc = (std::int64_t{1} << 29) / d.n;  // x 4 bytes: 2 GiB, one byte too many
  rejects(d, "the bytes C spans (ldc x n x element bytes)");
  d = good;
  d.prefetch = static_cast<BrgemmPrefetch>(9);
  rejects(d, "prefetch");
  d = good;
  d.beta = 0;
  d.prefetch = BrgemmPrefetch::next_c;
  rejects(d, "beta = 1");  // C is never read: the same kernel as without the hint
  d = good;
  d.batch = BrgemmBatch::offsets;
  std::vector<float> x(16);
  const Brgemm offsets(d);
  EXPECT_THROW(offsets(x.data(), x.data(), x.data()), weft::Error);  // offsets need BrgemmArgs
}

TEST(Brgemm, CacheReturnsOneKernelPerDescriptor) {
  if (!runs_generated_code()) GTEST_SKIP() << "no ISA of this build runs here";
  const weft::jit::Isa isa = weft::test::runnable_isas().front();
  const BrgemmDesc d{.m = 17, .n = 9, .k = 5, .lda = 17, .ldb = 5, .ldc = 17, .beta = 0};
  const std::size_t before = brgemm_cache_size();
  Brgemm a(d, isa), b(d, isa);
  EXPECT_EQ(a.kernel(), b.kernel());
  EXPECT_NE(a.kernel(), nullptr);
  EXPECT_LE(brgemm_cache_size(), before + 1);
  EXPECT_FALSE(a.code().empty());
  // A prefetch hint is another kernel.
  BrgemmDesc hinted = d;
  hinted.beta = 1;
  Brgemm plain1(hinted, isa);
  hinted.prefetch = BrgemmPrefetch::next_c;
  Brgemm prefetching(hinted, isa);
  EXPECT_NE(plain1.kernel(), prefetching.kernel());
  EXPECT_TRUE(prefetching.plan().prefetch_next_c);
  EXPECT_FALSE(plain1.plan().prefetch_next_c);
  Brgemm r(d, weft::jit::Isa::reference);
  EXPECT_EQ(r.kernel(), nullptr);
  EXPECT_TRUE(r.code().empty());
}

TEST(Brgemm, ReferenceIsaRunsTheReference) {
  const BrgemmDesc d{.m = 3, .n = 2, .k = 2, .lda = 3, .ldb = 2, .ldc = 3, .beta = 0};
  std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {1, 1, 2, 0}, c(6, -1.0f);
  Brgemm(d, weft::jit::Isa::reference)(a.data(), b.data(), c.data());
  EXPECT_EQ(c, (std::vector<float>{5, 7, 9, 2, 4, 6}));
}

}  // namespace
