// Plain <-> blocked matrices (samples/common/blocked_layout.hpp).
#include "blocked_layout.hpp"

#include <vector>

#include <gtest/gtest.h>

namespace {

using namespace weft::samples;

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

}  // namespace
