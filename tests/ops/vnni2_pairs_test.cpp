// The VNNI-2 pairing of column-major matrices (weft/ops/vnni2_pairs.hpp): what weft.torch's fp32
// layers under autocast hand their bf16 passes, and the f32 gradient moved back.
#include <weft/ops/vnni2_pairs.hpp>

#include <omp.h>

#include <cstdint>
#include <random>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <weft/jit/error.hpp>

namespace weft::ops {
namespace {

using ::testing::HasSubstr;

// Sizes with a tail in every parallel split: 1 and 2 threads, pair counts that do and do not
// divide among them.
class Vnni2Pairs : public ::testing::TestWithParam<std::pair<std::int64_t, std::int64_t>> {};

TEST_P(Vnni2Pairs, PackInterleavesColumnPairsRoundedAndUnpackRestoresThem) {
  const auto [rows, cols] = GetParam();
  std::mt19937 rng(20261129);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  std::vector<float> in(static_cast<std::size_t>(rows * cols));
  for (float& v : in) v = u(rng);
  const int team = omp_get_max_threads();
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    std::vector<jit::bfloat16> packed(in.size());
    pack_vnni2(in.data(), rows, cols, packed.data());
    std::vector<float> pairs(in.size());  // the f32 pairs, as a bf16 pass writes an f32 gradient
    for (std::int64_t j = 0; j < cols; ++j) {
      for (std::int64_t i = 0; i < rows; ++i) {
        const std::size_t at = static_cast<std::size_t>((j / 2) * 2 * rows + 2 * i + j % 2);
        const float v = in[static_cast<std::size_t>(i + j * rows)];
        ASSERT_EQ(packed[at].bits, jit::to_bfloat16(v).bits) << "row " << i << " column " << j;  // rounded to nearest even
        pairs[at] = v;
      }
    }
    std::vector<float> back(in.size(), -1.0f);
    unpack_vnni2(pairs.data(), rows, cols, back.data());
    EXPECT_EQ(back, in) << threads << " threads";
  }
  omp_set_num_threads(team);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Vnni2Pairs,
                         ::testing::Values(std::pair<std::int64_t, std::int64_t>{64, 64},
                                           std::pair<std::int64_t, std::int64_t>{32, 2},
                                           std::pair<std::int64_t, std::int64_t>{7, 30},
                                           std::pair<std::int64_t, std::int64_t>{1, 6},
                                           std::pair<std::int64_t, std::int64_t>{3, 4}));

TEST(Vnni2PairsErrors, OddColumnsAndNullBuffersAreNamed) {
  std::vector<float> in(12);
  std::vector<jit::bfloat16> out(12);
  EXPECT_THAT([&] { pack_vnni2(in.data(), 4, 3, out.data()); },
              ::testing::ThrowsMessage<Error>(HasSubstr("an even number of columns, got 4 x 3")));
  EXPECT_THAT([&] { pack_vnni2(in.data(), 0, 2, out.data()); }, ::testing::ThrowsMessage<Error>(HasSubstr("0 x 2")));
  EXPECT_THAT([&] { unpack_vnni2(nullptr, 2, 2, in.data()); }, ::testing::ThrowsMessage<Error>(HasSubstr("in")));
  EXPECT_THAT([&] { pack_vnni2(in.data(), 2, 2, nullptr); }, ::testing::ThrowsMessage<Error>(HasSubstr("out")));
}

}  // namespace
}  // namespace weft::ops
