// The Neon BRGEMM's epilogue: bias (per_row, per_col: added to the sum) and relu (x <= 0 -> +0, NaN
// kept) for f32, f64 and bf16 inputs (with an f32 or a bf16 C and bias), bit for bit against
// brgemm_reference with NaN / -0 / inf inputs and the bias against a guard page.
#include <gtest/gtest.h>

#include <cstdint>

#include "neon_brgemm_check.hpp"
#include "weft/tpp/brgemm.hpp"

namespace {

using namespace weft::tpp;
using neon_brgemm_test::check;
using neon_brgemm_test::CheckOptions;
using weft::jit::DataType;

constexpr DataTypes kF64{.in = DataType::f64, .out = DataType::f64, .compute = DataType::f64};
constexpr DataTypes kBf16F32{.in = DataType::bf16, .out = DataType::f32, .compute = DataType::f32};
constexpr DataTypes kBf16{.in = DataType::bf16, .out = DataType::bf16, .compute = DataType::f32};
constexpr BrgemmBatch kBatches[] = {BrgemmBatch::strided, BrgemmBatch::offsets, BrgemmBatch::addresses};
constexpr BrgemmBias kBiases[] = {BrgemmBias::none, BrgemmBias::per_row, BrgemmBias::per_col};

void bias_and_relu(const DataTypes& types, bool transposed, std::uint32_t seed0) {
  int index = 0;
  for (BrgemmBias bias : kBiases) {
    for (BrgemmActivation activation : {BrgemmActivation::none, BrgemmActivation::relu}) {
      if (bias == BrgemmBias::none && activation == BrgemmActivation::none) continue;
      for (int m = 1; m <= 20; m += (m < 6 ? 1 : 3)) {
        for (int n = 1; n <= 13; n += (n < 7 ? 1 : 2)) {
          const int k = types.in == DataType::bf16 ? 2 + 2 * (index % 4) : 1 + index % 9;
          const BrgemmDesc d{.m = m, .n = n, .k = k, .lda = m + index % 2, .ldb = (transposed ? n : k) + index % 3,
                             .ldc = m + index % 2, .beta = index % 2, .batch = kBatches[index % 3], .bias = bias,
                             .activation = activation, .b_transposed = transposed, .types = types};
          check(d, index % 5 == 4 ? 0 : 2, seed0 + static_cast<std::uint32_t>(index),
                CheckOptions{.special_every = index % 3 == 0 ? 6 : 0, .flush_front = index % 4 == 1});
          ++index;
          if (::testing::Test::HasFailure()) return;
        }
      }
    }
  }
}

TEST(NeonBrgemmEpilogue, F32BiasAndRelu) { bias_and_relu({}, false, 100); }
TEST(NeonBrgemmEpilogue, F32TransposedBiasAndRelu) { bias_and_relu({}, true, 200); }
TEST(NeonBrgemmEpilogue, F64BiasAndRelu) { bias_and_relu(kF64, false, 300); }
TEST(NeonBrgemmEpilogue, F64TransposedBiasAndRelu) { bias_and_relu(kF64, true, 400); }
TEST(NeonBrgemmEpilogue, Bf16InputsBiasAndRelu) { bias_and_relu(kBf16F32, false, 500); }
TEST(NeonBrgemmEpilogue, Bf16BiasAndRelu) { bias_and_relu(kBf16, false, 600); }

// relu's edge cases from C alone (count 0, beta 1): -0 -> +0, NaN stays NaN, +-inf, denormals.
TEST(NeonBrgemmEpilogue, ReluOfSpecialValuesOfC) {
  for (const DataTypes& types : {DataTypes{}, kF64, kBf16}) {
    const BrgemmDesc d{.m = 13, .n = 7, .k = 2, .lda = 13, .ldb = 2, .ldc = 13, .beta = 1,
                       .activation = BrgemmActivation::relu, .types = types};
    check(d, 0, 1, CheckOptions{.special_every = 2});
  }
}

}  // namespace
