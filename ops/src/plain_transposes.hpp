// The JIT transposes that move blocks between a caller's plain tensor and an operator's blocked
// copy (matrix_packing.cpp, conv_layout.cpp), and the ReLU-backward kernels those conversions fuse: most of those conversions turn a row-major patch into
// a column-major tile or back, which the transpose TPP does with vector shuffles, while an element
// loop touches a new cache line on one side for every element (4-7x slower on 1024 x 1024 floats).
// Internal to ops/: not installed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include <weft/jit/data_type.hpp>
#include <weft/ops/blocked_layout.hpp>
#include <weft/tpp/unary.hpp>

namespace weft::ops::detail {

// B (n x m, ld_out) = A^T for A (m x n, column-major, ld_in), of `type` elements (f32, bf16, f64).
// A transpose moves bits and does no arithmetic, so two bf16 values side by side move as one f32.
inline tpp::Unary plain_transpose(jit::DataType type, std::int64_t m, std::int64_t n, std::int64_t ld_in,
                                  std::int64_t ld_out) {
  const jit::DataType compute = type == jit::DataType::f64 ? type : jit::DataType::f32;
  return tpp::Unary(tpp::UnaryDesc{.op = tpp::UnaryOp::transpose, .m = m, .n = n, .ld_in = ld_in, .ld_out = ld_out,
                                   .types = {.in = type, .out = type, .compute = compute}});
}

// B (m x n, ld_out) = A where the forward output F (m x n, ld_in as A) passed a ReLU (> 0 or NaN),
// else +0: ReLU's backward on a patch of a plain tensor (A the incoming gradient, F in aux).
inline tpp::Unary relu_backward(jit::DataType type, std::int64_t m, std::int64_t n, std::int64_t ld_in,
                                std::int64_t ld_out) {
  const jit::DataType compute = type == jit::DataType::f64 ? type : jit::DataType::f32;
  return tpp::Unary(tpp::UnaryDesc{.op = tpp::UnaryOp::relu_bwd, .m = m, .n = n, .ld_in = ld_in, .ld_out = ld_out,
                                   .types = {.in = type, .out = type, .compute = compute}});
}

// The transposes of one blocking's blocks: make(extent) for its whole blocks and, when the last one
// is partial, for that one; of(extent) is the one for a block of that extent.
struct BlockTransposes {
  template <class Make>
  BlockTransposes(const Blocking& blocking, Make make) : whole_extent(blocking.extent(0)), whole(make(whole_extent)) {
    const std::int64_t last = blocking.extent(blocking.blocks() - 1);
    if (last != whole_extent) partial.emplace(make(last));
  }
  const tpp::Unary& of(std::int64_t extent) const { return extent == whole_extent ? whole : *partial; }

  std::int64_t whole_extent;
  tpp::Unary whole;
  std::optional<tpp::Unary> partial;
};

// The same for the tiles of a grid blocked two ways: make(rows, cols) for every extent a tile has
// (whole or partial rows, whole or partial columns). Built before a parallel walk, so that the
// workers only call kernels.
class TileTransposes {
 public:
  template <class Make>
  TileTransposes(const Blocking& rows, const Blocking& cols, Make make) : rows_(rows.extent(0)), cols_(cols.extent(0)) {
    const std::int64_t row_extents[] = {rows_, rows.extent(rows.blocks() - 1)};
    const std::int64_t col_extents[] = {cols_, cols.extent(cols.blocks() - 1)};
    for (std::size_t r = 0; r < 2; ++r)
      for (std::size_t c = 0; c < 2; ++c)
        if ((r == 0 || row_extents[1] != rows_) && (c == 0 || col_extents[1] != cols_))
          kernels_[2 * r + c].emplace(make(row_extents[r], col_extents[c]));
  }

  const tpp::Unary& of(std::int64_t rows, std::int64_t cols) const {
    return *kernels_[(rows == rows_ ? 0 : 2) + (cols == cols_ ? 0 : 1)];
  }

 private:
  std::int64_t rows_, cols_;  // the first block's extents: whole, or the only one
  std::array<std::optional<tpp::Unary>, 4> kernels_;
};

}  // namespace weft::ops::detail
