// The SVE BRGEMM emitter (tpp/src/arch/aarch64/sve_brgemm_emit.cpp) and its plan. The plan's tests
// run on any host; the kernels' run at each vector length 16, 32 and 64 bytes (the kernel generated
// after the length is set: its code is valid at that length only) and skip without SVE. Every kernel
// is checked bit for bit against brgemm_reference by the Neon tests' check (neon_brgemm_check.hpp:
// operands flush against guard pages, C's padding rows compared), fixed seeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "neon_brgemm_check.hpp"
#include "sve_brgemm_emit.hpp"
#include "sve_brgemm_plan.hpp"
#include "sve_vector_length.hpp"
#include "weft/jit/data_type.hpp"
#include "weft/jit/error.hpp"
#include "weft/tpp/brgemm.hpp"

namespace {

using namespace weft::tpp;
using weft::jit::DataType;

constexpr DataTypes kF64 = {.in = DataType::f64, .out = DataType::f64, .compute = DataType::f64};
constexpr BrgemmBatch kBatches[] = {BrgemmBatch::strided, BrgemmBatch::offsets, BrgemmBatch::addresses};
constexpr int kVectorBytes[] = {16, 32, 64};

// ---- plan (any host) ------------------------------------------------------------------------------

TEST(SveBrgemmPlan, PanelsCoverMAndBlocksCoverNWithin32Registers) {
  for (int vector_bytes : kVectorBytes) {
    for (bool f64 : {false, true}) {
      for (int m = 1; m <= 70; ++m) {
        for (int n = 1; n <= 20; ++n) {
          // B transposed in every other shape (the broadcast scheme's blocks).
          BrgemmDesc d{.m = m, .n = n, .k = 5, .lda = m, .ldb = 5, .ldc = m};
          if ((m + n) % 2 == 1) {
            d.b_transposed = true;
            d.ldb = n;
          }
          if (f64) d.types = kF64;
          const sve::SveBrgemmPlan plan = sve::plan_sve_brgemm(d, vector_bytes);
          SCOPED_TRACE("vl=" + std::to_string(vector_bytes) + " f64=" + std::to_string(f64) +
                       " m=" + std::to_string(m) + " n=" + std::to_string(n));
          ASSERT_EQ(plan.lanes, vector_bytes / (f64 ? 8 : 4));
          EXPECT_EQ(plan.tail, m % plan.lanes);
          int row = 0;
          for (std::size_t p = 0; p < plan.panels.size(); ++p) {
            const sve::SvePanel& panel = plan.panels[p];
            EXPECT_EQ(panel.row0, row);
            EXPECT_GE(panel.vectors, 1);
            EXPECT_LE(panel.vectors, sve::kPanelVectors);
            if (p + 1 < plan.panels.size()) {
              EXPECT_EQ(panel.vectors, sve::kPanelVectors);
              EXPECT_EQ(panel.tail, 0);
            } else {
              EXPECT_EQ(panel.tail, plan.tail);
            }
            row += panel.rows(plan.lanes);
          }
          EXPECT_EQ(row, m);
          int col = 0, widest = 0, narrowest = 1 << 20;
          for (const sve::SveColumnBlock& block : plan.blocks) {
            EXPECT_EQ(block.col0, col);
            EXPECT_GE(block.cols, 1);
            EXPECT_LE(block.cols, plan.max_cols);
            EXPECT_LE(plan.max_cols, sve::kMaxCols);
            widest = std::max(widest, block.cols);
            narrowest = std::min(narrowest, block.cols);
            col += block.cols;
            for (const sve::SvePanel& panel : plan.panels)
              EXPECT_LE(panel.vectors * block.cols, sve::max_accumulators(plan.indexed, block.cols));
            if (plan.indexed) {
              EXPECT_LE(block.cols, sve::kMaxIndexedCols) << "fmla by element: B in z0..z7";
            }
          }
          EXPECT_EQ(col, n);
          EXPECT_LE(widest - narrowest, 1) << "near-equal blocks";
          // Wide blocks (more than x19..x24's 6 columns) only in a kernel of one panel.
          if (plan.max_cols > sve::kPanelCols) {
            EXPECT_EQ(plan.panels.size(), 1u);
          }
          const int v0 = plan.panels[0].vectors;
          EXPECT_EQ(plan.max_cols, plan.panels.size() > 1 || v0 == sve::kPanelVectors ? sve::kPanelCols
                                   : plan.indexed ? std::min(sve::kMaxIndexedCols, 22 / v0)
                                                  : std::min(sve::kMaxCols, sve::kMaxAccumulators / v0));
          EXPECT_EQ(plan.indexed, !d.b_transposed);
          EXPECT_EQ(plan.k_group, plan.indexed ? (f64 ? 2 : 4) : sve::kKUnroll);
        }
      }
    }
  }
}

TEST(SveBrgemmPlan, Examples) {
  // f32 at 256 bits: 8 lanes, 37 rows = 4 + 1 vectors, the last 5 rows.
  const BrgemmDesc d{.m = 37, .n = 13, .k = 5, .lda = 40, .ldb = 5, .ldc = 37};
  const sve::SveBrgemmPlan plan = sve::plan_sve_brgemm(d, 32);
  EXPECT_EQ(plan.lanes, 8);
  ASSERT_EQ(plan.panels.size(), 2u);
  EXPECT_EQ(plan.panels[0], (sve::SvePanel{.row0 = 0, .vectors = 4, .tail = 0}));
  EXPECT_EQ(plan.panels[1], (sve::SvePanel{.row0 = 32, .vectors = 1, .tail = 5}));
  ASSERT_EQ(plan.blocks.size(), 3u);
  EXPECT_EQ(plan.blocks[0], (sve::SveColumnBlock{.col0 = 0, .cols = 5}));
  EXPECT_EQ(plan.blocks[2], (sve::SveColumnBlock{.col0 = 9, .cols = 4}));
  // f64 at 512 bits: 8 lanes; 64 rows in 2 panels of 4 vectors.
  BrgemmDesc e{.m = 64, .n = 64, .k = 64, .lda = 64, .ldb = 64, .ldc = 64, .types = kF64};
  const sve::SveBrgemmPlan big = sve::plan_sve_brgemm(e, 64);
  EXPECT_EQ(big.lanes, 8);
  ASSERT_EQ(big.panels.size(), 2u);
  EXPECT_EQ(big.tail, 0);
  EXPECT_EQ(big.blocks.size(), 11u);
  // f32 at 128 bits: the Neon plan's panels.
  EXPECT_EQ(sve::plan_sve_brgemm(d, 16).panels.size(), 3u);
}

TEST(SveBrgemmPlan, SupportsAndErrors) {
  BrgemmDesc d{.m = 8, .n = 8, .k = 4, .lda = 8, .ldb = 4, .ldc = 8};
  EXPECT_TRUE(sve::supports(d));
  d.activation = BrgemmActivation::relu;
  d.bias = BrgemmBias::per_col;
  d.prefetch = BrgemmPrefetch::next_c;
  EXPECT_TRUE(sve::supports(d));
  d.b_transposed = true;
  d.ldb = 8;
  EXPECT_TRUE(sve::supports(d));
  d.types = kF64;
  EXPECT_TRUE(sve::supports(d));
  BrgemmDesc unary{.m = 8, .n = 8, .k = 4, .lda = 8, .ldb = 4, .ldc = 8, .activation = BrgemmActivation::unary,
                   .unary = UnaryOp::exp};
  EXPECT_TRUE(sve::supports(unary));
  unary.types = kF64;
  EXPECT_FALSE(sve::supports(unary)) << "validate() refuses a unary epilogue in f64";
  BrgemmDesc bf16{.m = 8, .n = 8, .k = 4, .lda = 8, .ldb = 4, .ldc = 8,
                  .types = {.in = DataType::bf16, .out = DataType::f32, .compute = DataType::f32}};
  EXPECT_FALSE(sve::supports(bf16)) << "bf16 is Neon's";
  EXPECT_THROW((void)sve::plan_sve_brgemm(bf16, 32), weft::Error);
  BrgemmDesc invalid{.m = 8, .n = 8, .k = 4, .lda = 7, .ldb = 4, .ldc = 8};
  EXPECT_FALSE(sve::supports(invalid)) << "lda < m";
  EXPECT_THROW((void)sve::plan_sve_brgemm(invalid, 32), weft::Error);
  const BrgemmDesc ok{.m = 8, .n = 8, .k = 4, .lda = 8, .ldb = 4, .ldc = 8};
  EXPECT_THROW((void)sve::plan_sve_brgemm(ok, 128), weft::Error) << "1024-bit vectors";
  EXPECT_THROW((void)sve::plan_sve_brgemm(ok, 8), weft::Error);
}

// The emitter runs on any host (the code is only bytes until it runs).
TEST(SveBrgemmPlan, EmitsAtEveryVectorLength) {
  for (int vector_bytes : kVectorBytes) {
    const BrgemmDesc d{.m = 37, .n = 13, .k = 9, .lda = 40, .ldb = 9, .ldc = 37, .bias = BrgemmBias::per_row,
                       .activation = BrgemmActivation::relu};
    sve::BrgemmEmitter code(d, vector_bytes);
    EXPECT_GT(code.bytes().size(), 0u);
    EXPECT_EQ(code.plan(), sve::plan_sve_brgemm(d, vector_bytes));
  }
}

// ---- kernels against the reference, at each vector length -----------------------------------------

// Runs `body(vector_bytes, lanes_f32)` at 128, 256 and 512 bits; skips without SVE.
template <typename Body>
void at_each_length(Body body) {
  if (!weft::test::has_sve()) GTEST_SKIP() << "no SVE";
  for (int vector_bytes : kVectorBytes) {
    weft::test::ScopedVectorLength vl(vector_bytes);
    if (!vl.ok()) {
      ADD_FAILURE() << "cannot set the SVE vector length to " << vector_bytes << " bytes";
      continue;
    }
    SCOPED_TRACE("vector_bytes=" + std::to_string(vector_bytes));
    ASSERT_EQ(weft::test::vector_length(), vector_bytes);
    body(vector_bytes);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

void check(const BrgemmDesc& d, std::int64_t count, std::uint32_t seed, int vector_bytes,
           neon_brgemm_test::CheckOptions options = {}) {
  options.emit = [vector_bytes](const BrgemmDesc& desc) -> std::unique_ptr<weft::jit::GeneratedCode> {
    return std::make_unique<sve::BrgemmEmitter>(desc, vector_bytes);
  };
  neon_brgemm_test::check(d, count, seed, options);
}

// m around the lanes and the 4-vector panels (1, lanes - 1, lanes, lanes + 1, 4 lanes - 1 / + 1),
// n around the 6-column blocks, k around the 4-k unroll; beta, the batch kind, count and the
// leading dimensions' padding rotate with the case.
void shapes_around_lanes(DataTypes types, int element_bytes, std::uint32_t seed0) {
  at_each_length([&](int vector_bytes) {
    const int lanes = vector_bytes / element_bytes;
    std::vector<int> ms = {1, lanes - 1, lanes, lanes + 1, 3 * lanes + 2, 4 * lanes, 4 * lanes + 1, 9 * lanes - 1};
    ms.erase(std::remove(ms.begin(), ms.end(), 0), ms.end());
    int index = 0;
    for (int m : ms) {
      for (int n : {1, 5, 6, 7, 12, 13, 24}) {
        for (int k : {1, 3, 4, 5, 8, 11}) {
          ++index;
          const int pad = index % 5 % 3;
          BrgemmDesc d{.m = m, .n = n, .k = k, .lda = m + pad * 3, .ldb = k + pad, .ldc = m + pad * 2,
                       .beta = index % 2, .batch = kBatches[index % 3]};
          d.types = types;
          const std::int64_t count = index / 7 % 3 == 0 ? 3 : index / 7 % 3 == 1 ? 1 : 0;
          check(d, count, seed0 + static_cast<std::uint32_t>(index), vector_bytes);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  });
}

TEST(SveBrgemm, F32ShapesAroundLanesAndTiles) { shapes_around_lanes({}, 4, 1000); }
TEST(SveBrgemm, F64ShapesAroundLanesAndTiles) { shapes_around_lanes(kF64, 8, 2000); }

// Every m from 1 to a full panel and a half plus one (each tail, full panels followed by a partial
// one), n and k rotating through 1..13 and 1..9 (every column block width, every k rest).
void every_m(DataTypes types, int element_bytes, std::uint32_t seed0) {
  at_each_length([&](int vector_bytes) {
    const int lanes = vector_bytes / element_bytes;
    for (int m = 1; m <= 6 * lanes + 1; ++m) {
      const int n = 1 + m % 13, k = 1 + m % 9;
      const BrgemmDesc d{.m = m, .n = n, .k = k, .lda = m + m % 2, .ldb = k, .ldc = m + m % 3, .beta = m % 2,
                         .batch = kBatches[m % 3], .types = types};
      check(d, 1 + m % 2, seed0 + static_cast<std::uint32_t>(m), vector_bytes);
      if (::testing::Test::HasFatalFailure()) return;
    }
  });
}

TEST(SveBrgemm, F32EveryMUpToOneAndAHalfPanels) { every_m({}, 4, 8000); }
TEST(SveBrgemm, F64EveryMUpToOneAndAHalfPanels) { every_m(kF64, 8, 9000); }

// Each batch kind with count 0, 1 and 3 and beta 0 and 1 (count 0 with beta 0 writes zeros).
TEST(SveBrgemm, BatchKindsCountsAndBeta) {
  at_each_length([](int vector_bytes) {
    int index = 0;
    for (bool f64 : {false, true})
      for (BrgemmBatch batch : kBatches)
        for (std::int64_t count : {0, 1, 3})
          for (int beta : {0, 1}) {
            BrgemmDesc d{.m = 19, .n = 7, .k = 6, .lda = 21, .ldb = 7, .ldc = 20, .beta = beta, .batch = batch};
            if (f64) d.types = kF64;
            check(d, count, static_cast<std::uint32_t>(3000 + index++), vector_bytes);
            if (::testing::Test::HasFatalFailure()) return;
          }
  });
}

// Bias per row and per column, relu, with NaN, +-0, +-inf and denormals among the inputs (relu's
// bits: NaN kept, -0 and negatives +0).
TEST(SveBrgemm, BiasAndReluWithSpecialValues) {
  at_each_length([](int vector_bytes) {
    int index = 0;
    for (bool f64 : {false, true})
      for (BrgemmBias bias : {BrgemmBias::none, BrgemmBias::per_row, BrgemmBias::per_col})
        for (BrgemmActivation activation : {BrgemmActivation::none, BrgemmActivation::relu})
          for (int m : {3, 37}) {
            ++index;
            BrgemmDesc d{.m = m, .n = 12, .k = 5, .lda = m + 1, .ldb = 5, .ldc = m, .beta = index % 2,
                         .batch = kBatches[index % 3], .bias = bias, .activation = activation};
            if (f64) d.types = kF64;
            check(d, 2, static_cast<std::uint32_t>(4000 + index), vector_bytes, {.special_every = 7});
            if (::testing::Test::HasFatalFailure()) return;
            check(d, 0, static_cast<std::uint32_t>(4500 + index), vector_bytes, {.special_every = 5});
            if (::testing::Test::HasFatalFailure()) return;
          }
  });
}

// The unary epilogue (every element-wise op, with and without bias) on the stored C, 4 rows at a time
// through the Neon sequence: bit for bit for the exact ops, within the transcendentals' bounds
// (docs/tpp_eltwise.md) for exp, sigmoid, tanh and gelu; m with rows % 4 = 0..3 in its last panel.
TEST(SveBrgemm, UnaryEpilogueEveryOp) {
  constexpr UnaryOp kOps[] = {UnaryOp::copy, UnaryOp::relu,    UnaryOp::square,  UnaryOp::reciprocal,
                              UnaryOp::sqrt, UnaryOp::exp,     UnaryOp::sigmoid, UnaryOp::tanh,
                              UnaryOp::gelu, UnaryOp::increment, UnaryOp::decrement, UnaryOp::scale};
  constexpr BrgemmBias kBiases[] = {BrgemmBias::none, BrgemmBias::per_row, BrgemmBias::per_col};
  at_each_length([&](int vector_bytes) {
    const int lanes = vector_bytes / 4;
    int index = 0;
    for (UnaryOp op : kOps) {
      const bool takes_alpha = op == UnaryOp::increment || op == UnaryOp::decrement || op == UnaryOp::scale;
      const bool transcendental =
          op == UnaryOp::exp || op == UnaryOp::sigmoid || op == UnaryOp::tanh || op == UnaryOp::gelu;
      for (int m : {1 + index % 3, lanes + 2, 4 * lanes + 3}) {
        ++index;
        const int n = 1 + index % 13, k = 1 + index % 6;
        const BrgemmDesc d{.m = m, .n = n, .k = k, .lda = m + index % 2, .ldb = k, .ldc = m + index % 3,
                           .beta = index % 2, .batch = kBatches[index % 3], .bias = kBiases[index % 3],
                           .activation = BrgemmActivation::unary, .unary = op,
                           .unary_alpha = takes_alpha ? -0.75f : 0.0f};
        check(d, index % 5 == 4 ? 0 : 2, static_cast<std::uint32_t>(10000 + index), vector_bytes,
              {.special_every = index % 3 == 0 ? 7 : 0, .ulps = transcendental ? 24 : 0,
               .flush_front = index % 4 == 1});
        if (::testing::Test::HasFailure()) return;
      }
    }
    // A full-size kernel with the longest sequence in every 4 rows of every tile.
    check({.m = 64, .n = 64, .k = 16, .lda = 64, .ldb = 16, .ldc = 64, .beta = 1, .bias = BrgemmBias::per_col,
           .activation = BrgemmActivation::unary, .unary = UnaryOp::gelu},
          2, 10500, vector_bytes, {.ulps = 24});
  });
}

// B transposed: each k step's row of the tile broadcast from one pointer.
TEST(SveBrgemm, TransposedB) {
  at_each_length([](int vector_bytes) {
    int index = 0;
    for (bool f64 : {false, true})
      for (int m : {5, 17, 40})
        for (int n : {1, 6, 11})
          for (int k : {2, 7}) {
            ++index;
            BrgemmDesc d{.m = m, .n = n, .k = k, .lda = m, .ldb = n + index % 3, .ldc = m + 1, .beta = index % 2,
                         .batch = kBatches[index % 3], .b_transposed = true};
            if (f64) d.types = kF64;
            check(d, 2, static_cast<std::uint32_t>(5000 + index), vector_bytes);
            if (::testing::Test::HasFatalFailure()) return;
          }
  });
}

// The prefetch hint changes no result; operands flush against the guard page before them too.
TEST(SveBrgemm, PrefetchNextCAndFrontGuards) {
  at_each_length([](int vector_bytes) {
    for (bool f64 : {false, true}) {
      BrgemmDesc d{.m = 45, .n = 13, .k = 6, .lda = 45, .ldb = 6, .ldc = 47, .beta = 1,
                   .prefetch = BrgemmPrefetch::next_c};
      if (f64) d.types = kF64;
      check(d, 2, 6000, vector_bytes);
      check(d, 2, 6001, vector_bytes, {.flush_front = true});
    }
  });
}

// Large leading dimensions (offsets past the add immediates) and a 64x64x64 batch of 4.
TEST(SveBrgemm, LargeLeadingDimensionsAnd64Cubed) {
  at_each_length([](int vector_bytes) {
    const BrgemmDesc d{.m = 21, .n = 9, .k = 11, .lda = 5000, .ldb = 7001, .ldc = 4099, .beta = 1};
    check(d, 2, 7000, vector_bytes);
    BrgemmDesc e{.m = 64, .n = 64, .k = 64, .lda = 64, .ldb = 64, .ldc = 64, .beta = 0,
                 .batch = BrgemmBatch::offsets};
    check(e, 4, 7001, vector_bytes);
    e.types = kF64;
    e.beta = 1;
    check(e, 2, 7002, vector_bytes);
  });
}

// A negative count (which check_args rejects before a checked call) runs no batch entry.
TEST(SveBrgemm, NegativeCountIsAnEmptySum) {
  at_each_length([](int vector_bytes) {
    const BrgemmDesc d{.m = 5, .n = 3, .k = 2, .lda = 5, .ldb = 2, .ldc = 5, .beta = 1};
    sve::BrgemmEmitter code(d, vector_bytes);
    auto fn = code.finalize<BrgemmKernelFn>(to_string(d));
    std::vector<float> a(10, 1.0f), b(6, 1.0f), c(15, 3.0f);
    BrgemmArgs args{.a = a.data(), .b = b.data(), .c = c.data(), .count = -1};
    fn(&args);
    for (float x : c) ASSERT_EQ(x, 3.0f);
  });
}

}  // namespace
