#include "bf16_tiles.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace weft::samples {
namespace {

// fn(r0, r1, c0, c1) over the sub-blocks of a rows x cols index space.
template <class Fn>
void for_sub_tiles(std::int64_t rows, std::int64_t cols, Fn&& fn) {
  for (std::int64_t c0 = 0; c0 < cols; c0 += kSubTile)
    for (std::int64_t r0 = 0; r0 < rows; r0 += kSubTile)
      fn(r0, std::min(rows, r0 + kSubTile), c0, std::min(cols, c0 + kSubTile));
}

jit::bfloat16 to_bf16(jit::bfloat16 x) { return x; }
jit::bfloat16 to_bf16(float x) { return jit::to_bfloat16(x); }

template <class Src>
void pack(const Src* src, jit::bfloat16* dst, std::int64_t rows, std::int64_t cols) {
  // Over column pairs and rows: each sub-block reads 2 x kSubTile columns' worth of rows and writes
  // kSubTile interleaved pair rows.
  for_sub_tiles(rows, cols / 2, [&](std::int64_t r0, std::int64_t r1, std::int64_t p0, std::int64_t p1) {
    for (std::int64_t p = p0; p < p1; ++p) {
      const Src* even = src + 2 * p * rows;
      const Src* odd = even + rows;
      jit::bfloat16* out = dst + 2 * p * rows;
      for (std::int64_t r = r0; r < r1; ++r) {
        out[2 * r] = to_bf16(even[r]);
        out[2 * r + 1] = to_bf16(odd[r]);
      }
    }
  });
}

}  // namespace

void transpose_tile(const jit::bfloat16* src, jit::bfloat16* dst, std::int64_t rows, std::int64_t cols) {
  for_sub_tiles(rows, cols, [&](std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1) {
    for (std::int64_t r = r0; r < r1; ++r)
      for (std::int64_t c = c0; c < c1; ++c) dst[r * cols + c] = src[c * rows + r];
  });
}

void vnni2_pack_tile(const jit::bfloat16* src, jit::bfloat16* dst, std::int64_t rows, std::int64_t cols) {
  pack(src, dst, rows, cols);
}

void vnni2_pack_tile(const float* src, jit::bfloat16* dst, std::int64_t rows, std::int64_t cols) {
  pack(src, dst, rows, cols);
}

void vnni2_pack_tile_in_place(jit::bfloat16* tile, std::int64_t rows, std::int64_t cols) {
  // A column pair occupies the same 2 * rows elements before and after: interleave it through a
  // copy of the pair, kept per thread across calls.
  thread_local std::vector<jit::bfloat16> pair;
  pair.resize(static_cast<std::size_t>(2 * rows));
  for (std::int64_t p = 0; p < cols / 2; ++p) {
    jit::bfloat16* columns = tile + 2 * p * rows;
    std::memcpy(pair.data(), columns, static_cast<std::size_t>(2 * rows) * sizeof(jit::bfloat16));
    pack(pair.data(), columns, rows, 2);
  }
}

void vnni2_transpose_tile(const jit::bfloat16* src, jit::bfloat16* dst, std::int64_t rows, std::int64_t cols) {
  // Both layouts hold 2 x 2 groups of four adjacent values: source group (row pair i, column pair
  // j) is W(2i, 2j), W(2i, 2j+1), W(2i+1, 2j), W(2i+1, 2j+1) at j * 2 * rows + 4 * i; the
  // destination's group (i, j) is the same values with the middle two swapped, at
  // i * 2 * cols + 4 * j.
  for_sub_tiles(rows / 2, cols / 2, [&](std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1) {
    for (std::int64_t i = i0; i < i1; ++i) {
      jit::bfloat16* out = dst + i * 2 * cols;
      for (std::int64_t j = j0; j < j1; ++j) {
        const jit::bfloat16* group = src + j * 2 * rows + 4 * i;
        out[4 * j] = group[0];
        out[4 * j + 1] = group[2];
        out[4 * j + 2] = group[1];
        out[4 * j + 3] = group[3];
      }
    }
  });
}

}  // namespace weft::samples
