// Transposed tiles (samples/common/transposed_tiles.hpp): the up-front shared copy and the
// per-thread copies made on first use hold the same transposes, in either slot order, run after run.
#include "transposed_tiles.hpp"

#include <omp.h>

#include <vector>

#include <gtest/gtest.h>

#include "verification.hpp"

namespace {

using weft::samples::TransposedTiles;

// Tile (o, i) of a [outer][inner] grid of rows x cols tiles, transposed, read from `copy`.
void expect_transposed(const TransposedTiles& t, const float* copy, const std::vector<float>& source,
                       std::int64_t rows, std::int64_t cols, std::int64_t inner, std::int64_t o, std::int64_t i) {
  const float* tile = source.data() + (o * inner + i) * rows * cols;
  const float* transposed = copy + t.offset(o, i);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      ASSERT_EQ(transposed[r * cols + c], tile[c * rows + r]) << "tile (" << o << ", " << i << ")";
}

TEST(TransposedTiles, SharedAndPerThreadCopiesHoldTheSameTransposes) {
  const std::int64_t rows = 5, cols = 3, outer = 4, inner = 2;
  std::vector<float> source(static_cast<std::size_t>(outer * inner * rows * cols));
  weft::samples::fill_random(source.data(), static_cast<std::int64_t>(source.size()), 5);
  omp_set_num_threads(2);
  for (bool swap : {false, true}) {
    for (bool per_thread : {false, true}) {
      const TransposedTiles t(rows, cols, outer, inner, swap, per_thread);
      EXPECT_EQ(t.offset(1, 0), (swap ? 1 : inner) * rows * cols);
      for (int run = 0; run < 2; ++run) {
        if (run == 1)
          for (float& v : source) v = -v;  // a new run must transpose the new contents
        t.start(source.data());
        for (std::int64_t i = 0; i < inner; ++i) {
          const float* copy = t.tiles(1, 1, 2, i);  // thread 1 reads tiles 1 and 2 of column i
          expect_transposed(t, copy, source, rows, cols, inner, 1, i);
          expect_transposed(t, copy, source, rows, cols, inner, 2, i);
        }
      }
      const auto copy_bytes = static_cast<std::uint64_t>(outer * inner * rows * cols) * sizeof(float);
      const auto flags = static_cast<std::uint64_t>(2 * outer * inner);
      EXPECT_EQ(t.memory_bytes(2), per_thread ? 2 * copy_bytes + flags : copy_bytes);
    }
  }
}

}  // namespace
