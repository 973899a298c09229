// The Neon BRGEMM's unary epilogue (BrgemmActivation::unary: every element-wise UnaryOp, through
// the unary TPPs' ActivationEmitter) with and without bias, for an f32 C and for bf16 inputs with
// an f32 or a bf16 C: bit for bit against brgemm_reference for the exact ops, within the
// transcendentals' bounds (docs/tpp_eltwise.md: relative 1e-6, a few units in the last place; one
// bf16 unit where the f32 value falls on the other side of a rounding boundary) for exp, sigmoid,
// tanh and gelu.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>

#include "brgemm_emit.hpp"
#include "neon_brgemm_check.hpp"
#include "weft/tpp/brgemm.hpp"

namespace {

using namespace weft::tpp;
using neon_brgemm_test::check;
using neon_brgemm_test::CheckOptions;
using weft::jit::DataType;

constexpr DataTypes kBf16F32{.in = DataType::bf16, .out = DataType::f32, .compute = DataType::f32};
constexpr DataTypes kBf16{.in = DataType::bf16, .out = DataType::bf16, .compute = DataType::f32};
constexpr BrgemmBatch kBatches[] = {BrgemmBatch::strided, BrgemmBatch::offsets, BrgemmBatch::addresses};
constexpr BrgemmBias kBiases[] = {BrgemmBias::none, BrgemmBias::per_row, BrgemmBias::per_col};
constexpr UnaryOp kOps[] = {UnaryOp::copy, UnaryOp::relu,    UnaryOp::square,  UnaryOp::reciprocal,
                            UnaryOp::sqrt, UnaryOp::exp,     UnaryOp::sigmoid, UnaryOp::tanh,
                            UnaryOp::gelu, UnaryOp::increment, UnaryOp::decrement, UnaryOp::scale};

bool transcendental(UnaryOp op) {
  return op == UnaryOp::exp || op == UnaryOp::sigmoid || op == UnaryOp::tanh || op == UnaryOp::gelu;
}

void every_op(const DataTypes& types, std::uint32_t seed0) {
  int index = 0;
  for (UnaryOp op : kOps) {
    const bool takes_alpha = op == UnaryOp::increment || op == UnaryOp::decrement || op == UnaryOp::scale;
    for (int m = 1; m <= 20; m += 4) {
      for (int n = 1; n <= 13; n += 3, ++index) {
        const bool bf16 = types.in == DataType::bf16;
        const int k = bf16 ? 2 + 2 * (index % 3) : 1 + index % 7;
        const BrgemmDesc d{.m = m, .n = n, .k = k, .lda = m + index % 2, .ldb = k + index % 3, .ldc = m + index % 2,
                           .beta = index % 2, .batch = kBatches[index % 3], .bias = kBiases[index % 3],
                           .activation = BrgemmActivation::unary, .unary = op,
                           .unary_alpha = takes_alpha ? -0.75f : 0.0f, .types = types};
        const std::int64_t ulps = !transcendental(op) ? 0 : types.out == DataType::bf16 ? 1 : 24;
        check(d, index % 5 == 4 ? 0 : 2, seed0 + static_cast<std::uint32_t>(index),
              CheckOptions{.special_every = index % 3 == 0 ? 7 : 0, .ulps = ulps, .flush_front = index % 4 == 1});
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

TEST(NeonBrgemmUnary, F32EveryOp) { every_op({}, 100); }
TEST(NeonBrgemmUnary, Bf16InputsF32OutputEveryOp) { every_op(kBf16F32, 200); }
TEST(NeonBrgemmUnary, Bf16EveryOp) { every_op(kBf16, 300); }

// Full 4 x 6 (f32) and 4 x 4 (bf16) tiles in loops of panels, the longest sequences (gelu) in every
// accumulator of every tile: the constant pool stays in adr's reach, the code in the arena.
TEST(NeonBrgemmUnary, LargeKernelsWithTheLongestSequences) {
  for (UnaryOp op : {UnaryOp::gelu, UnaryOp::tanh}) {
    check({.m = 64, .n = 64, .k = 16, .lda = 64, .ldb = 16, .ldc = 64, .beta = 1, .bias = BrgemmBias::per_col,
           .activation = BrgemmActivation::unary, .unary = op},
          2, 41, CheckOptions{.ulps = 24});
    check({.m = 64, .n = 64, .k = 16, .lda = 64, .ldb = 16, .ldc = 64, .beta = 0, .bias = BrgemmBias::per_row,
           .activation = BrgemmActivation::unary, .unary = op, .types = kBf16},
          2, 42, CheckOptions{.ulps = 1});
  }
}

// A kernel of more than 1 MiB (adr's reach): the op's sequence is one subroutine right before the
// constant pool, so the pool is in reach however far the first tiles are.
TEST(NeonBrgemmUnary, KernelLargerThanAdrsReach) {
  const BrgemmDesc d{.m = 64, .n = 6000, .k = 4, .lda = 64, .ldb = 4, .ldc = 64, .beta = 0,
                     .activation = BrgemmActivation::unary, .unary = UnaryOp::sigmoid};
  EXPECT_GT(neon::BrgemmEmitter(d).size_bytes(), std::size_t{1} << 20);
  check(d, 1, 51, CheckOptions{.ulps = 24});
}

}  // namespace
