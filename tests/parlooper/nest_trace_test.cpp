// trace_nest: the indices of every body call per thread, the team size, the memory check.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <vector>

#include "weft/jit/error.hpp"
#include "weft/parlooper/nest_trace.hpp"

namespace {

using namespace weft::parlooper;

TEST(NestTrace, SharesTheParallelLoopBetweenTheThreadsInOrder) {
  const std::vector<LoopSpecs> specs{LoopSpecs{0, 2, 1}, LoopSpecs{0, 4, 1}};
  const DynamicThreadedLoop loop(specs, "aB", default_engine_kind());
  const NestTrace trace = trace_nest(loop, specs, 2);
  EXPECT_EQ(trace.loops, 2);
  ASSERT_EQ(trace.per_thread.size(), 2u);
  EXPECT_EQ(trace.per_thread[0], (std::vector<int>{0, 0, 0, 1, 1, 0, 1, 1}));
  EXPECT_EQ(trace.per_thread[1], (std::vector<int>{0, 2, 0, 3, 1, 2, 1, 3}));
}

TEST(NestTrace, EveryIndexOnceOverAllThreadsAndTheThreadCountRestored) {
  const std::vector<LoopSpecs> specs{LoopSpecs{0, 3, 1}, LoopSpecs{0, 10, 2, {4}}};
  const DynamicThreadedLoop loop(specs, "aBb", default_engine_kind());
  const int before = omp_get_max_threads();
  const NestTrace trace = trace_nest(loop, specs, 3);
  EXPECT_EQ(omp_get_max_threads(), before);
  ASSERT_EQ(trace.per_thread.size(), 3u);
  std::vector<std::vector<int>> visits;
  for (const auto& values : trace.per_thread)
    for (std::size_t i = 0; i < values.size(); i += 2) visits.push_back({values[i], values[i + 1]});
  std::sort(visits.begin(), visits.end());
  std::vector<std::vector<int>> expected;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 10; b += 2) expected.push_back({a, b});
  EXPECT_EQ(visits, expected);
}

TEST(NestTrace, ATraceThisMachineCannotHoldIsRefusedBeforeRunning) {
  const std::vector<LoopSpecs> specs{LoopSpecs{0, 1L << 30, 1}, LoopSpecs{0, 1L << 30, 1}};
  const DynamicThreadedLoop loop(specs, "ab", default_engine_kind());
  EXPECT_THROW(trace_nest(loop, specs, 1), weft::MemoryError);
}

}  // namespace
