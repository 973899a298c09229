#include <weft/ops/matrix_packing.hpp>

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <optional>
#include <type_traits>

#include <weft/jit/error.hpp>
#include <weft/ops/element_type.hpp>

#include "plain_transposes.hpp"

namespace weft::ops {
namespace {

// Offset of element (r, c) of the plain matrix in its `order`.
std::int64_t plain_offset(std::int64_t r, std::int64_t c, const PassMatrix& m, MatrixOrder order) {
  return order == MatrixOrder::column_major ? c * m.rows.size + r : r * m.cols.size + c;
}

std::int64_t blocked_offset(std::int64_t r, std::int64_t c, const PassMatrix& m) {
  return ops::blocked_offset(r, c, m.rows, m.cols, m.row_block_major, m.order);
}

// A plain operand (one column-major tile of the whole matrix, whose blocked copy is the plain
// matrix itself) as tiles of whole columns, a divisor of them each, so that converting it runs in
// parallel; the same memory, no padding. Other matrices as they are.
PassMatrix walked(const PassMatrix& m) {
  if (!m.plain()) return m;
  PassMatrix w = m;
  w.cols.block = parallel_chunk(m.cols.size, omp_get_max_threads());
  return w;
}

// Calls visit(tile, rows, cols, r0, c0) for every tile of `m`, in parallel: `tile` the offset of
// its first element in the blocked copy, rows x cols its real elements, (r0, c0) the plain matrix's
// element there.
template <class Visit>
void for_each_tile(const PassMatrix& m, Visit visit) {
  const std::int64_t row_blocks = m.rows.blocks(), col_blocks = m.cols.blocks();
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t cb = 0; cb < col_blocks; ++cb) {
    for (std::int64_t rb = 0; rb < row_blocks; ++rb) {
      const std::int64_t r0 = rb * m.rows.block, c0 = cb * m.cols.block;
      visit(blocked_offset(r0, c0, m), m.rows.extent(rb), m.cols.extent(cb), r0, c0);
    }
  }
}

// How a tile moves between the plain matrix and the blocked copy:
//   columns    a column-major tile and a column-major plain matrix: one copy per tile column;
//   transpose  a column-major tile and a row-major plain matrix: the JIT transpose TPP (vector
//              shuffles; element by element, every element of a row-major weight touched a new
//              cache line of the tile's other side: 1 ms for 1024 x 1024 floats);
//   words      a VNNI-2 tile of bf16 and a row-major plain matrix with an even number of columns: each
//              pair of bf16 columns is one 32-bit word in both, and the tile holds the words of
//              the pairs column-major, so the move is a transpose of 32-bit words (an f32
//              transpose moves bits without arithmetic);
//   elements   the rest (VNNI-2 from column-major or with an odd column count): element by element.
enum class TileMove { columns, transpose, words, elements };

template <class T>
TileMove tile_move(const PassMatrix& m, MatrixOrder order) {
  if (m.order == TileOrder::column_major) return order == MatrixOrder::column_major ? TileMove::columns : TileMove::transpose;
  const bool pairs_are_words = std::is_same_v<T, jit::bfloat16> && order == MatrixOrder::row_major && m.cols.size % 2 == 0;
  return pairs_are_words ? TileMove::words : TileMove::elements;
}

// The transposes of pack (into_tiles) or unpack, for T elements moved as `move` says: a row-major
// plain patch of a tile (rows x cols, ld the plain columns) is, read column-major, its transpose.
// Words: pairs of bf16 as one f32 (cols / 2 words per row, the tile's ld `rows` words per pair).
template <class T>
detail::TileTransposes tile_transposes(const PassMatrix& m, TileMove move, bool into_tiles) {
  const bool words = move == TileMove::words;
  const jit::DataType type = words ? jit::DataType::f32 : data_type_of<T>();
  const std::int64_t per = words ? 2 : 1, plain_ld = m.cols.size / per, tile_ld = m.rows.block;
  return detail::TileTransposes(m.rows, m.cols, [&](std::int64_t rows, std::int64_t cols) {
    const std::int64_t moved_cols = cols / per;  // words: every column extent is even
    return into_tiles ? detail::plain_transpose(type, moved_cols, rows, plain_ld, tile_ld)
                      : detail::plain_transpose(type, rows, moved_cols, tile_ld, plain_ld);
  });
}

}  // namespace

std::int64_t blocked_size(const PassMatrix& m) { return m.rows.padded() * m.cols.padded(); }

