// Transposed tiles (ops/include/weft/ops/transposed_tiles.hpp): the up-front shared copy and the
// per-thread copies made on first use hold the same transposes (or, in bf16, VNNI-2 repacks), in
// either slot order, run after run.
#include <weft/ops/transposed_tiles.hpp>

#include <omp.h>

#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <weft/jit/bfloat16.hpp>
#include <weft/jit/error.hpp>

#include <weft/ops/blocked_layout.hpp>
#include <weft/ops/tile_transpose.hpp>
#include <weft/ops/verification.hpp>

namespace {

using weft::jit::bfloat16;
using weft::jit::DataType;
using weft::ops::TileOrder;
using weft::ops::TileTransform;
using weft::ops::TransposedTiles;

// Tile (o, i) of a [outer][inner] grid of rows x cols tiles, transposed, read from `copy`.
void expect_transposed(const TransposedTiles& t, const float* copy, const std::vector<float>& source,
                       std::int64_t rows, std::int64_t cols, std::int64_t inner, std::int64_t o, std::int64_t i) {
  const float* tile = source.data() + (o * inner + i) * rows * cols;
  const float* transposed = copy + t.offset(o, i);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      ASSERT_EQ(transposed[r * cols + c], tile[c * rows + r]) << "tile (" << o << ", " << i << ")";
}

// A plain column-major source (source_ld: its rows) read in place: tile (o, i) is the window at
// column o * cols, row i * rows, and its transpose lands where the blocked source's tile would.
TEST(TransposedTiles, APlainSourceIsReadInPlaceTileByTile) {
  const std::int64_t rows = 4, cols = 3, outer = 2, inner = 3;  // the matrix: 12 x 6
  const std::int64_t ld = inner * rows;
  std::vector<float> plain(static_cast<std::size_t>(ld * outer * cols));
  weft::ops::fill_random(plain.data(), static_cast<std::int64_t>(plain.size()), 9);
  std::vector<float> blocked;  // the same tiles, contiguous, [outer][inner]
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i)
      for (std::int64_t c = 0; c < cols; ++c)
        for (std::int64_t r = 0; r < rows; ++r) blocked.push_back(plain[static_cast<std::size_t>((o * cols + c) * ld + i * rows + r)]);
  omp_set_num_threads(2);
  for (bool per_thread : {false, true}) {
    const TransposedTiles t(rows, cols, outer, inner, false, per_thread, DataType::f32, TileTransform::transpose,
                            weft::ops::PassCode::build, ld);
    t.start(plain.data());
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t i = 0; i < inner; ++i) expect_transposed(t, t.tiles<float>(0, o, 1, i), blocked, rows, cols, inner, o, i);
  }
  // A stride below the tile's rows, or with VNNI-2, is refused.
  EXPECT_THROW(weft::ops::TileTranspose(4, 4, DataType::f32, false, weft::ops::PassCode::build, 3), weft::Error);
  EXPECT_THROW(weft::ops::TileTranspose(4, 4, DataType::bf16, true, weft::ops::PassCode::build, 8), weft::Error);
}

