#include <weft/ops/blocked_sums.hpp>

#include <omp.h>

#include <algorithm>
#include <vector>

#include <weft/jit/error.hpp>
#include <weft/ops/element_type.hpp>
#include <weft/tpp/unary.hpp>

namespace weft::ops {
namespace {

// The sums of a column-major m x n patch's rows (reduce_rows_sum: one value per row), in Sum.
template <class T, class Sum>
tpp::Unary row_reduction(std::int64_t m, std::int64_t n, std::int64_t ld_in) {
  const jit::DataType sum = data_type_of<Sum>();
  return tpp::Unary(tpp::UnaryDesc{.op = tpp::UnaryOp::reduce_rows_sum, .m = m, .n = n, .ld_in = ld_in,
                                   .types = {.in = data_type_of<T>(), .out = sum, .compute = sum}});
}

// For each block b of `blocks` (in parallel): the sums of its `patches` patches (patch(b, p): the
// first element of one, reduced by `reduce` into `block` values), added up, its first `extent(b)`
// values written to out + b * block.
template <class Sum, class Patch, class Extent>
void block_sums(const tpp::Unary& reduce, std::int64_t blocks, std::int64_t block, std::int64_t patches, Patch patch,
                Extent extent, Sum* out) {
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < blocks; ++b) {
    std::vector<Sum> total(static_cast<std::size_t>(block), Sum{}), part(total.size());
    for (std::int64_t p = 0; p < patches; ++p) {
      reduce(tpp::UnaryArgs{.in = patch(b, p), .out = part.data()});
      for (std::size_t i = 0; i < total.size(); ++i) total[i] += part[i];
    }
    std::copy(total.begin(), total.begin() + extent(b), out + b * block);
  }
}

template <class T, class Sum>
void row_sums_of(const T* blocked, const PassMatrix& m, Sum* out) {
  require_buffers("row_sums", {{"blocked", blocked}, {"out", out}});
  if (m.order != TileOrder::column_major) throw Error("row_sums: column-major tiles only (an activation's)");
  const std::int64_t bm = m.rows.block, bn = m.cols.block;
  if (m.plain()) {
    // Its rows in parallel, in chunks that divide them, each a window of the matrix (ld: its rows).
    const std::int64_t chunk = parallel_chunk(bm, omp_get_max_threads());
    block_sums(row_reduction<T, Sum>(chunk, bn, bm), bm / chunk, chunk, 1,
               [&](std::int64_t rb, std::int64_t) { return blocked + rb * chunk; }, [&](std::int64_t) { return chunk; },
               out);
    return;
  }
  // A tile holds whole columns of bm rows: its row sums, tile after tile along the columns.
  block_sums(row_reduction<T, Sum>(bm, bn, bm), m.rows.blocks(), bm, m.cols.blocks(),
                [&](std::int64_t rb, std::int64_t cb) {
                  return blocked + blocked_offset(rb * bm, cb * bn, m.rows, m.cols, m.row_block_major, m.order);
                },
                [&](std::int64_t rb) { return m.rows.extent(rb); }, out);
}

template <class T>
void channel_sums_of(const T* blocked, const ActivationLayout& l, float* out) {
  require_buffers("channel_sums", {{"blocked", blocked}, {"out", out}});
  const std::int64_t bc = l.channels.block;
  // A row of a channel block is bc x w (channels fastest): its per-channel sums, row after row of
  // every image.
  block_sums(row_reduction<T, float>(bc, l.w, bc), l.channels.blocks(), bc, l.images * l.h,
                [&](std::int64_t cb, std::int64_t p) {
                  return blocked + l.offset(p / l.h, cb, p % l.h + l.pad_h, l.pad_w);
                },
                [&](std::int64_t cb) { return l.channels.extent(cb); }, out);
}

}  // namespace

void row_sums(const float* blocked, const PassMatrix& m, float* out) { row_sums_of(blocked, m, out); }
void row_sums(const jit::bfloat16* blocked, const PassMatrix& m, float* out) { row_sums_of(blocked, m, out); }
void row_sums(const double* blocked, const PassMatrix& m, double* out) { row_sums_of(blocked, m, out); }
void channel_sums(const float* blocked, const ActivationLayout& l, float* out) { channel_sums_of(blocked, l, out); }
void channel_sums(const jit::bfloat16* blocked, const ActivationLayout& l, float* out) {
  channel_sums_of(blocked, l, out);
}

}  // namespace weft::ops
