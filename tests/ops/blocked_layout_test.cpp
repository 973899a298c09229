// Plain <-> blocked matrices (ops/include/weft/ops/blocked_layout.hpp), in f32 and bf16, column-major and
// VNNI-2 tiles.
#include <weft/ops/blocked_layout.hpp>

#include <vector>

#include <gtest/gtest.h>

#include <weft/jit/bfloat16.hpp>
#include <weft/jit/error.hpp>

namespace {

using namespace weft::ops;

TEST(BlockedLayout, RoundTripsWithPadding) {
  const Blocking rows{13, 4}, cols{7, 3};
  EXPECT_EQ(rows.padded(), 16);
  std::vector<float> plain(13 * 7);
  for (std::size_t i = 0; i < plain.size(); ++i) plain[i] = static_cast<float>(i + 1);
  for (bool row_major : {true, false}) {
    const auto blocked = to_blocked(plain.data(), rows, cols, row_major);
    EXPECT_EQ(blocked.size(), 16u * 9u);
    std::vector<float> back(plain.size());
    from_blocked(blocked.data(), back.data(), rows, cols, row_major);
    EXPECT_EQ(back, plain);
    double padded_sum = 0, total = 0;
    for (float v : blocked) total += v;
    for (float v : plain) padded_sum += v;
    EXPECT_EQ(total, padded_sum) << "padding must be zero";
  }
}

// bf16 tiles: values rounded to nearest even on the way in, widened exactly on the way out; VNNI-2
// interleaves each column pair row by row (blocked_layout.hpp's 4 x 4 picture).
TEST(BlockedLayout, Bf16AndVnni2Tiles) {
  const Blocking rows{5, 4}, cols{6, 4};  // a remainder in each
  std::vector<float> plain(5 * 6);
  for (std::size_t i = 0; i < plain.size(); ++i) plain[i] = 1.0f + static_cast<float>(i) / 256;  // 1 + i/256
  for (TileOrder order : {TileOrder::column_major, TileOrder::vnni2}) {
    const auto blocked = to_blocked<weft::jit::bfloat16>(plain.data(), rows, cols, true, order);
    ASSERT_EQ(blocked.size(), 8u * 8u);
    // Block (0, 0), element (1, 2): column-major at 2 * 4 + 1, VNNI-2 at (2 / 2) * 8 + 2 * 1 + 0.
    const std::size_t at = order == TileOrder::vnni2 ? 10 : 9;
    EXPECT_EQ(weft::jit::to_float(blocked[at]), weft::jit::to_float(weft::jit::to_bfloat16(plain[2 * 5 + 1])));
    std::vector<float> back(plain.size());
    from_blocked(blocked.data(), back.data(), rows, cols, true, order);
    for (std::size_t i = 0; i < plain.size(); ++i)
      EXPECT_EQ(back[i], weft::jit::to_float(weft::jit::to_bfloat16(plain[i]))) << i;
  }
  // 1 + 1/256 is a tie between 1 and 1 + 1/128: to even, 1.
  EXPECT_EQ(weft::jit::to_float(to_blocked<weft::jit::bfloat16>(plain.data() + 1, {1, 1}, {1, 1}, false)[0]), 1.0f);
  EXPECT_THROW(to_blocked<weft::jit::bfloat16>(plain.data(), rows, {6, 3}, true, TileOrder::vnni2), weft::Error);
}

}  // namespace
