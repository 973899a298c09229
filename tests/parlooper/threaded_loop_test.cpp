// ThreadedLoop behaviour: modes, helpers, init/term, barriers, static ownership, teams, errors.
#include "weft/parlooper/threaded_loop.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace weft::parlooper {
namespace {

constexpr EngineKind kEngines[] = {EngineKind::reference, EngineKind::jit};

class ThreadedLoopTest : public ::testing::TestWithParam<EngineKind> {
 protected:
  void SetUp() override { omp_set_num_threads(3); }
  EngineKind engine() const { return GetParam(); }
};

INSTANTIATE_TEST_SUITE_P(Engines, ThreadedLoopTest, ::testing::ValuesIn(kEngines),
                         [](const auto& engine_info) { return engine_info.param == EngineKind::jit ? "jit" : "reference"; });

TEST_P(ThreadedLoopTest, WorkSharedRunVisitsEveryPointOnceWithCorrectTid) {
  ThreadedLoop<3> loop({LoopSpecs{0, 5, 1}, LoopSpecs{0, 7, 1}, LoopSpecs{0, 3, 1}}, "aBC", engine());
  std::vector<std::atomic<int>> visits(5 * 7 * 3);
  std::atomic<int> wrong_tid{0};
  loop([&](int* ind) {
    visits[static_cast<std::size_t>((ind[0] * 7 + ind[1]) * 3 + ind[2])]++;
    // PARLOOPER returned garbage here in mode 1.
    if (loop.get_tid(ind) != omp_get_thread_num()) wrong_tid++;
  });
  for (auto& v : visits) EXPECT_EQ(v.load(), 1);
  EXPECT_EQ(wrong_tid.load(), 0);
}

TEST_P(ThreadedLoopTest, BlocksThatDoNotDivideAreClampedToTheParentBlock) {
  // PARLOOPER failure table: inner loops overran the end. Here: each value once, within range.
  ThreadedLoop<2> loop({LoopSpecs{0, 23, 2, {10, 4}}, LoopSpecs{0, 10, 3, {6}}}, "aBaba", engine());
  std::mutex m;
  std::multiset<std::pair<int, int>> seen;
  loop([&](int* ind) {
    std::lock_guard lock(m);
    seen.insert({ind[0], ind[1]});
  });
  std::multiset<std::pair<int, int>> expected;
  for (int a = 0; a < 23; a += 2)
    for (int b = 0; b < 10; b += 3) expected.insert({a, b});
  EXPECT_EQ(seen, expected);
}

TEST_P(ThreadedLoopTest, ExtentHelperShortensRemainderBlocks) {
  // a: [0, 10) with step 4: tiles 4, 4, 2. b: blocks of 6 over [0, 11) with step 2: blocks
  // [0, 6) and [6, 11); the tile at 10 spans 1.
  ThreadedLoop<2> loop({LoopSpecs{0, 10, 4}, LoopSpecs{0, 11, 2, {6}}}, "Abb", engine());
  std::mutex m;
  std::map<std::pair<int, int>, std::tuple<int, int, LoopBlock>> seen;
  loop([&](int* ind) {
    std::lock_guard lock(m);
    seen[{ind[0], ind[1]}] = {loop.get_loop_extent('a', ind), loop.get_loop_extent('B', ind),
                              loop.get_loop_block('b', ind)};
  });
  EXPECT_EQ(seen.size(), 3u * 6u);
  EXPECT_EQ(std::get<0>(seen.at({8, 0})), 2);
  EXPECT_EQ(std::get<0>(seen.at({4, 0})), 4);
  EXPECT_EQ(std::get<1>(seen.at({0, 4})), 2);
  EXPECT_EQ(std::get<1>(seen.at({0, 10})), 1);
  const LoopBlock b = std::get<2>(seen.at({0, 8}));
  EXPECT_EQ(b.begin, 6);
  EXPECT_EQ(b.end, 11);
  EXPECT_EQ(b.step, 2);
  EXPECT_EQ(b.iterations(), 3);  // 6, 8, 10
  const LoopBlock first = std::get<2>(seen.at({4, 2}));
  EXPECT_EQ(first.begin, 0);
  EXPECT_EQ(first.end, 6);
}

TEST_P(ThreadedLoopTest, HelpersInWorkSharingMode) {
  ThreadedLoop<3> loop({LoopSpecs{2}, LoopSpecs{6}, LoopSpecs{4}}, "aBc", engine());
  std::atomic<int> bad{0};
  loop([&](int* ind) {
    const int tid = omp_get_thread_num();
    bad += loop.get_tid(ind) != tid;
    bad += loop.get_loop_par_type('b', ind) != THREADED_LOOP_PARALLEL_COLLAPSE;
    bad += loop.get_loop_par_type('a', ind) != THREADED_LOOP_NO_PARALLEL;
    bad += loop.get_loop_parallel_degree('b', ind) != 3;
    bad += loop.get_loop_parallel_degree('c', ind) != 1;
    bad += loop.get_tid_in_parallel_dim('b', ind) != tid;
    bad += loop.get_tid_in_parallel_dim('c', ind) != -1;
  });
  EXPECT_EQ(bad.load(), 0);
}

TEST_P(ThreadedLoopTest, HelpersInGridMode) {
  omp_set_num_threads(4);
  // Grid 2 rows x 2 cols: a over rows, c over cols.
  ThreadedLoop<3> loop({LoopSpecs{4}, LoopSpecs{3}, LoopSpecs{6}}, "A{R:2}bC{C:2}", engine());
  std::atomic<int> bad{0};
  std::vector<std::atomic<int>> visits(4 * 3 * 6);
  loop([&](int* ind) {
    const int tid = omp_get_thread_num();
    visits[static_cast<std::size_t>((ind[0] * 3 + ind[1]) * 6 + ind[2])]++;
    bad += loop.get_tid(ind) != tid;
    bad += loop.get_loop_par_type('a', ind) != THREADED_LOOP_PARALLEL_THREAD_ROWS;
    bad += loop.get_loop_par_type('c', ind) != THREADED_LOOP_PARALLEL_THREAD_COLS;
    bad += loop.get_loop_par_type('b', ind) != THREADED_LOOP_NO_PARALLEL;
    bad += loop.get_loop_parallel_degree('a', ind) != 2;
    bad += loop.get_loop_parallel_degree('b', ind) != 1;
    const int row = tid / 2, col = tid % 2;
    bad += loop.get_tid_in_parallel_dim('a', ind) != row;
    bad += loop.get_tid_in_parallel_dim('c', ind) != col;
    bad += loop.get_tid_in_parallel_dim('b', ind) != -1;
    // Contiguous blocks: rows own a in [2*row, 2*row+2), cols own c in [3*col, 3*col+3).
    bad += ind[0] / 2 != row;
    bad += ind[2] / 3 != col;
  });
  EXPECT_EQ(bad.load(), 0);
  for (auto& v : visits) EXPECT_EQ(v.load(), 1);
}

TEST_P(ThreadedLoopTest, LayersAndUnevenSplits) {
  omp_set_num_threads(4);
  // 3 layers over 7 iterations: blocks of 3, 2, 2. Thread 3 is beyond the grid.
  ThreadedLoop<2> loop({LoopSpecs{7}, LoopSpecs{2}}, "A{L:3}b", engine());
  std::vector<std::set<int>> owned(4);
  std::mutex m;
  loop([&](int* ind) {
    std::lock_guard lock(m);
    owned[static_cast<std::size_t>(loop.get_tid(ind))].insert(ind[0]);
    EXPECT_EQ(loop.get_loop_par_type('a', ind), THREADED_LOOP_PARALLEL_THREAD_LAYERS);
    EXPECT_EQ(loop.get_tid_in_parallel_dim('a', ind), loop.get_tid(ind));
  });
  EXPECT_EQ(owned[0], (std::set<int>{0, 1, 2}));
  EXPECT_EQ(owned[1], (std::set<int>{3, 4}));
  EXPECT_EQ(owned[2], (std::set<int>{5, 6}));
  EXPECT_TRUE(owned[3].empty());
}

TEST_P(ThreadedLoopTest, InitAndTermOncePerParticipatingThread) {
  omp_set_num_threads(4);
  struct Count {
    std::atomic<int> init{0}, term{0}, body{0};
  };
  {
    Count count;
    ThreadedLoop<2> loop({LoopSpecs{8}, LoopSpecs{3}}, "Ab", engine());
    loop([&](int*) { count.body++; }, [&] { count.init++; }, [&] { count.term++; });
    EXPECT_EQ(count.init.load(), 4);
    EXPECT_EQ(count.term.load(), 4);
    EXPECT_EQ(count.body.load(), 24);
  }
  {
    // Grid of 3: the fourth thread takes no part and runs neither init nor term.
    Count count;
    ThreadedLoop<2> loop({LoopSpecs{8}, LoopSpecs{3}}, "A{R:3}b", engine());
    loop([&](int*) { count.body++; }, [&] { count.init++; }, [&] { count.term++; });
    EXPECT_EQ(count.init.load(), 3);
    EXPECT_EQ(count.term.load(), 3);
    EXPECT_EQ(count.body.load(), 24);
  }
  {
    // init runs before the thread's first body call, term after its last.
    ThreadedLoop<1> loop({LoopSpecs{6}}, "A", engine());
    std::vector<int> state(8, 0);
    std::atomic<int> bad{0};
    loop([&](int* ind) { bad += state[static_cast<std::size_t>(loop.get_tid(ind))] != 1; },
         [&] { state[static_cast<std::size_t>(omp_get_thread_num())] = 1; },
         [&] { state[static_cast<std::size_t>(omp_get_thread_num())] = 2; });
    EXPECT_EQ(bad.load(), 0);
    for (int t = 0; t < 4; ++t) EXPECT_EQ(state[static_cast<std::size_t>(t)], 2);
  }
  {
    // PARLOOPER-style NULL hooks.
    ThreadedLoop<1> loop({LoopSpecs{6}}, "A", engine());
    std::atomic<int> body{0};
    loop([&](int*) { body++; }, nullptr, nullptr);
    EXPECT_EQ(body.load(), 6);
  }
}

// Phase 0 has thread 0 wait until a thread has entered phase 1 (or a timeout). With the barrier
// after the work-shared loop no thread can: thread 0 times out. Without it, thread 1 overtakes.
bool phase_one_overtakes_thread_zero(EngineKind engine, const char* text, std::chrono::milliseconds wait) {
  omp_set_num_threads(2);
  ThreadedLoop<2> loop({LoopSpecs{2}, LoopSpecs{2}}, text, engine);
  std::atomic<bool> entered_phase_one{false}, overtaken{false};
  loop([&](int* ind) {
    if (ind[0] == 1) {
      entered_phase_one = true;
      return;
    }
    if (loop.get_tid(ind) != 0) return;
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (std::chrono::steady_clock::now() < deadline) {
      if (entered_phase_one) {
        overtaken = true;
        return;
      }
      std::this_thread::yield();
    }
  });
  return overtaken;
}

TEST_P(ThreadedLoopTest, BarrierHoldsThreadsUntilAllFinishedTheLoop) {
  EXPECT_FALSE(phase_one_overtakes_thread_zero(engine(), "aB|", std::chrono::milliseconds(100)));
  // The control: the same nest without the barrier fails this check.
  EXPECT_TRUE(phase_one_overtakes_thread_zero(engine(), "aB", std::chrono::seconds(10)));
}

TEST_P(ThreadedLoopTest, BarrierInGridModeDoesNotWaitForThreadsBeyondTheGrid) {
  omp_set_num_threads(3);
  ThreadedLoop<2> loop({LoopSpecs{4}, LoopSpecs{5}}, "bA{R:2}|", engine());
  std::atomic<int> body{0};
  loop([&](int*) { body++; });  // would hang if thread 2 were waited for
  EXPECT_EQ(body.load(), 20);
}

TEST_P(ThreadedLoopTest, StaticScheduleKeepsOwnershipAcrossEntries) {
  omp_set_num_threads(3);
  ThreadedLoop<3> loop({LoopSpecs{6}, LoopSpecs{0, 10, 1, {4}}, LoopSpecs{5}}, "aBCb", engine());
  std::mutex m;
  std::map<std::pair<int, int>, std::set<int>> owners;  // (b, c) -> threads that wrote it
  auto record = [&](int* ind) {
    std::lock_guard lock(m);
    owners[{ind[1], ind[2]}].insert(loop.get_tid(ind));
  };
  loop(record);  // a enters the run 6 times
  loop(record);  // and a second call
  EXPECT_EQ(owners.size(), 50u);
  for (const auto& [point, threads] : owners) EXPECT_EQ(threads.size(), 1u) << point.first << "," << point.second;
}

// Issue 12: "abc" on 4 threads called the body 4 times per point, init/term once per thread.
TEST_P(ThreadedLoopTest, StringWithoutUpperCaseRunsOnceOnTheCallingThread) {
  omp_set_num_threads(4);
  ThreadedLoop<3> loop({LoopSpecs{2}, LoopSpecs{2}, LoopSpecs{2}}, "abc", engine());
  std::vector<int> visits(8, 0);  // not atomic: a second thread would be a data race (TSan-visible)
  int init = 0, term = 0, bad = 0;
  const auto caller = std::this_thread::get_id();
  loop(
      [&](int* ind) {
        visits[static_cast<std::size_t>(ind[0] * 4 + ind[1] * 2 + ind[2])]++;
        bad += std::this_thread::get_id() != caller || omp_in_parallel() || loop.get_tid(ind) != 0;
        bad += loop.get_loop_parallel_degree('a', ind) != 1 || loop.get_tid_in_parallel_dim('b', ind) != -1;
      },
      [&] { init++; }, [&] { term++; });
  for (int v : visits) EXPECT_EQ(v, 1);
  EXPECT_EQ(init, 1);
  EXPECT_EQ(term, 1);
  EXPECT_EQ(bad, 0);
}

TEST_P(ThreadedLoopTest, SequentialNestCalledByEveryThreadOfATeamRunsOncePerCaller) {
  ThreadedLoop<2> loop({LoopSpecs{0, 9, 1, {4}}, LoopSpecs{7}}, "aab|", engine());
  std::vector<std::vector<int>> visits(3, std::vector<int>(9 * 7, 0));
  std::atomic<int> bad{0};
#pragma omp parallel num_threads(3)
  {
    const int mine = omp_get_thread_num();
    // Each calling thread runs its own full nest, like a plain function call; get_tid() is its
    // number in its team, so per-thread scratch indexed by it stays private.
    loop([&](int* ind) {
      visits[static_cast<std::size_t>(mine)][static_cast<std::size_t>(ind[0] * 7 + ind[1])]++;
      bad += loop.get_tid(ind) != mine || omp_get_thread_num() != mine;
    });
  }
  EXPECT_EQ(bad.load(), 0);
  for (const auto& per_thread : visits)
    for (int v : per_thread) EXPECT_EQ(v, 1);
}

// A parallel nest called from inside a parallel region opens a nested region per calling thread
// (PARLOOPER's semantics): with OpenMP's default nesting limit each caller runs the whole nest on
// a team of one.
TEST_P(ThreadedLoopTest, ParallelNestCalledFromInsideARegionRunsWholePerCaller) {
  ThreadedLoop<2> loop({LoopSpecs{0, 9, 1, {4}}, LoopSpecs{7}}, "aA|b", engine());
  std::vector<std::vector<int>> visits(3, std::vector<int>(9 * 7, 0));
  std::atomic<int> calls{0};
#pragma omp parallel num_threads(3)
  {
    const int mine = omp_get_thread_num();
    loop([&](int* ind) { visits[static_cast<std::size_t>(mine)][static_cast<std::size_t>(ind[0] * 7 + ind[1])]++; });
    calls++;
  }
  EXPECT_EQ(calls.load(), 3);
  for (const auto& per_thread : visits)
    for (int v : per_thread) EXPECT_EQ(v, 1);
}

// Issue 12: from `omp single` or `omp master` inside a team, the call hung forever (the other
// threads never joined the work-sharing construct it waited for).
TEST_P(ThreadedLoopTest, ParallelNestCalledFromSingleOrMasterRunsCorrectly) {
  ThreadedLoop<2> loop({LoopSpecs{6}, LoopSpecs{0, 5, 1, {2}}}, "aB|b", engine());
  std::vector<std::atomic<int>> visits(6 * 5);
#pragma omp parallel num_threads(3)
  {
#pragma omp single
    loop([&](int* ind) { visits[static_cast<std::size_t>(ind[0] * 5 + ind[1])]++; });
#pragma omp master
    loop([&](int* ind) { visits[static_cast<std::size_t>(ind[0] * 5 + ind[1])]++; });
  }
  for (auto& v : visits) EXPECT_EQ(v.load(), 2);
}

// Issue 12: threads of one team calling different nests lost half of the body calls.
TEST_P(ThreadedLoopTest, ThreadsOfATeamCallingDifferentNestsEachRunTheirs) {
  ThreadedLoop<1> first({LoopSpecs{10}}, "A", engine());
  ThreadedLoop<2> second({LoopSpecs{4}, LoopSpecs{0, 6, 1, {4}}}, "aBb", engine());
  std::atomic<int> first_calls{0}, second_calls{0};
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 0)
      first([&](int*) { first_calls++; });
    else
      second([&](int*) { second_calls++; });
  }
  EXPECT_EQ(first_calls.load(), 10);
  EXPECT_EQ(second_calls.load(), 24);
}

