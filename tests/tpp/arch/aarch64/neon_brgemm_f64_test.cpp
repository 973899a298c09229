// The Neon BRGEMM in f64 (2 doubles per vector: 8-row panels, k in groups of 2): bit for bit
// against brgemm_reference for m 1..20, n 1..13, k 1..9, every batch kind, beta 0 and 1, counts 0,
// 1 and 2, leading dimensions at and above their minimum, operands against guard pages, and with
// NaN / inf / -0 / denormal inputs.
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

TEST(NeonBrgemmF64, PlanHasTwoLanesAndFitsTheRegisters) {
  const BrgemmDesc d{.m = 19, .n = 13, .k = 3, .lda = 19, .ldb = 3, .ldc = 19, .types = kF64};
  const neon::NeonBrgemmPlan plan = neon::plan_neon_brgemm(d);
  EXPECT_EQ(plan.lanes, 2);
  ASSERT_EQ(plan.panels.size(), 3u);
  EXPECT_EQ(plan.panels[0], (neon::NeonPanel{.row0 = 0, .vectors = 4, .tail = 0}));
  EXPECT_EQ(plan.panels[2], (neon::NeonPanel{.row0 = 16, .vectors = 2, .tail = 1}));
  EXPECT_EQ(neon::tile_registers(plan.math, 2, 4, 6), 32);
}

TEST(NeonBrgemmF64, EveryShapeMatchesTheReferenceBitForBit) {
  int index = 0;
  for (int m = 1; m <= 20; ++m) {
    for (int n = 1; n <= 13; ++n) {
      for (int k = 1; k <= 9; ++k, ++index) {
        const int pad = index % 5 % 3;
        const BrgemmDesc d{.m = m, .n = n, .k = k, .lda = m + pad * 3, .ldb = k + pad, .ldc = m + pad * 2,
                           .beta = index % 2, .batch = kBatches[index % 3], .types = kF64};
        const std::int64_t count = index / 7 % 3 == 0 ? 2 : index / 7 % 3 == 1 ? 1 : 0;
        check(d, count, static_cast<std::uint32_t>(2000 + index),
              CheckOptions{.special_every = index % 4 == 0 ? 7 : 0, .flush_front = index % 11 == 0});
        if (HasFailure()) return;
      }
    }
  }
}

TEST(NeonBrgemmF64, LargeShapesAndLeadingDimensions) {
  check({.m = 37, .n = 20, .k = 17, .lda = 5000, .ldb = 7001, .ldc = 4099, .beta = 1, .types = kF64}, 3, 11);
  check({.m = 64, .n = 64, .k = 64, .lda = 64, .ldb = 64, .ldc = 64, .beta = 0, .batch = BrgemmBatch::offsets,
         .types = kF64},
        4, 12);
}

}  // namespace
