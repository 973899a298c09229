// The Neon BRGEMM with bf16 inputs (A in VNNI-2, B column-major, both widened to f32 in registers;
// each pair summed as k + 1, then k) and an f32 or bf16 C (rounded as jit::to_bfloat16): bit for
// bit against brgemm_reference for m 1..20, n 1..13, k 2..12 (even), every batch kind, beta 0 and
// 1, counts 0, 1 and 2, leading dimensions at and above their minimum, operands against guard pages
// before and after, NaN / inf / -0 / denormal inputs.
#include <gtest/gtest.h>

#include <cstdint>

#include "neon_brgemm_check.hpp"
#include "neon_brgemm_plan.hpp"
#include "weft/tpp/brgemm.hpp"

namespace {

using namespace weft::tpp;
using neon_brgemm_test::check;
using neon_brgemm_test::CheckOptions;
using weft::jit::DataType;

constexpr DataTypes kBf16F32{.in = DataType::bf16, .out = DataType::f32, .compute = DataType::f32};
constexpr DataTypes kBf16{.in = DataType::bf16, .out = DataType::bf16, .compute = DataType::f32};
constexpr BrgemmBatch kBatches[] = {BrgemmBatch::strided, BrgemmBatch::offsets, BrgemmBatch::addresses};

TEST(NeonBrgemmBf16, PlanWidensInRegisters) {
  const BrgemmDesc d{.m = 16, .n = 9, .k = 4, .lda = 16, .ldb = 4, .ldc = 16, .types = kBf16F32};
  const neon::NeonBrgemmPlan plan = neon::plan_neon_brgemm(d);
  EXPECT_EQ(plan.math, neon::NeonBrgemmMath::bf16_widen);
  EXPECT_EQ(plan.lanes, 4);
  EXPECT_EQ(plan.max_cols, 4);
  ASSERT_EQ(plan.blocks.size(), 3u);
  EXPECT_EQ(neon::tile_registers(plan.math, 4, 4, 4), 29);
}

void every_shape(const DataTypes& types, std::uint32_t seed0) {
  int index = 0;
  for (int m = 1; m <= 20; ++m) {
    for (int n = 1; n <= 13; ++n) {
      for (int k = 2; k <= 12; k += 2, ++index) {
        const int pad = index % 5 % 3;
        const BrgemmDesc d{.m = m, .n = n, .k = k, .lda = m + pad * 2, .ldb = k + pad, .ldc = m + pad,
                           .beta = index % 2, .batch = kBatches[index % 3], .types = types};
        const std::int64_t count = index / 7 % 3 == 0 ? 2 : index / 7 % 3 == 1 ? 1 : 0;
        check(d, count, seed0 + static_cast<std::uint32_t>(index),
              CheckOptions{.special_every = index % 4 == 0 ? 8 : 0, .flush_front = index % 2 == 1});
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

TEST(NeonBrgemmBf16, F32OutputEveryShapeMatchesTheReferenceBitForBit) { every_shape(kBf16F32, 7000); }

// A bf16 C: read and widened (beta 1), rounded as jit::to_bfloat16 on store (ElementIo).
TEST(NeonBrgemmBf16, Bf16OutputEveryShapeMatchesTheReferenceBitForBit) { every_shape(kBf16, 8000); }

TEST(NeonBrgemmBf16, LargeShapesAndLeadingDimensions) {
  check({.m = 37, .n = 21, .k = 34, .lda = 5000, .ldb = 7001, .ldc = 4099, .beta = 1, .types = kBf16F32}, 3, 31);
  check({.m = 64, .n = 64, .k = 64, .lda = 64, .ldb = 64, .ldc = 64, .beta = 0, .batch = BrgemmBatch::offsets,
         .types = kBf16F32},
        4, 32);
  check({.m = 37, .n = 21, .k = 34, .lda = 5000, .ldb = 7001, .ldc = 4099, .beta = 1, .types = kBf16}, 3, 33);
}

}  // namespace