TEST_P(ThreadedLoopTest, BarrierInsideANestedCall) {
  ThreadedLoop<2> loop({LoopSpecs{3}, LoopSpecs{4}}, "aB|", engine());
  std::atomic<int> body{0};
#pragma omp parallel num_threads(2)
  {
    loop([&](int*) { body++; });
    loop([&](int*) { body++; });
  }
  EXPECT_EQ(body.load(), 2 * 2 * 12);
}

TEST_P(ThreadedLoopTest, NestedLoopInsideABodyRunsOnTheCallingThread) {
  ThreadedLoop<1> outer({LoopSpecs{4}}, "A", engine());
  ThreadedLoop<2> inner({LoopSpecs{3}, LoopSpecs{2}}, "aB|", engine());
  std::atomic<int> body{0}, bad{0};
  outer([&](int*) {
    inner([&](int* ind) {
      body++;
      bad += inner.get_tid(ind) != 0 || inner.get_loop_parallel_degree('b', ind) != 1;
    });
  });
  EXPECT_EQ(body.load(), 4 * 6);
  EXPECT_EQ(bad.load(), 0);
}

TEST_P(ThreadedLoopTest, GridNeedingMoreThreadsThanTheTeamIsAnError) {
  omp_set_num_threads(2);
  // PARLOOPER failure table: work was silently dropped.
  ThreadedLoop<2> loop({LoopSpecs{4}, LoopSpecs{4}}, "A{R:2}B{C:2}", engine());
  std::atomic<int> body{0};
  try {
    loop([&](int*) { body++; });
    FAIL() << "ran a 4-thread grid on 2 threads";
  } catch (const weft::Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs a thread grid of 2 x 2 x 1 = 4 threads, but the team has 2"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(body.load(), 0);
  // From inside a region each caller's nested team is one thread: each gets the error, with a
  // hint about nesting.
  std::atomic<int> caught{0}, hinted{0};
#pragma omp parallel num_threads(2)
  {
    try {
      loop([&](int*) { body++; });
    } catch (const weft::Error& e) {
      caught++;
      hinted += std::string(e.what()).find("OMP_MAX_ACTIVE_LEVELS") != std::string::npos;
    }
  }
  EXPECT_EQ(caught.load(), 2);
  EXPECT_EQ(hinted.load(), 2);
  EXPECT_EQ(body.load(), 0);
}

TEST_P(ThreadedLoopTest, BodyExceptionsReachTheCaller) {
  omp_set_num_threads(2);
  ThreadedLoop<2> loop({LoopSpecs{4}, LoopSpecs{4}}, "aB|", engine());
  std::atomic<int> body{0};
  EXPECT_THROW(loop([&](int* ind) {
                 body++;
                 if (ind[0] == 1 && ind[1] == 3) throw std::runtime_error("bad block");
               }),
               std::runtime_error);
  EXPECT_EQ(body.load(), 16) << "the other calls still run, so that barriers are met";
  EXPECT_THROW(loop([](int*) {}, [] { throw std::logic_error("init"); }, nullptr), std::logic_error);
  std::atomic<int> caught{0};
#pragma omp parallel num_threads(2)
  {
    try {
      loop([&](int* ind) {
        if (ind[1] == 0) throw std::runtime_error("x");
      });
    } catch (const std::runtime_error&) {
      caught++;
    }
  }
  EXPECT_EQ(caught.load(), 2);
}

TEST(ThreadedLoop, ConcurrentConstructionOfNewNestsFromEightThreads) {
  omp_set_num_threads(2);
  const std::size_t before = cached_nest_count();
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t, &bad] {
      for (int i = 0; i < 24; ++i) {
        // Half of the strings are shared by all threads, half are this thread's own.
        const int chunk = i % 2 == 0 ? 1000 + i : 2000 + 100 * t + i;
        const std::string text = "bA@schedule(static," + std::to_string(chunk) + ")";
        const EngineKind engine = i % 3 == 0 ? EngineKind::reference : EngineKind::jit;
        ThreadedLoop<2> loop({LoopSpecs{0, 7 + t, 1}, LoopSpecs{3}}, text, engine);
        std::atomic<int> visits{0};
        loop([&](int*) { visits++; });
        bad += visits.load() != (7 + t) * 3;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(cached_nest_count() - before, 12u + 8u * 12u);
}

std::atomic<int> g_free_function_calls{0};
void count_call(int*) { g_free_function_calls++; }

TEST(ThreadedLoop, BodiesCanBeFunctionsAndConstLambdas) {
  omp_set_num_threads(2);
  const ThreadedLoop<1> loop({LoopSpecs{5}}, "A", EngineKind::reference);
  loop(count_call);
  loop(&count_call);
  std::atomic<int> calls{0};
  const auto body = [&](int*) { calls++; };
  loop(body);
  EXPECT_EQ(g_free_function_calls.load(), 10);
  EXPECT_EQ(calls.load(), 5);
}

TEST(ThreadedLoop, ExplicitEngineAndRender) {
  ThreadedLoop<2> loop({LoopSpecs{0, 8, 2}, LoopSpecs{4}}, "aB", EngineKind::reference);
  EXPECT_STREQ(loop.dynamic().engine().name(), "reference");
  EXPECT_NE(loop.render().find("for (int a0 = 0; a0 < 8; a0 += 2)"), std::string::npos) << loop.render();
}

TEST(ThreadedLoop, InvalidStringThrowsAtConstruction) {
  EXPECT_THROW((ThreadedLoop<2>({LoopSpecs{4}, LoopSpecs{4}}, "aXb")), LoopStringError);
  EXPECT_THROW((ThreadedLoop<2>({LoopSpecs{4}, LoopSpecs{4}}, "")), LoopStringError);
  EXPECT_THROW((ThreadedLoop<2>({LoopSpecs{4}, LoopSpecs{0, 4, 0}}, "ab")), LoopStringError);
}

TEST(ThreadedLoop, HelperWithALetterOutsideTheNestThrows) {
  ThreadedLoop<1> loop({LoopSpecs{2}}, "a", EngineKind::reference);
  int ind[kMaxLoops] = {};
  EXPECT_THROW(loop.get_loop_par_type('b', ind), weft::Error);
}

TEST(ThreadedLoop, FiveHundredTwelveLevelsRun) {
  // One loop blocked 511 times: the PARLOOPER overflow size, on both engines.
  LoopSpecs spec{0, 5, 1};
  spec.block_size.assign(511, 2);
  for (EngineKind engine : kEngines) {
    ThreadedLoop<1> loop({spec}, std::string(256, 'a') + std::string(256, 'A'), engine);
    std::vector<std::atomic<int>> visits(5);
    omp_set_num_threads(2);
    loop([&](int* ind) { visits[static_cast<std::size_t>(ind[0])]++; });
    for (auto& v : visits) EXPECT_EQ(v.load(), 1);
  }
}

TEST(DefaultEngine, FollowsWeftEngine) {
  const char* saved = std::getenv("WEFT_ENGINE");
  const std::string restore = saved != nullptr ? saved : "";
  setenv("WEFT_ENGINE", "reference", 1);
  EXPECT_EQ(default_engine_kind(), EngineKind::reference);
  setenv("WEFT_ENGINE", "jit", 1);
  EXPECT_EQ(default_engine_kind(), EngineKind::jit);
  setenv("WEFT_ENGINE", "fast", 1);
  EXPECT_THROW(default_engine_kind(), weft::Error);
  unsetenv("WEFT_ENGINE");
#if defined(__x86_64__)
  EXPECT_EQ(default_engine_kind(), EngineKind::jit);
#endif
  if (saved != nullptr) setenv("WEFT_ENGINE", restore.c_str(), 1);
}

}  // namespace
}  // namespace weft::parlooper
