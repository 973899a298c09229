// The GEMM samples' untuned configuration (gemm_defaults.hpp) and the hand-given overrides the
// benchmarks put over it.
#include "gemm_defaults.hpp"

#include <tuple>

#include <gtest/gtest.h>

namespace {

using weft::samples::GemmConfigOverride;
using weft::samples::GemmFwdConfig;

GemmFwdConfig recommended(std::int64_t n, int threads) {
  GemmFwdConfig problem;
  problem.M = problem.N = problem.K = n;
  return weft::samples::recommended_gemm_config(problem, threads);
}

TEST(GemmConfigOverride, EmptyKeepsTheChosenConfiguration) {
  GemmFwdConfig c = recommended(2048, 2);
  const GemmFwdConfig chosen = c;
  GemmConfigOverride{}.apply(c);
  EXPECT_EQ(c.loop_string, chosen.loop_string);
  EXPECT_EQ(c.m_blocks, chosen.m_blocks);
  EXPECT_EQ(std::make_tuple(c.bm, c.bn, c.bk, c.kbf), std::make_tuple(chosen.bm, chosen.bn, chosen.bk, chosen.kbf));
}

// A loop string alone replaces the string and its block lists, not the tiles or the chunks (the
// FP32 benchmark's overrides used to reset those to GemmFwdConfig's defaults).
TEST(GemmConfigOverride, ALoopStringBringsItsBlocksAndKeepsTheTiles) {
  GemmFwdConfig c = recommended(2048, 2);
  const GemmFwdConfig chosen = c;
  ASSERT_FALSE(chosen.m_blocks.empty());
  GemmConfigOverride loop;
  loop.loop_string = "abc";
  loop.apply(c);
  EXPECT_EQ(c.loop_string, "abc");
  EXPECT_TRUE(c.m_blocks.empty());
  EXPECT_EQ(std::make_tuple(c.bm, c.bn, c.bk, c.kbf), std::make_tuple(chosen.bm, chosen.bn, chosen.bk, chosen.kbf));
}

TEST(GemmConfigOverride, GivenTilesReplaceOnlyThemselves) {
  GemmFwdConfig c = recommended(1024, 1);
  const GemmFwdConfig chosen = c;
  GemmConfigOverride tiles;
  tiles.bn = 96;
  tiles.kbf = 2;
  tiles.apply(c);
  EXPECT_EQ(c.loop_string, chosen.loop_string);
  EXPECT_EQ(std::make_tuple(c.bm, c.bn, c.bk, c.kbf), std::make_tuple(chosen.bm, 96L, chosen.bk, 2L));
}

}  // namespace
