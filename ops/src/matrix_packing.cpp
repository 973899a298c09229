#include <weft/ops/matrix_packing.hpp>

#include <algorithm>
#include <cstddef>

#include <weft/ops/element_type.hpp>

namespace weft::ops {
namespace {

// Offset of element (r, c) of the plain matrix in its `order`.
std::int64_t plain_offset(std::int64_t r, std::int64_t c, const PassMatrix& m, MatrixOrder order) {
  return order == MatrixOrder::column_major ? c * m.rows.size + r : r * m.cols.size + c;
}

std::int64_t blocked_offset(std::int64_t r, std::int64_t c, const PassMatrix& m) {
  return ops::blocked_offset(r, c, m.rows, m.cols, m.row_block_major, m.order);
}

// Calls visit(tile, rows, cols, r0, c0) for every tile of `m`, in parallel: `tile` the offset of
// its first element in the blocked copy, rows x cols its real elements, (r0, c0) the plain matrix's
// element there. Walking tile by tile keeps the block arithmetic out of the element loops, which
// then only step through one tile (tile_offset) and one plain patch.
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

}  // namespace

std::int64_t blocked_size(const PassMatrix& m) { return m.rows.padded() * m.cols.padded(); }

template <class T>
void pack(const T* plain, MatrixOrder order, const PassMatrix& m, T* blocked) {
  require_buffers("pack", {{"plain", plain}, {"blocked", blocked}});
  const std::int64_t tile_size = m.rows.block * m.cols.block;
  for_each_tile(m, [&](std::int64_t tile, std::int64_t rows, std::int64_t cols, std::int64_t r0, std::int64_t c0) {
    T* out = blocked + tile;
    if (rows < m.rows.block || cols < m.cols.block) std::fill(out, out + tile_size, T{});  // the padding
    for (std::int64_t c = 0; c < cols; ++c)
      for (std::int64_t r = 0; r < rows; ++r)
        out[tile_offset(r, c, m.rows.block, m.order)] = plain[plain_offset(r0 + r, c0 + c, m, order)];
  });
}

template <class T>
void unpack(const T* blocked, const PassMatrix& m, T* plain, MatrixOrder order) {
  require_buffers("unpack", {{"blocked", blocked}, {"plain", plain}});
  for_each_tile(m, [&](std::int64_t tile, std::int64_t rows, std::int64_t cols, std::int64_t r0, std::int64_t c0) {
    const T* in = blocked + tile;
    for (std::int64_t c = 0; c < cols; ++c)
      for (std::int64_t r = 0; r < rows; ++r)
        plain[plain_offset(r0 + r, c0 + c, m, order)] = in[tile_offset(r, c, m.rows.block, m.order)];
  });
}

template void pack(const float*, MatrixOrder, const PassMatrix&, float*);
template void pack(const jit::bfloat16*, MatrixOrder, const PassMatrix&, jit::bfloat16*);
template void unpack(const float*, const PassMatrix&, float*, MatrixOrder);
template void unpack(const jit::bfloat16*, const PassMatrix&, jit::bfloat16*, MatrixOrder);
template void pack(const double*, MatrixOrder, const PassMatrix&, double*);
template void unpack(const double*, const PassMatrix&, double*, MatrixOrder);

}  // namespace weft::ops
