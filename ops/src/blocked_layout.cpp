#include <weft/ops/blocked_layout.hpp>

#include <cstddef>
#include <string>

#include <weft/jit/error.hpp>
#include <weft/ops/element_type.hpp>

namespace weft::ops {
namespace {

void require_even_pairs(const Blocking& cols_b, TileOrder order) {
  if (order == TileOrder::vnni2 && cols_b.block % 2 != 0) {
    throw Error("a VNNI-2 tile interleaves pairs of columns, so its column block must be even, got " +
                std::to_string(cols_b.block));
  }
}

}  // namespace

std::int64_t blocked_offset(std::int64_t r, std::int64_t c, const Blocking& rows_b, const Blocking& cols_b,
                            bool row_block_major, TileOrder order) {
  const std::int64_t ir = r / rows_b.block, ic = c / cols_b.block;
  const std::int64_t tile = rows_b.block * cols_b.block;
  const std::int64_t block_index = row_block_major ? ir * cols_b.blocks() + ic : ic * rows_b.blocks() + ir;
  return block_index * tile + tile_offset(r % rows_b.block, c % cols_b.block, rows_b.block, order);
}

template <class T>
std::vector<T> to_blocked(const float* plain, const Blocking& rows_b, const Blocking& cols_b, bool row_block_major,
                          TileOrder order) {
  require_even_pairs(cols_b, order);
  const auto total = static_cast<std::size_t>(rows_b.padded() * cols_b.padded());
  std::vector<T> blocked(total, T{});
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < cols_b.size; ++c) {
    for (std::int64_t r = 0; r < rows_b.size; ++r) {
      blocked[static_cast<std::size_t>(blocked_offset(r, c, rows_b, cols_b, row_block_major, order))] =
          from_float<T>(plain[c * rows_b.size + r]);
    }
  }
  return blocked;
}

template <class T>
void from_blocked(const T* blocked, float* plain, const Blocking& rows_b, const Blocking& cols_b,
                  bool row_block_major, TileOrder order) {
  require_even_pairs(cols_b, order);
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < cols_b.size; ++c) {
    for (std::int64_t r = 0; r < rows_b.size; ++r) {
      plain[c * rows_b.size + r] = to_float(blocked[blocked_offset(r, c, rows_b, cols_b, row_block_major, order)]);
    }
  }
}

template std::vector<float> to_blocked(const float*, const Blocking&, const Blocking&, bool, TileOrder);
template std::vector<jit::bfloat16> to_blocked(const float*, const Blocking&, const Blocking&, bool, TileOrder);
template void from_blocked(const float*, float*, const Blocking&, const Blocking&, bool, TileOrder);
template void from_blocked(const jit::bfloat16*, float*, const Blocking&, const Blocking&, bool, TileOrder);
template std::vector<double> to_blocked(const float*, const Blocking&, const Blocking&, bool, TileOrder);
template void from_blocked(const double*, float*, const Blocking&, const Blocking&, bool, TileOrder);

}  // namespace weft::ops
