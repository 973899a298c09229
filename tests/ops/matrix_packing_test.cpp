// The layout conversions of the operators (weft/ops/matrix_packing.hpp): plain row- and
// column-major matrices to and from every blocked layout a GEMM operand takes.
#include <weft/ops/matrix_packing.hpp>

#include <omp.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <weft/jit/error.hpp>
#include <weft/ops/blocked_sums.hpp>
#include <weft/ops/element_type.hpp>

namespace weft::ops {
namespace {

using ::testing::HasSubstr;

// Value of element (r, c): consecutive bf16 values from 1.0, so distinct and exact in every type.
float value(std::int64_t r, std::int64_t c) {
  return jit::to_float(jit::bfloat16{static_cast<std::uint16_t>(0x3f80 + r * 64 + c)});
}

template <class T>
std::vector<T> plain_matrix(const PassMatrix& m, MatrixOrder order) {
  std::vector<T> plain(static_cast<std::size_t>(m.rows.size * m.cols.size));
  for (std::int64_t r = 0; r < m.rows.size; ++r)
    for (std::int64_t c = 0; c < m.cols.size; ++c) {
      const std::int64_t at = order == MatrixOrder::column_major ? c * m.rows.size + r : r * m.cols.size + c;
      plain[static_cast<std::size_t>(at)] = from_float<T>(value(r, c));
    }
  return plain;
}

const PassMatrix kLayouts[] = {
    {.rows = {37, 8}, .cols = {21, 4}, .row_block_major = true},                         // A, partial tiles
    {.rows = {32, 16}, .cols = {48, 16}, .row_block_major = false},                     // B / C, exact tiles
    {.rows = {20, 8}, .cols = {14, 4}, .row_block_major = true, .order = TileOrder::vnni2},  // bf16 weights
    // Every kind of tile in one matrix: whole, partial rows, partial columns, both (row-major
    // plain: the transposes of each extent).
    {.rows = {70, 32}, .cols = {45, 16}, .row_block_major = false},
    {.rows = {5, 8}, .cols = {3, 4}, .row_block_major = true},  // smaller than one tile
    // VNNI-2 with partial tiles both ways (row-major plain: a transpose of column pairs), and with
    // an odd column count (the last pair half padding: element by element).
    {.rows = {37, 16}, .cols = {22, 8}, .row_block_major = true, .order = TileOrder::vnni2},
    {.rows = {19, 8}, .cols = {13, 4}, .row_block_major = true, .order = TileOrder::vnni2},
    // Plain operands (one tile of the whole matrix, converted in parallel in column chunks that
    // divide the columns): 37 columns take chunks of one.
    {.rows = {24, 24}, .cols = {37, 37}},
    {.rows = {16, 16}, .cols = {40, 40}},
};

template <class T>
void expect_round_trips_in_both_orders() {
  for (const PassMatrix& m : kLayouts) {
    SCOPED_TRACE(std::to_string(m.rows.size) + "x" + std::to_string(m.cols.size));
    std::vector<T> from_columns(static_cast<std::size_t>(blocked_size(m)), from_float<T>(-1.0f));
    std::vector<T> from_rows(from_columns.size(), from_float<T>(-1.0f));
    pack(plain_matrix<T>(m, MatrixOrder::column_major).data(), MatrixOrder::column_major, m, from_columns.data());
    pack(plain_matrix<T>(m, MatrixOrder::row_major).data(), MatrixOrder::row_major, m, from_rows.data());
    // Both orders of one matrix give one blocked copy: every element where blocked_offset puts it,
    // the padding zero.
    std::int64_t real = 0;
    for (std::int64_t r = 0; r < m.rows.size; ++r)
      for (std::int64_t c = 0; c < m.cols.size; ++c, ++real)
        ASSERT_EQ(to_float(from_columns[static_cast<std::size_t>(
                      blocked_offset(r, c, m.rows, m.cols, m.row_block_major, m.order))]),
                  value(r, c));
    std::int64_t zeros = 0;
    for (std::size_t i = 0; i < from_columns.size(); ++i) {
      ASSERT_EQ(to_float(from_columns[i]), to_float(from_rows[i])) << i;
      if (to_float(from_columns[i]) == 0.0f) ++zeros;
    }
    EXPECT_EQ(zeros, blocked_size(m) - real);
    for (const MatrixOrder order : {MatrixOrder::column_major, MatrixOrder::row_major}) {
      std::vector<T> back(static_cast<std::size_t>(m.rows.size * m.cols.size), from_float<T>(-1.0f));
      unpack(from_columns.data(), m, back.data(), order);
      const std::vector<T> expected = plain_matrix<T>(m, order);
      for (std::size_t i = 0; i < back.size(); ++i)
        ASSERT_EQ(to_float(back[i]), to_float(expected[i])) << i;
    }
  }
}

TEST(MatrixPacking, Float32RoundTripsFromRowAndColumnMajor) { expect_round_trips_in_both_orders<float>(); }

TEST(MatrixPacking, Float64RoundTripsFromRowAndColumnMajor) { expect_round_trips_in_both_orders<double>(); }

TEST(MatrixPacking, Bf16RoundTripsFromRowAndColumnMajorWithVnni2Tiles) {
  expect_round_trips_in_both_orders<jit::bfloat16>();
}

// The ReLU's backward fused into pack: the tiles hold grad where the forward output passed (> 0 or
// NaN), +0 elsewhere, the padding zero; as pack() of the masked plain matrix, on a dirty buffer.
template <class T>
void expect_relu_backward_packs_the_masked_gradient() {
  for (const PassMatrix& m : {kLayouts[0], kLayouts[1], kLayouts[3], kLayouts[4], kLayouts[7], kLayouts[8]}) {
    SCOPED_TRACE(std::to_string(m.rows.size) + "x" + std::to_string(m.cols.size));
    const std::vector<T> grad = plain_matrix<T>(m, MatrixOrder::column_major);
    std::vector<T> forward(grad.size()), masked(grad.size());
    for (std::size_t i = 0; i < grad.size(); ++i) {
      // Passing, zero, negative and NaN forward outputs in turn.
      const float f = i % 4 == 0 ? 1.5f : i % 4 == 1 ? 0.0f : i % 4 == 2 ? -2.0f : std::numeric_limits<float>::quiet_NaN();
      forward[i] = from_float<T>(f);
      masked[i] = f > 0.0f || f != f ? grad[i] : T{};
    }
    std::vector<T> expected(static_cast<std::size_t>(blocked_size(m))), got(expected.size(), from_float<T>(-1.0f));
    pack(masked.data(), MatrixOrder::column_major, m, expected.data());
    pack_relu_backward(grad.data(), forward.data(), MatrixOrder::column_major, m, got.data());
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(to_float(got[i]), to_float(expected[i])) << i;
  }
  const PassMatrix& m = kLayouts[0];
  std::vector<T> buffer(static_cast<std::size_t>(blocked_size(m)));
  EXPECT_THAT([&] { pack_relu_backward(buffer.data(), buffer.data(), MatrixOrder::row_major, m, buffer.data()); },
              ::testing::ThrowsMessage<Error>(HasSubstr("column-major tiles from a column-major plain matrix only")));
  EXPECT_THAT([&] { pack_relu_backward<T>(buffer.data(), nullptr, MatrixOrder::column_major, m, buffer.data()); },
              ::testing::ThrowsMessage<Error>(HasSubstr("pack_relu_backward: forward_out is null")));
}

TEST(MatrixPacking, ReluBackwardPacksTheMaskedGradientInF32Bf16AndF64) {
  expect_relu_backward_packs_the_masked_gradient<float>();
  expect_relu_backward_packs_the_masked_gradient<jit::bfloat16>();
  expect_relu_backward_packs_the_masked_gradient<double>();
}

// The bias gradient's sums over a blocked and over a plain operand (rows in parallel chunks).
TEST(MatrixPacking, RowSumsOfBlockedAndPlainOperandsAreTheRowsSums) {
  omp_set_num_threads(2);
  for (const PassMatrix& m : {kLayouts[1], kLayouts[3], kLayouts[7], kLayouts[8]}) {
    SCOPED_TRACE(std::to_string(m.rows.size) + "x" + std::to_string(m.cols.size));
    const std::vector<float> plain = plain_matrix<float>(m, MatrixOrder::column_major);
    std::vector<float> blocked(static_cast<std::size_t>(blocked_size(m)));
    pack(plain.data(), MatrixOrder::column_major, m, blocked.data());
    std::vector<float> sums(static_cast<std::size_t>(m.rows.size), -1.0f);
    row_sums(blocked.data(), m, sums.data());
    for (std::int64_t r = 0; r < m.rows.size; ++r) {
      double expected = 0;
      for (std::int64_t c = 0; c < m.cols.size; ++c) expected += plain[static_cast<std::size_t>(c * m.rows.size + r)];
      ASSERT_NEAR(sums[static_cast<std::size_t>(r)], expected, 1e-5 * std::abs(expected)) << "row " << r;
    }
  }
}

TEST(MatrixPacking, NullBuffersAreNamed) {
  const PassMatrix& m = kLayouts[0];
  std::vector<float> buffer(static_cast<std::size_t>(blocked_size(m)));
  EXPECT_THAT([&] { pack<float>(nullptr, MatrixOrder::row_major, m, buffer.data()); },
              ::testing::ThrowsMessage<Error>(HasSubstr("pack: plain is null")));
  EXPECT_THAT([&] { pack<float>(buffer.data(), MatrixOrder::row_major, m, nullptr); },
              ::testing::ThrowsMessage<Error>(HasSubstr("pack: blocked is null")));
  EXPECT_THAT([&] { unpack<float>(nullptr, m, buffer.data(), MatrixOrder::row_major); },
              ::testing::ThrowsMessage<Error>(HasSubstr("unpack: blocked is null")));
}

}  // namespace
}  // namespace weft::ops
