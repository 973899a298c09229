#include "blocked_layout.hpp"

#include <cstddef>

namespace weft::samples {
namespace {

// Offset of element (r, c) of the plain matrix inside the blocked buffer.
std::int64_t blocked_offset(std::int64_t r, std::int64_t c, const Blocking& rows_b,
                            const Blocking& cols_b, bool row_block_major) {
  const std::int64_t ir = r / rows_b.block, ic = c / cols_b.block;
  const std::int64_t tile = rows_b.block * cols_b.block;
  const std::int64_t block_index =
      row_block_major ? ir * cols_b.blocks() + ic : ic * rows_b.blocks() + ir;
  return block_index * tile + (c % cols_b.block) * rows_b.block + (r % rows_b.block);
}

}  // namespace

std::vector<float> to_blocked(const float* plain, const Blocking& rows_b, const Blocking& cols_b,
                              bool row_block_major) {
  const auto total = static_cast<std::size_t>(rows_b.blocks() * rows_b.block * cols_b.blocks() *
                                              cols_b.block);
  std::vector<float> blocked(total, 0.0f);
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < cols_b.size; ++c) {
    for (std::int64_t r = 0; r < rows_b.size; ++r) {
      blocked[static_cast<std::size_t>(blocked_offset(r, c, rows_b, cols_b, row_block_major))] =
          plain[c * rows_b.size + r];
    }
  }
  return blocked;
}

void from_blocked(const float* blocked, float* plain, const Blocking& rows_b,
                  const Blocking& cols_b, bool row_block_major) {
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < cols_b.size; ++c) {
    for (std::int64_t r = 0; r < rows_b.size; ++r) {
      plain[c * rows_b.size + r] = blocked[blocked_offset(r, c, rows_b, cols_b, row_block_major)];
    }
  }
}

}  // namespace weft::samples
