// The GEMM operators' reference (ops/include/weft/ops/gemm_reference.hpp) reads transposed operands as
// their transposes: the same result as transposing them first.
#include <weft/ops/gemm_reference.hpp>

#include <vector>

#include <gtest/gtest.h>

namespace {

using namespace weft::ops;

std::vector<float> transposed(const std::vector<float>& m, std::int64_t rows, std::int64_t cols) {
  std::vector<float> t(m.size());
  for (std::int64_t c = 0; c < cols; ++c)
    for (std::int64_t r = 0; r < rows; ++r) t[static_cast<std::size_t>(r * cols + c)] = m[static_cast<std::size_t>(c * rows + r)];
  return t;
}

TEST(GemmReference, TransposedOperandsAreReadAsTheirTransposes) {
  const std::int64_t M = 7, N = 5, K = 3;
  std::vector<float> a(M * K), b(K * N), bias(M);
  fill_random(a.data(), M * K, 1);
  fill_random(b.data(), K * N, 2);
  fill_random(bias.data(), M, 3);
  std::vector<float> expected(M * N), got(M * N);
  gemm_reference(M, N, K, a.data(), b.data(), bias.data(), true, expected.data());
  // A^T stored K x M and B^T stored N x K.
  const std::vector<float> at = transposed(a, M, K), bt = transposed(b, K, N);
  gemm_reference(M, N, K, {at.data(), true}, {bt.data(), true}, bias.data(), true, got.data());
  EXPECT_EQ(got, expected);
  gemm_reference(M, N, K, {at.data(), true}, b.data(), bias.data(), true, got.data());
  EXPECT_EQ(got, expected);
  for (float v : expected) EXPECT_GE(v, 0.0f);  // ReLU
}

}  // namespace
