#include <weft/tuner/cost_model.hpp>
#include <weft/tuner/tuner.hpp>

#include <gtest/gtest.h>

#include <weft/parlooper/loop_string.hpp>

#if __has_include(<weft/ops/gemm_workload.hpp>)  // the GEMM and convolution operators, when ops/ is built
#include <weft/ops/conv_workload.hpp>
#include <weft/ops/gemm_workload.hpp>
#define WEFT_TUNER_HAVE_GEMM 1
#endif

namespace weft::tuner {
namespace {

// The GEMM sample's workload, a real one to prune.
using ops::GemmWorkload;

using parlooper::parse_loop_string;

const std::vector<LogicalLoop> kGemmLoops{{0, 8, 1, true}, {0, 8, 1, false}, {0, 8, 1, false}};

TEST(Legality, RejectsAParallelReduction) {
  const auto problem = legality_problem(parse_loop_string("Abc", 3), kGemmLoops, {}, 2, false);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("reduction"), std::string::npos);
  EXPECT_FALSE(legality_problem(parse_loop_string("Abc", 3), kGemmLoops, {}, 2, true));
  // A reduction of one iteration has nothing to race on.
  const std::vector<LogicalLoop> single_k{{0, 8, 8, true}, {0, 8, 1, false}, {0, 8, 1, false}};
  EXPECT_FALSE(legality_problem(parse_loop_string("Abc", 3), single_k, {}, 2, false));
}

TEST(Legality, RejectsNestsWithoutParallelismForManyThreads) {
  EXPECT_TRUE(legality_problem(parse_loop_string("abc", 3), kGemmLoops, {}, 2, false));
  EXPECT_FALSE(legality_problem(parse_loop_string("abc", 3), kGemmLoops, {}, 1, false));
}

TEST(Legality, RejectsGridsOfAnotherThreadCountAndBadBlocks) {
  EXPECT_TRUE(legality_problem(parse_loop_string("aB{R:2}C{C:2}", 3), kGemmLoops, {}, 2, false));
  EXPECT_FALSE(legality_problem(parse_loop_string("aB{R:2}C{C:2}", 3), kGemmLoops, {}, 4, false));
  // "bBc" needs one block size for b.
  EXPECT_TRUE(legality_problem(parse_loop_string("aBbc", 3), kGemmLoops, {}, 2, false));
  EXPECT_FALSE(legality_problem(parse_loop_string("aBbc", 3), kGemmLoops, {{}, {4}}, 2, false));
}

TEST(Imbalance, CountsTheSlowestThreadsShare) {
  const std::vector<LogicalLoop> three{{0, 1, 1, true}, {0, 3, 1, false}, {0, 8, 1, false}};
  EXPECT_DOUBLE_EQ(parallel_imbalance(parse_loop_string("aBc", 3), three, {}, 2), 4.0 / 3.0);
  EXPECT_DOUBLE_EQ(parallel_imbalance(parse_loop_string("aBC", 3), three, {}, 2), 1.0);
  EXPECT_DOUBLE_EQ(parallel_imbalance(parse_loop_string("abc", 3), three, {}, 2), 2.0);
  // Blocked: b in blocks of 2 -> 2 outer iterations of 2 and 1 rows: balanced by count, not by work.
  EXPECT_DOUBLE_EQ(parallel_imbalance(parse_loop_string("aBcb", 3), three, {{}, {2}}, 2), 4.0 / 3.0);
  const std::vector<LogicalLoop> four{{0, 1, 1, true}, {0, 4, 1, false}, {0, 8, 1, false}};
  EXPECT_DOUBLE_EQ(parallel_imbalance(parse_loop_string("aBcb", 3), four, {{}, {2}}, 2), 1.0);
}

TEST(CostModel, KeepingTheOutputBlockAcrossTheReductionMovesLessData) {
  // A 4096^3 GEMM in 32-blocks. With the K loop outermost ("aBC") every C block travels to and
  // from L2 once per K block; with K innermost ("BCa") once in total.
  const std::vector<LogicalLoop> loops{{0, 128, 1, true}, {0, 128, 1, false}, {0, 128, 1, false}};
  CostInputs in;
  in.tensors = {{"A", {0, 1}, 32 * 32 * 4, false}, {"B", {0, 2}, 32 * 32 * 4, false}, {"C", {1, 2}, 32 * 32 * 4, true}};
  in.total_flops = 2.0 * 4096 * 4096 * 4096;
  const MachineModel m;
  const auto k_outside = estimate_cost(parse_loop_string("aBC", 3), loops, {}, in, m, 1);
  const auto k_inside = estimate_cost(parse_loop_string("BCa", 3), loops, {}, in, m, 1);
  EXPECT_LT(k_inside.traffic_bytes[1], k_outside.traffic_bytes[1]);
  EXPECT_LT(k_inside.seconds, k_outside.seconds);
  EXPECT_DOUBLE_EQ(k_inside.calls_per_thread, 128.0 * 128 * 128);
  EXPECT_DOUBLE_EQ(k_inside.imbalance, 1.0);
}

TEST(CostModel, ImbalanceScalesTheEstimate) {
  const std::vector<LogicalLoop> loops{{0, 1, 1, true}, {0, 3, 1, false}, {0, 8, 1, false}};
  CostInputs in;
  in.tensors = {{"C", {1, 2}, 4096, true}};
  in.total_flops = 1e9;
  const MachineModel m;
  const auto b = estimate_cost(parse_loop_string("aBc", 3), loops, {}, in, m, 2);
  const auto c = estimate_cost(parse_loop_string("abC", 3), loops, {}, in, m, 2);
  EXPECT_GT(b.seconds, c.seconds);
  EXPECT_DOUBLE_EQ(b.imbalance, 4.0 / 3.0);
}

#ifdef WEFT_TUNER_HAVE_GEMM
TEST(SearchSpace, GemmSpaceIsDeduplicatedLegalAndRankedByTheModel) {
  // Two chunks: the reduction loop runs twice, so its place matters (single-trip loops do not
  // make distinct candidates).
  GemmWorkload gemm({.M = 96, .N = 64, .K = 64},
                    {.bm = {32}, .bn = {32}, .bk = {32}, .chunks = {2}, .specs = {parse_loop_spec("a_0_K,b_0_M,c_0_N")}});
  TunerOptions options;
  options.threads = 2;
  const SearchSpace space = build_search_space(gemm, options);
  EXPECT_EQ(space.stats.enumerated, 16u);
  EXPECT_EQ(space.stats.legal, 16u);
  // Mb = 3: B alone over 2 threads is 33% imbalanced; B and C together (6 blocks) or C alone
  // (2 blocks) are balanced.
  EXPECT_LT(space.stats.balanced, space.stats.legal);
  ASSERT_EQ(space.candidates.size(), space.stats.balanced);
  for (std::size_t i = 1; i < space.candidates.size(); ++i)
    EXPECT_LE(space.candidates[i - 1].estimate.seconds, space.candidates[i].estimate.seconds);
  for (const auto& c : space.candidates) {
    EXPECT_EQ(c.config.loop_string.find('A'), std::string::npos);
    EXPECT_NE(c.config.loop_string, "aBc");
  }
}

TEST(SearchSpace, CanonicalDuplicatesAreCountedOnce) {
  // Two identical specs enumerate every string twice.
  const auto spec = parse_loop_spec("a_0_K,b_0_M,c_0_N");
  GemmWorkload gemm({.M = 64, .N = 64, .K = 64}, {.bm = {32}, .bn = {32}, .bk = {32}, .chunks = {2}, .specs = {spec, spec}});
  TunerOptions options;
  options.threads = 2;
  const SearchSpace space = build_search_space(gemm, options);
  EXPECT_EQ(space.stats.enumerated, 32u);
  EXPECT_EQ(space.stats.distinct, 16u);
  // One chunk: loop a runs once, and strings that differ only in where it stands are one.
  GemmWorkload one_chunk({.M = 64, .N = 64, .K = 64}, {.bm = {32}, .bn = {32}, .bk = {32}, .chunks = {1}, .specs = {spec}});
  EXPECT_EQ(build_search_space(one_chunk, options).stats.distinct, 6u);
}

// A convolution's loops that run once (here the image loop at N = 1, and the 3 x 3 taps that
// the forward's kernel folds in) are not permuted: the forward pass's space had 11 million
// (string, blocks) choices for 22520 distinct candidates, and walking them took 29 s of a 1 s
// tuning budget. Every candidate keeps those loops outermost and sequential.
TEST(SearchSpace, ConvolutionLoopsThatRunOnceAreNotPermuted) {
  const ops::ConvShape shape{.N = 1, .H = 56, .W = 56, .C = 64, .K = 64, .R = 3, .S = 3, .pad_h = 1, .pad_w = 1};
  const ops::ConvWorkload conv(shape, ops::ConvPassKind::fwd);
  TunerOptions options;
  options.threads = 2;
  const SearchSpace space = build_search_space(conv, options);
  EXPECT_LT(space.stats.enumerated, 100000u);
  ASSERT_FALSE(space.candidates.empty());
  for (const Knobs& knobs : conv.knob_choices()) {
    const std::vector<LogicalLoop> loops = conv.loops(knobs);
    for (const Candidate& c : space.candidates) {
      if (c.config.knobs != knobs) continue;
      const std::string& s = c.config.loop_string;
      std::size_t fixed = 0;
      for (std::size_t x = 0; x < loops.size(); ++x) {
        if (loops[x].trips() > 1 || s.find(static_cast<char>('a' + x)) != s.rfind(static_cast<char>('a' + x))) continue;
        ASSERT_EQ(s[fixed], static_cast<char>('a' + x)) << s;  // outermost, lower case, in order
        ++fixed;
      }
    }
  }
}

#endif  // WEFT_TUNER_HAVE_GEMM

}  // namespace
}  // namespace weft::tuner
