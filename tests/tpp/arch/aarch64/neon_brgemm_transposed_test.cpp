// The Neon BRGEMM with B transposed (BrgemmDesc::b_transposed: a k step's row of the tile is
// contiguous, loaded as vectors with its partial last vector piecewise), f32 and f64: bit for bit
// against brgemm_reference for m 1..20, n 1..13, k 1..9, every batch kind, beta 0 and 1, counts 0,
// 1 and 2, leading dimensions at and above their minimum (ldb = n: B's rows touch), operands against
// guard pages before and after.
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

constexpr DataTypes kF64{.in = DataType::f64, .out = DataType::f64, .compute = DataType::f64};
constexpr BrgemmBatch kBatches[] = {BrgemmBatch::strided, BrgemmBatch::offsets, BrgemmBatch::addresses};

void every_shape(const DataTypes& types, std::uint32_t seed0) {
  int index = 0;
  for (int m = 1; m <= 20; m += (m < 9 ? 1 : 2)) {
    for (int n = 1; n <= 13; ++n) {
      for (int k = 1; k <= 9; ++k, ++index) {
        const int pad = index % 5 % 3;
        const BrgemmDesc d{.m = m, .n = n, .k = k, .lda = m + pad * 2, .ldb = n + pad, .ldc = m + pad,
                           .beta = index % 2, .batch = kBatches[index % 3], .b_transposed = true, .types = types};
        const std::int64_t count = index / 7 % 3 == 0 ? 2 : index / 7 % 3 == 1 ? 1 : 0;
        check(d, count, seed0 + static_cast<std::uint32_t>(index),
              CheckOptions{.special_every = index % 5 == 0 ? 9 : 0, .flush_front = index % 2 == 1});
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

TEST(NeonBrgemmTransposed, PlanIsTheTransposedOne) {
  const BrgemmDesc d{.m = 16, .n = 6, .k = 3, .lda = 16, .ldb = 6, .ldc = 16, .b_transposed = true};
  const neon::NeonBrgemmPlan plan = neon::plan_neon_brgemm(d);
  EXPECT_EQ(plan.math, neon::NeonBrgemmMath::fma_transposed);
  EXPECT_EQ(neon::tile_registers(plan.math, 4, 4, 6), 30);
  EXPECT_EQ(neon::tile_registers(plan.math, 2, 4, 6), 32);
}

TEST(NeonBrgemmTransposed, F32EveryShapeMatchesTheReferenceBitForBit) { every_shape({}, 3000); }

TEST(NeonBrgemmTransposed, F64EveryShapeMatchesTheReferenceBitForBit) { every_shape(kF64, 6000); }

TEST(NeonBrgemmTransposed, LargeShapesAndLeadingDimensions) {
  check({.m = 37, .n = 20, .k = 17, .lda = 5000, .ldb = 7001, .ldc = 4099, .beta = 1, .b_transposed = true}, 3, 21);
  check({.m = 33, .n = 19, .k = 12, .lda = 40, .ldb = 6000, .ldc = 33, .beta = 0, .batch = BrgemmBatch::addresses,
         .b_transposed = true, .types = kF64},
        2, 22);
}

}  // namespace
