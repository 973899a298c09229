// The GEMM samples' untuned configuration (gemm_defaults.hpp) and the hand-given overrides the
// benchmarks put over it.

#include <omp.h>

#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include <weft/ops/gemm_defaults.hpp>

#include "gemm_fwd_data.hpp"

namespace {

using weft::ops::GemmConfigOverride;
using weft::ops::GemmFwdConfig;

// The sample's own check (the output against the product in double) after two runs.
bool runs_correctly(const GemmFwdConfig& config, int threads) {
  omp_set_num_threads(threads);
  const weft::ops::GemmFwd gemm(config);
  const weft::samples::GemmFwdData<float> data(gemm, false, {.a_seed = 5, .b_seed = 6, .bias_seed = 7, .out_fill = 777.0f});
  data.run();
  data.run();
  const weft::samples::Verdict v = data.check();
  return v.norms.passed(v.tolerance);
}

GemmFwdConfig recommended(std::int64_t n, int threads) {
  GemmFwdConfig problem;
  problem.M = problem.N = problem.K = n;
  return weft::ops::recommended_gemm_config(problem, threads);
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

// The rule table (gemm_defaults.hpp): AVX2 32 x 48 x 64 in chunks of 4 K blocks, AVX-512 64 x 48 x
// 64 in chunks of 8; bf16 64 x 128 x 64 in chunks of 4 on both; an MLP keeps bm == bk.
TEST(RecommendedGemmConfig, TilesAndChunksFollowTheVectorWidth) {
  using weft::ops::GemmMachine;
  using weft::ops::recommended_gemm_config;
  GemmFwdConfig problem;
  problem.M = problem.N = problem.K = 2048;
  const GemmFwdConfig avx2 = recommended_gemm_config(problem, 1, GemmMachine{.vector_bytes = 32});
  EXPECT_EQ(std::make_tuple(avx2.bm, avx2.bn, avx2.bk, avx2.kbf), std::make_tuple(32L, 48L, 64L, 8L));
  const GemmFwdConfig avx512 = recommended_gemm_config(problem, 1, GemmMachine{.vector_bytes = 64});
  EXPECT_EQ(std::make_tuple(avx512.bm, avx512.bn, avx512.bk, avx512.kbf), std::make_tuple(64L, 48L, 64L, 4L));
  problem.dtype = weft::jit::DataType::bf16;
  for (int bytes : {32, 64}) {
    const GemmFwdConfig bf16 = recommended_gemm_config(problem, 1, GemmMachine{.vector_bytes = bytes});
    EXPECT_EQ(std::make_tuple(bf16.bm, bf16.bn, bf16.bk, bf16.kbf), std::make_tuple(64L, 128L, 64L, 8L)) << bytes;
  }
  problem.dtype = weft::jit::DataType::f32;
  problem.n_layers = 3;
  problem.N = 256;
  const GemmFwdConfig mlp = recommended_gemm_config(problem, 2, GemmMachine{.vector_bytes = 32});
  EXPECT_EQ(mlp.bm, mlp.bk);
}

// Groups of M blocks: up to 8, at least one per thread; one thread runs "abcb", more "aBcb".
TEST(RecommendedGemmConfig, MBlockGroupsShareTheTeam) {
  using weft::ops::GemmMachine;
  GemmFwdConfig problem;
  problem.M = 256, problem.N = problem.K = 512;
  const GemmFwdConfig one = weft::ops::recommended_gemm_config(problem, 1, GemmMachine{.vector_bytes = 64});
  EXPECT_EQ(one.loop_string, "abcb");
  EXPECT_EQ(one.m_blocks, std::vector<long>{4});  // 4 blocks of 64
  const GemmFwdConfig two = weft::ops::recommended_gemm_config(problem, 2, GemmMachine{.vector_bytes = 64});
  EXPECT_EQ(two.loop_string, "aBcb");
  EXPECT_EQ(two.m_blocks, std::vector<long>{2});
}

// Shapes that are not powers of two (remainder blocks in M, N and K), both entries, 1 to 3
// threads: the sample takes the choice and computes the product.
TEST(RecommendedGemmConfig, TheSampleRunsEveryChoice) {
  using weft::ops::GemmMachine;
  for (const auto& [m, n, k] : {std::tuple{100L, 70L, 130L}, std::tuple{33L, 257L, 65L}, std::tuple{200L, 48L, 600L}})
    for (int bytes : {32, 64})
      for (int threads : {1, 2, 3}) {
        GemmFwdConfig problem;
        problem.M = m, problem.N = n, problem.K = k;
        const GemmFwdConfig c = weft::ops::recommended_gemm_config(problem, threads, GemmMachine{.vector_bytes = bytes});
        EXPECT_TRUE(runs_correctly(c, threads)) << m << "x" << n << "x" << k << " " << c.loop_string << " bm " << c.bm;
      }
}

}  // namespace
