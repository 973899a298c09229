// Work-shared runs count the tuples that exist (issue 12): a remainder block adds only its own
// values, so the static split is balanced as OpenMP's, and neither run time nor the 64-bit count
// depends on block sizes. Both engines.
#include <gtest/gtest.h>
#include <omp.h>

#include <climits>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "run_body.hpp"
#include "weft/parlooper/threaded_loop.hpp"

namespace weft::parlooper {
namespace {

constexpr EngineKind kEngines[] = {EngineKind::reference, EngineKind::jit};

class CollapsedRunTest : public ::testing::TestWithParam<EngineKind> {
 protected:
  // Body calls per thread, and every point visited (with how often).
  struct Result {
    std::vector<int> calls_per_thread;
    std::map<std::vector<int>, int> visits;
  };

  Result run(const std::vector<LoopSpecs>& specs, const std::string& text, int threads) const {
    omp_set_num_threads(threads);
    const DynamicThreadedLoop loop(specs, text, GetParam());
    Result result;
    result.calls_per_thread.assign(static_cast<std::size_t>(threads), 0);
    std::mutex mutex;
    testing::run_body(loop, [&](int* ind) {
      std::lock_guard lock(mutex);
      result.calls_per_thread[static_cast<std::size_t>(DynamicThreadedLoop::get_tid(ind))]++;
      result.visits[std::vector<int>(ind, ind + specs.size())]++;
    });
    return result;
  }
};

INSTANTIATE_TEST_SUITE_P(Engines, CollapsedRunTest, ::testing::ValuesIn(kEngines),
                         [](const auto& engine_info) { return engine_info.param == EngineKind::jit ? "jit" : "reference"; });

// The case: AAccbb with a = {0,7,1,{5}} on 4 threads gave 48/48/16/0 body calls (the
// remainder block [5,7) was counted as a full block of 5). Seven tuples of a: 2/2/2/1.
TEST_P(CollapsedRunTest, RemainderBlockIsCountedByItsTrueSize) {
  const Result r = run({LoopSpecs{0, 7, 1, {5}}, LoopSpecs{0, 4, 1, {2}}, LoopSpecs{0, 2, 1, {1}}}, "AAccbb", 4);
  EXPECT_EQ(r.calls_per_thread, (std::vector<int>{16, 16, 16, 8}));
  EXPECT_EQ(r.visits.size(), 7u * 4 * 2);
  for (const auto& [point, n] : r.visits) EXPECT_EQ(n, 1);
}

// AA with {0,65,1,{64}} on 4 threads gave 32/32/1/0.
TEST_P(CollapsedRunTest, SixtyFiveValuesSplitLikeOpenMpStatic) {
  const Result r = run({LoopSpecs{0, 65, 1, {64}}}, "AA", 4);
  EXPECT_EQ(r.calls_per_thread, (std::vector<int>{17, 16, 16, 16}));
}

// Remainder blocks of two loops interleaved in one run: per-thread counts still differ by at most
// one tuple.
TEST_P(CollapsedRunTest, NestedRemaindersAcrossLoopsStayBalanced) {
  for (int threads = 1; threads <= 4; ++threads) {
    // Every level is in the run, so a tuple is one body call.
    const Result r = run({LoopSpecs{1, 24, 2, {10}}, LoopSpecs{-3, 8, 1, {4}}}, "ABAB", threads);
    const int a_values = 12, b_values = 11;
    const int total = a_values * b_values;
    for (int t = 0; t < threads; ++t)
      EXPECT_EQ(r.calls_per_thread[static_cast<std::size_t>(t)], total / threads + (t < total % threads ? 1 : 0))
          << threads << " threads, thread " << t;
    EXPECT_EQ(r.visits.size(), static_cast<std::size_t>(total));
  }
}

// Run time follows the tuples, not the block sizes: each of these used to count a padded space
// of about 2^31 (AABB: 16 s) to 2^62 (the last one would never finish) slots.
TEST_P(CollapsedRunTest, HugeBlocksCostNothing) {
  const Result one = run({LoopSpecs{0, 1, 1, {INT_MAX}}, LoopSpecs{0, 1, 1, {INT_MAX}}}, "AABB", 2);
  EXPECT_EQ(one.visits.size(), 1u);
  const Result five = run({LoopSpecs{2, 7, 1, {INT_MAX, 3}}}, "AAA", 2);
  EXPECT_EQ(five.visits.size(), 5u);
  EXPECT_EQ(five.calls_per_thread, (std::vector<int>{3, 2}));
  const Result deep = run({LoopSpecs{0, 3, 1, {INT_MAX, INT_MAX - 1, 1000}}, LoopSpecs{0, 2, 1, {INT_MAX}}},
                          "ABAABA", 2);
  EXPECT_EQ(deep.visits.size(), 6u);
  EXPECT_EQ(deep.calls_per_thread, (std::vector<int>{3, 3}));
}

// abcABC with huge blocks was rejected as "too many collapsed iterations to count in 64 bits"
// although it has 64 tuples.
TEST_P(CollapsedRunTest, AcceptsEveryRunWhoseTrueCountFits) {
  const LoopSpecs spec{0, 4, 1, {INT_MAX}};
  const Result r = run({spec, spec, spec}, "abcABC", 2);
  EXPECT_EQ(r.visits.size(), 64u);
  EXPECT_EQ(r.calls_per_thread, (std::vector<int>{32, 32}));
}

TEST(CollapsedRunBounds, RejectsOnlyRunsWhoseTrueCountDoesNotFit) {
  const LoopNest nest = parse_loop_string("ABC", 3);
  const LoopSpecs wide{0, INT_MAX};
  EXPECT_THROW(make_nest_bounds(nest, std::vector<LoopSpecs>{wide, wide, wide}), LoopStringError);
  EXPECT_NO_THROW(make_nest_bounds(nest, std::vector<LoopSpecs>{wide, LoopSpecs{1 << 20}, LoopSpecs{4}}));
  // The largest entry counts, not the first: here the inner run's entry ranges are bounded by the
  // outer blocks (2^31 / 2 values each, 2^60 in all).
  const LoopNest inner = parse_loop_string("abAB", 2);
  const LoopSpecs blocked{0, INT_MAX, 1, {1 << 30}};
  EXPECT_NO_THROW(make_nest_bounds(inner, std::vector<LoopSpecs>{blocked, blocked}));
}

// Dynamic schedules hand out chunks anywhere in the space: every chunk starts at the right tuple.
TEST_P(CollapsedRunTest, DynamicChunksStartAtTheRightTuple) {
  for (const char* text : {"ABAba@schedule(dynamic)", "ABAba@schedule(guided,2)", "ABAba@schedule(static,3)"}) {
    const Result r = run({LoopSpecs{1, 24, 2, {10, 6}}, LoopSpecs{-3, 8, 1, {4}}}, text, 3);
    EXPECT_EQ(r.visits.size(), 12u * 11) << text;
    for (const auto& [point, n] : r.visits) EXPECT_EQ(n, 1) << text;
  }
}

}  // namespace
}  // namespace weft::parlooper
