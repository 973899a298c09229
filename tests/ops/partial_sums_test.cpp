// PartialSums: first touches write, later touches add, the reduction sums the touched copies
// (zero for a tile none touched), and a new run forgets the previous one's touches.
#include <vector>

#include <gtest/gtest.h>

#include <weft/ops/partial_sums.hpp>

namespace {

using weft::ops::PartialSums;

constexpr std::int64_t kTile = 20;  // not a multiple of a vector: the kernels' tails too

// Adds `value` to tile `tile` of copy `copy` as a sample's body does: written on a first touch.
void add(const PartialSums& sums, std::int64_t copy, std::int64_t tile, float value) {
  bool first = false;
  float* t = sums.tile(copy, tile, first);
  for (std::int64_t i = 0; i < kTile; ++i) t[i] = first ? value : t[i] + value;
}

TEST(PartialSums, SumsTheTouchedTilesOfEachCopy) {
  const PartialSums sums(kTile, 4, 3);
  std::vector<float> out(4 * kTile, 555.0f);  // garbage: every tile must be written
  sums.start(out.data());
  add(sums, 0, 0, 1.0f);
  add(sums, 1, 0, 2.0f);
  add(sums, 1, 1, 4.0f);
  add(sums, 2, 1, 8.0f);
  add(sums, 2, 2, 16.0f);
  add(sums, 2, 2, 32.0f);
  sums.reduce();
  const float expected[4] = {3.0f, 12.0f, 48.0f, 0.0f};  // tile 3: nobody's
  for (std::int64_t t = 0; t < 4; ++t)
    for (std::int64_t i = 0; i < kTile; ++i) EXPECT_EQ(out[t * kTile + i], expected[t]) << t << " " << i;

  // The next run starts afresh: copy 2's tile 2 is not added to what it held.
  sums.start(out.data());
  add(sums, 2, 2, 1.0f);
  add(sums, 0, 3, 2.0f);
  sums.reduce();
  const float again[4] = {0.0f, 0.0f, 1.0f, 2.0f};
  for (std::int64_t t = 0; t < 4; ++t) EXPECT_EQ(out[t * kTile], again[t]) << t;
  EXPECT_EQ(sums.copies(), 3);
  EXPECT_GE(sums.memory_bytes(), 2u * 4 * kTile * sizeof(float));
}

TEST(PartialSums, BadSizesAreErrors) {
  EXPECT_THROW(PartialSums(0, 4, 2), weft::Error);
  EXPECT_THROW(PartialSums(8, 0, 2), weft::Error);
  EXPECT_THROW(PartialSums(8, 4, -1), weft::Error);
  EXPECT_NO_THROW(PartialSums(8, 4, 0));
}

}  // namespace