namespace {

// Every tile between the plain matrix and the blocked copy: into the tiles (pack: `from` plain, `to`
// blocked, the padding of partial tiles written with zeros) or out of them (unpack).
template <bool into_tiles, class T>
void move_tiles(const T* from, T* to, const PassMatrix& matrix, MatrixOrder order) {
  const PassMatrix m = walked(matrix);
  const std::int64_t tile_size = m.rows.block * m.cols.block;
  const TileMove move = tile_move<T>(m, order);
  std::optional<detail::TileTransposes> transposes;
  if (move == TileMove::transpose || move == TileMove::words) transposes.emplace(tile_transposes<T>(m, move, into_tiles));
  // Column steps of the column-major copies on each side, and where element (r, c) of a tile is in
  // the tile and in its plain patch (plain_offset is linear, so relative to the patch's corner).
  const std::int64_t from_column = into_tiles ? m.rows.size : m.rows.block;
  const std::int64_t to_column = into_tiles ? m.rows.block : m.rows.size;
  const auto in_tile = [&](std::int64_t r, std::int64_t c) { return tile_offset(r, c, m.rows.block, m.order); };
  const auto in_patch = [&](std::int64_t r, std::int64_t c) { return plain_offset(r, c, m, order); };
  for_each_tile(m, [&](std::int64_t tile, std::int64_t rows, std::int64_t cols, std::int64_t r0, std::int64_t c0) {
    const std::int64_t patch = plain_offset(r0, c0, m, order);
    const T* in = from + (into_tiles ? patch : tile);
    T* out = to + (into_tiles ? tile : patch);
    if (into_tiles && (rows < m.rows.block || cols < m.cols.block)) std::fill(out, out + tile_size, T{});
    switch (move) {
      case TileMove::columns:
        for (std::int64_t c = 0; c < cols; ++c)
          std::memcpy(out + c * to_column, in + c * from_column, static_cast<std::size_t>(rows) * sizeof(T));
        break;
      case TileMove::transpose:
      case TileMove::words: transposes->of(rows, cols)(tpp::UnaryArgs{.in = in, .out = out}); break;
      case TileMove::elements:
        for (std::int64_t c = 0; c < cols; ++c)
          for (std::int64_t r = 0; r < rows; ++r)
            out[into_tiles ? in_tile(r, c) : in_patch(r, c)] = in[into_tiles ? in_patch(r, c) : in_tile(r, c)];
        break;
    }
  });
}

}  // namespace

template <class T>
void pack(const T* plain, MatrixOrder order, const PassMatrix& m, T* blocked) {
  require_buffers("pack", {{"plain", plain}, {"blocked", blocked}});
  move_tiles<true>(plain, blocked, m, order);
}

template <class T>
void unpack(const T* blocked, const PassMatrix& m, T* plain, MatrixOrder order) {
  require_buffers("unpack", {{"blocked", blocked}, {"plain", plain}});
  move_tiles<false>(blocked, plain, m, order);
}

template <class T>
void pack_relu_backward(const T* grad, const T* forward_out, MatrixOrder order, const PassMatrix& matrix, T* blocked) {
  require_buffers("pack_relu_backward", {{"grad", grad}, {"forward_out", forward_out}, {"blocked", blocked}});
  const PassMatrix m = walked(matrix);
  if (tile_move<T>(m, order) != TileMove::columns) {
    throw Error("pack_relu_backward: column-major tiles from a column-major plain matrix only");
  }
  const std::int64_t tile_size = m.rows.block * m.cols.block;
  // One relu_bwd kernel per tile extent, reading the plain patch (ld: the plain rows) and its
  // forward output alike, writing the tile (ld: the tile's rows).
  const detail::TileTransposes masks(m.rows, m.cols, [&](std::int64_t rows, std::int64_t cols) {
    return detail::relu_backward(data_type_of<T>(), rows, cols, m.rows.size, m.rows.block);
  });
  for_each_tile(m, [&](std::int64_t tile, std::int64_t rows, std::int64_t cols, std::int64_t r0, std::int64_t c0) {
    const std::int64_t patch = plain_offset(r0, c0, m, order);
    T* out = blocked + tile;
    if (rows < m.rows.block || cols < m.cols.block) std::fill(out, out + tile_size, T{});
    masks.of(rows, cols)(tpp::UnaryArgs{.in = grad + patch, .out = out, .aux = forward_out + patch});
  });
}

template void pack(const float*, MatrixOrder, const PassMatrix&, float*);
template void pack(const jit::bfloat16*, MatrixOrder, const PassMatrix&, jit::bfloat16*);
template void unpack(const float*, const PassMatrix&, float*, MatrixOrder);
template void unpack(const jit::bfloat16*, const PassMatrix&, jit::bfloat16*, MatrixOrder);
template void pack(const double*, MatrixOrder, const PassMatrix&, double*);
template void unpack(const double*, const PassMatrix&, double*, MatrixOrder);

template void pack_relu_backward(const float*, const float*, MatrixOrder, const PassMatrix&, float*);
template void pack_relu_backward(const jit::bfloat16*, const jit::bfloat16*, MatrixOrder, const PassMatrix&,
                                 jit::bfloat16*);
template void pack_relu_backward(const double*, const double*, MatrixOrder, const PassMatrix&, double*);

}  // namespace weft::ops
