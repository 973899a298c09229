// The Neon BRGEMM's next_c prefetch (BrgemmPrefetch::next_c, beta 1): the same bits as the
// reference, with C flush against a guard page after it and before it (the prefetches reach past
// C: prfm must not fault), and one prfm per column of the next block in the code.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "brgemm_emit.hpp"
#include "neon_brgemm_check.hpp"
#include "weft/jit/aarch64/forms.hpp"
#include "weft/tpp/brgemm.hpp"

namespace {

using namespace weft::tpp;
using neon_brgemm_test::check;
using neon_brgemm_test::CheckOptions;

constexpr BrgemmBatch kBatches[] = {BrgemmBatch::strided, BrgemmBatch::offsets, BrgemmBatch::addresses};

TEST(NeonBrgemmPrefetch, EveryShapeClassMatchesTheReference) {
  int index = 0;
  for (int m = 1; m <= 20; m += (m < 6 ? 1 : 3)) {
    for (int n = 1; n <= 13; ++n) {
      for (int k : {1, 4, 7}) {
        const int pad = index % 3;
        const BrgemmDesc d{.m = m, .n = n, .k = k, .lda = m + pad, .ldb = k + pad, .ldc = m + 2 * pad, .beta = 1,
                           .batch = kBatches[index % 3], .prefetch = BrgemmPrefetch::next_c};
        check(d, index % 4 == 3 ? 0 : 2, static_cast<std::uint32_t>(100 + index),
              CheckOptions{.flush_front = index % 2 == 1});
        ++index;
        if (HasFailure()) return;
      }
    }
  }
}

// The other types and B transposed: the prefetch spans the panel's rows of C's type.
TEST(NeonBrgemmPrefetch, EveryTypeAndTransposedB) {
  using weft::jit::DataType;
  const DataTypes types[] = {{.in = DataType::f64, .out = DataType::f64, .compute = DataType::f64},
                             {.in = DataType::bf16, .out = DataType::f32, .compute = DataType::f32},
                             {.in = DataType::bf16, .out = DataType::bf16, .compute = DataType::f32}};
  int index = 0;
  for (const DataTypes& t : types) {
    for (int m : {1, 3, 8, 19}) {
      for (int n : {1, 5, 13}) {
        const bool bf16 = t.in == DataType::bf16, transposed = !bf16 && index % 2 == 1;
        const int k = bf16 ? 6 : 5;
        const BrgemmDesc d{.m = m, .n = n, .k = k, .lda = m, .ldb = transposed ? n : k, .ldc = m, .beta = 1,
                           .batch = kBatches[index % 3], .prefetch = BrgemmPrefetch::next_c,
                           .b_transposed = transposed, .types = t};
        check(d, 2, static_cast<std::uint32_t>(500 + index), CheckOptions{.flush_front = index % 2 == 0});
        ++index;
        if (HasFailure()) return;
      }
    }
  }
}

TEST(NeonBrgemmPrefetch, LargeLeadingDimensionOfC) {
  const BrgemmDesc d{.m = 21, .n = 9, .k = 5, .lda = 21, .ldb = 5, .ldc = 9000, .beta = 1,
                     .prefetch = BrgemmPrefetch::next_c};
  check(d, 2, 7);
}

// Without the prefetch the code has no prfm; with it, two per column of each tile for rows
// spanning more than one element (the first and the last byte of the next block's column).
TEST(NeonBrgemmPrefetch, CodeHasPrefetchesOnlyWhenAsked) {
  BrgemmDesc d{.m = 16, .n = 6, .k = 4, .lda = 16, .ldb = 4, .ldc = 16, .beta = 1};
  EXPECT_FALSE(neon::BrgemmEmitter(d).used(weft::jit::a64::Form::prfm_uimm));
  d.prefetch = BrgemmPrefetch::next_c;
  neon::BrgemmEmitter code(d);
  EXPECT_TRUE(code.used(weft::jit::a64::Form::prfm_uimm));
  EXPECT_TRUE(code.used(weft::jit::a64::Form::prfum));
}

}  // namespace