TEST(TransposedTiles, SharedAndPerThreadCopiesHoldTheSameTransposes) {
  const std::int64_t rows = 5, cols = 3, outer = 4, inner = 2;
  std::vector<float> source(static_cast<std::size_t>(outer * inner * rows * cols));
  weft::ops::fill_random(source.data(), static_cast<std::int64_t>(source.size()), 5);
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
          const float* copy = t.tiles<float>(1, 1, 2, i);  // thread 1 reads tiles 1 and 2 of column i
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

// bf16 tiles, each transform: element (r, c) of source tile (o, i) (rows x cols, in the source's
// order) lands where the destination's order puts it.
// Small tiles, and tiles of whole 8 x 8 blocks and more (the transposes' 16-bit block path).
class Bf16Tiles : public ::testing::TestWithParam<std::pair<std::int64_t, std::int64_t>> {};
INSTANTIATE_TEST_SUITE_P(Sizes, Bf16Tiles, ::testing::Values(std::pair{6L, 4L}, std::pair{32L, 48L}, std::pair{18L, 34L}));

TEST_P(Bf16Tiles, TransformsPermuteEachTile) {
  const auto [rows, cols] = GetParam();
  const std::int64_t outer = 3, inner = 2, tile = rows * cols;
  std::vector<bfloat16> source(static_cast<std::size_t>(outer * inner * tile));
  // Distinct bit patterns (e as a float would repeat past 256 in bf16).
  for (std::size_t e = 0; e < source.size(); ++e) source[e] = weft::jit::bfloat16{static_cast<std::uint16_t>(e + 1)};
  struct Case {
    TileTransform transform;
    TileOrder from, to;
    bool transposed;
  };
  omp_set_num_threads(2);
  for (const Case& k : {Case{TileTransform::transpose, TileOrder::column_major, TileOrder::column_major, true},
                        Case{TileTransform::vnni2_pack, TileOrder::column_major, TileOrder::vnni2, false},
                        Case{TileTransform::vnni2_transpose, TileOrder::vnni2, TileOrder::vnni2, true}}) {
    for (bool per_thread : {false, true}) {
      const TransposedTiles t(rows, cols, outer, inner, true, per_thread, DataType::bf16, k.transform);
      t.start(source.data());
      for (std::int64_t i = 0; i < inner; ++i) {
        const bfloat16* copy = t.tiles<bfloat16>(1, 0, outer, i);
        for (std::int64_t o = 0; o < outer; ++o) {
          const bfloat16* in = source.data() + (o * inner + i) * tile;
          const bfloat16* out = copy + t.offset(o, i);
          for (std::int64_t r = 0; r < rows; ++r) {
            for (std::int64_t c = 0; c < cols; ++c) {
              const std::int64_t at = k.transposed ? weft::ops::tile_offset(c, r, cols, k.to)
                                                   : weft::ops::tile_offset(r, c, rows, k.to);
              ASSERT_EQ(out[at], in[weft::ops::tile_offset(r, c, rows, k.from)])
                  << static_cast<int>(k.transform) << " per_thread " << per_thread << " tile (" << o << ", " << i
                  << ") element (" << r << ", " << c << ")";
            }
          }
        }
      }
      const std::uint64_t scratch = k.transform == TileTransform::vnni2_transpose ? tile * 2 : 0;  // one tile
      EXPECT_EQ(t.memory_bytes(1), static_cast<std::uint64_t>(outer * inner * tile) * 2 + (per_thread ? 6 : 0) + scratch);
    }
  }
}

TEST(TransposedTiles, VnniNeedsBf16AndPairs) {
  EXPECT_THROW(TransposedTiles(4, 4, 1, 1, false, false, DataType::f32, TileTransform::vnni2_pack), weft::Error);
  EXPECT_THROW(TransposedTiles(4, 3, 1, 1, false, false, DataType::bf16, TileTransform::vnni2_pack), weft::Error);
  EXPECT_THROW(TransposedTiles(3, 4, 1, 1, false, false, DataType::bf16, TileTransform::vnni2_transpose),
               weft::Error);
  EXPECT_NO_THROW(TransposedTiles(3, 4, 1, 1, false, false, DataType::bf16, TileTransform::vnni2_pack));
  EXPECT_THROW(TransposedTiles(4, 4, 1, 1, false, false, DataType::f64, TileTransform::vnni2_pack), weft::Error);
  EXPECT_THROW(TransposedTiles(4, 4, 1, 1, false, false, DataType::f64, TileTransform::vnni2_transpose), weft::Error);
  EXPECT_THROW(TransposedTiles(4, 4, 1, 1, false, false, static_cast<DataType>(7)), weft::Error);
}

// f64 tiles (the f64 GEMM passes' W^T and X^T): transposed by the f64 kernels, whole 4 x 4 blocks
// and tails, into the shared copy or per thread.
TEST(TransposedTiles, F64TilesAreTransposed) {
  const std::int64_t rows = 7, cols = 10, outer = 2, inner = 3, tile = rows * cols;
  std::vector<double> source(static_cast<std::size_t>(outer * inner * tile));
  for (std::size_t e = 0; e < source.size(); ++e) source[e] = 1.0 + static_cast<double>(e) * (1.0 + 0x1p-40);
  omp_set_num_threads(2);
  for (bool per_thread : {false, true}) {
    const TransposedTiles t(rows, cols, outer, inner, true, per_thread, DataType::f64);
    t.start(source.data());
    for (std::int64_t i = 0; i < inner; ++i) {
      const double* copy = t.tiles<double>(0, 0, outer, i);
      for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t r = 0; r < rows; ++r)
          for (std::int64_t c = 0; c < cols; ++c)
            ASSERT_EQ(copy[t.offset(o, i) + r * cols + c], source[static_cast<std::size_t>((o * inner + i) * tile + c * rows + r)])
                << "per_thread " << per_thread << " tile (" << o << ", " << i << ") element (" << r << ", " << c << ")";
    }
    EXPECT_EQ(t.memory_bytes(1), static_cast<std::uint64_t>(outer * inner * tile) * 8 + (per_thread ? 6 : 0));
  }
}

TEST(TileTranspose, RefusesWhatItCannotDo) {
  using weft::ops::TileTranspose;
  EXPECT_THROW(TileTranspose(4, 4, DataType::f32, true), weft::Error);   // VNNI-2 is bf16
  EXPECT_THROW(TileTranspose(4, 3, DataType::bf16, true), weft::Error);  // odd columns: half a pair
  EXPECT_THROW(TileTranspose(3, 4, DataType::bf16, true), weft::Error);  // odd rows
  EXPECT_THROW(TileTranspose(4, 4, DataType::f64, true), weft::Error);   // nor f64
  EXPECT_THROW(TileTranspose(4, 4, static_cast<DataType>(7), false), weft::Error);
  EXPECT_EQ(TileTranspose(4, 4, DataType::f64, false).scratch_bytes(), 0);
  EXPECT_EQ(TileTranspose(6, 4, DataType::bf16, true).scratch_bytes(), 48);
  EXPECT_EQ(TileTranspose(5, 3, DataType::bf16, false).scratch_bytes(), 0);
}

}  // namespace
