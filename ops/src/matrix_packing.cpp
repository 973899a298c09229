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

}  // namespace

std::int64_t blocked_size(const PassMatrix& m) { return m.rows.padded() * m.cols.padded(); }

template <class T>
void pack(const T* plain, MatrixOrder order, const PassMatrix& m, T* blocked) {
  require_buffers("pack", {{"plain", plain}, {"blocked", blocked}});
  std::fill(blocked, blocked + blocked_size(m), T{});
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < m.cols.size; ++c)
    for (std::int64_t r = 0; r < m.rows.size; ++r) blocked[blocked_offset(r, c, m)] = plain[plain_offset(r, c, m, order)];
}

template <class T>
void unpack(const T* blocked, const PassMatrix& m, T* plain, MatrixOrder order) {
  require_buffers("unpack", {{"blocked", blocked}, {"plain", plain}});
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < m.cols.size; ++c)
    for (std::int64_t r = 0; r < m.rows.size; ++r) plain[plain_offset(r, c, m, order)] = blocked[blocked_offset(r, c, m)];
}

template void pack(const float*, MatrixOrder, const PassMatrix&, float*);
template void pack(const jit::bfloat16*, MatrixOrder, const PassMatrix&, jit::bfloat16*);
template void unpack(const float*, const PassMatrix&, float*, MatrixOrder);
template void unpack(const jit::bfloat16*, const PassMatrix&, jit::bfloat16*, MatrixOrder);

}  // namespace weft::ops
