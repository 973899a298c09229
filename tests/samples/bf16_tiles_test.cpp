// The bf16 tile reformatting of the backward passes (samples/common/bf16_tiles.hpp), against the
// layouts' definitions (blocked_layout.hpp's tile_offset), on tiles larger than a sub-tile.
#include "bf16_tiles.hpp"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "blocked_layout.hpp"

namespace {

using weft::jit::bfloat16;
using weft::samples::TileOrder;
using weft::samples::tile_offset;

std::vector<bfloat16> numbered(std::int64_t count) {
  std::vector<bfloat16> v(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = bfloat16{static_cast<std::uint16_t>(i + 1)};
  return v;
}

// 70 x 66: two sub-tiles and a remainder each way (kSubTile 32), and an odd number of pairs.
constexpr std::int64_t kRows = 70, kCols = 66;

TEST(Bf16Tiles, Transpose) {
  const auto src = numbered(kRows * kCols);
  std::vector<bfloat16> dst(src.size());
  weft::samples::transpose_tile(src.data(), dst.data(), kRows, kCols);
  for (std::int64_t r = 0; r < kRows; ++r)
    for (std::int64_t c = 0; c < kCols; ++c) ASSERT_EQ(dst[r * kCols + c], src[c * kRows + r]) << r << ", " << c;
}

TEST(Bf16Tiles, Vnni2PackFromBf16FloatAndInPlace) {
  const auto src = numbered(kRows * kCols);
  std::vector<bfloat16> dst(src.size()), in_place = src;
  std::vector<float> floats(src.size());
  for (std::size_t i = 0; i < floats.size(); ++i) floats[i] = 1.0f + static_cast<float>(i) / 512;
  std::vector<bfloat16> from_floats(src.size());
  weft::samples::vnni2_pack_tile(src.data(), dst.data(), kRows, kCols);
  weft::samples::vnni2_pack_tile_in_place(in_place.data(), kRows, kCols);
  weft::samples::vnni2_pack_tile(floats.data(), from_floats.data(), kRows, kCols);
  EXPECT_EQ(in_place, dst);
  for (std::int64_t r = 0; r < kRows; ++r) {
    for (std::int64_t c = 0; c < kCols; ++c) {
      const std::int64_t at = tile_offset(r, c, kRows, TileOrder::vnni2), from = c * kRows + r;
      ASSERT_EQ(dst[at], src[from]) << r << ", " << c;
      ASSERT_EQ(from_floats[at], weft::jit::to_bfloat16(floats[from])) << r << ", " << c;  // rounded to nearest even
    }
  }
}

TEST(Bf16Tiles, Vnni2Transpose) {
  const auto src = numbered(kRows * kCols);  // VNNI-2, pairs of columns
  std::vector<bfloat16> dst(src.size());
  weft::samples::vnni2_transpose_tile(src.data(), dst.data(), kRows, kCols);
  for (std::int64_t r = 0; r < kRows; ++r)
    for (std::int64_t c = 0; c < kCols; ++c)
      ASSERT_EQ(dst[tile_offset(c, r, kCols, TileOrder::vnni2)], src[tile_offset(r, c, kRows, TileOrder::vnni2)])
          << r << ", " << c;
}

}  // namespace
