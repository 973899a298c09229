#include <weft/tuner/search_space.hpp>

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

namespace weft::tuner {
namespace {

std::set<std::string> as_set(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

TEST(ParlooperRules, YieldSixteenCandidatesForTheBasicGemmSpec) {
  const auto strings = parlooper_loop_strings(parse_loop_spec("a_0_K,b_0_M,c_0_N"));
  // Hand-counted: B alone in 6 orders, C alone in 6, B and C adjacent in 4 (BaC/CaB collapse into
  // Bac/Cab, already counted).
  const std::set<std::string> expected{"aBc", "acB", "Bac", "Bca", "caB", "cBa", "abC", "aCb",
                                       "bCa", "Cba", "baC", "Cab", "aBC", "aCB", "BCa", "CBa"};
  EXPECT_EQ(strings.size(), 16u);
  EXPECT_EQ(as_set(strings), expected);
}

TEST(WeftRules, AgreeWithParlooperOnTheBasicGemmSpecForTwoThreads) {
  const auto spec = parse_loop_spec("a_0_K,b_0_M,c_0_N");
  const auto ours = enumerate_loop_strings(spec, {.threads = 2});
  EXPECT_EQ(ours.size(), 16u);
  EXPECT_EQ(as_set(ours), as_set(parlooper_loop_strings(spec)));
}

TEST(WeftRules, OneThreadGivesTheOrdersOnly) {
  EXPECT_EQ(enumerate_loop_strings(parse_loop_spec("a_0_K,b_0_M,c_0_N"), {.threads = 1}).size(), 6u);
  // abbc without "bb": 12 orders minus the 6 with bb adjacent.
  const auto orders = enumerate_loop_strings(parse_loop_spec("a_0_K,b_1_M,c_0_N"), {.threads = 1});
  EXPECT_EQ(orders.size(), 6u);
  for (const auto& s : orders) EXPECT_EQ(s.find("bb"), std::string::npos) << s;
}

TEST(WeftRules, GridsUseExactlyTheThreadCount) {
  const auto spec = parse_loop_spec("a_0_K,b_0_M,c_0_N");
  const auto strings = enumerate_loop_strings(spec, {.threads = 4});
  std::size_t grids = 0;
  for (const auto& s : strings) {
    if (s.find('{') == std::string::npos) continue;
    ++grids;
    EXPECT_NE(s.find("{R:2}"), std::string::npos) << s;
    EXPECT_NE(s.find("{C:2}"), std::string::npos) << s;
  }
  EXPECT_EQ(grids, 6u);  // one (b, c) pair per order, 2 x 2
  EXPECT_EQ(strings.size(), 22u);
  // 2 threads have no grid with both sides >= 2; a prime count neither.
  for (int t : {2, 3, 5})
    for (const auto& s : enumerate_loop_strings(spec, {.threads = t})) EXPECT_EQ(s.find('{'), std::string::npos);
}

TEST(WeftRules, NeverParallelizeTheReductionUnlessAllowed) {
  const auto spec = parse_loop_spec("a_0_K,b_0_M,c_0_N");
  for (const auto& s : enumerate_loop_strings(spec, {.threads = 2})) EXPECT_EQ(s.find('A'), std::string::npos) << s;
  const auto with = enumerate_loop_strings(spec, {.threads = 2, .allow_parallel_reduction = true});
  EXPECT_TRUE(std::any_of(with.begin(), with.end(), [](const std::string& s) { return s.find('A') != std::string::npos; }));
}

// Loops that run once stand outermost, sequential and in order: only the others are permuted.
TEST(WeftRules, FixedLettersStandOutermostAndAreNotPermuted) {
  const auto spec = parse_loop_spec("a_0_K,b_0_M,c_0_N,d_0_N");
  const auto strings = enumerate_loop_strings(spec, {.threads = 2, .fixed_letters = "ac"});
  const auto free = enumerate_loop_strings(parse_loop_spec("a_0_M,b_0_N"), {.threads = 2});
  ASSERT_EQ(strings.size(), free.size());
  for (std::size_t i = 0; i < strings.size(); ++i) {
    // b and d take the places of a and b of the two-loop spec.
    std::string expected = "ac";
    for (char c : free[i]) expected += c == 'a' ? 'b' : c == 'A' ? 'B' : c == 'b' ? 'd' : 'D';
    EXPECT_EQ(strings[i], expected);
  }
  EXPECT_EQ(enumerate_loop_strings(spec, {.threads = 1, .fixed_letters = "ac"}), (std::vector<std::string>{"acbd", "acdb"}));
}

TEST(BlockChains, DivisorsWithoutRemainders) {
  const LogicalLoop loop{0, 12, 1, false};
  const BlockOptions exact{.allow_remainder = false, .max_choices = 0};
  EXPECT_EQ(enumerate_block_chains(loop, 0, exact), std::vector<std::vector<long>>{{}});
  EXPECT_EQ(enumerate_block_chains(loop, 1, exact), (std::vector<std::vector<long>>{{2}, {3}, {4}, {6}}));
  // Two levels, each dividing its parent: (4,2), (6,2), (6,3).
  EXPECT_EQ(enumerate_block_chains(loop, 2, exact).size(), 3u);
}

TEST(BlockChains, RemaindersAddPowersOfTwoAndRespectTheStep) {
  const LogicalLoop loop{0, 24, 2, false};  // 12 steps of 2
  const auto chains = enumerate_block_chains(loop, 1, {.allow_remainder = true, .max_choices = 0});
  EXPECT_EQ(chains, (std::vector<std::vector<long>>{{4}, {6}, {8}, {12}, {16}}));  // 2,3,4,6,8 steps
  EXPECT_TRUE(enumerate_block_chains({0, 2, 1, false}, 1, {}).empty());  // too short to block
}

TEST(BlockChains, MaxChoicesSpreadsTheCandidates) {
  const auto chains = enumerate_block_chains({0, 720, 1, false}, 1, {.allow_remainder = false, .max_choices = 4});
  ASSERT_EQ(chains.size(), 4u);
  EXPECT_EQ(chains.front(), std::vector<long>{2});
  EXPECT_EQ(chains.back(), std::vector<long>{360});
}

}  // namespace
}  // namespace weft::tuner
