// The nest cache is bounded, and so are the mappings and memory of a process that keeps making new
// loop strings (an autotuner, a server that builds strings from shapes). Before the bound and the
// code arena, each distinct nest kept two mappings and about 12 KB forever, and new nests failed
// with "can't protect" after about 32,700 of them (vm.max_map_count).
#include <omp.h>

#include <atomic>
#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "emulation.hpp"
#include "process_memory.hpp"
#include "weft/jit/code_arena.hpp"
#include "weft/parlooper/nest_cache.hpp"
#include "weft/parlooper/threaded_loop.hpp"

namespace weft::parlooper {
namespace {

// Sets the bound and a team of one thread (memory, not parallelism, is under test: no team to
// wait for on a loaded machine); restores both afterwards, dropping what the test cached, so later
// tests in the same process see the cache as they would alone.
class CacheScope {
 public:
  explicit CacheScope(std::size_t capacity)
      : saved_capacity_(nest_cache_capacity()), saved_threads_(omp_get_max_threads()) {
    set_nest_cache_capacity(capacity);
    omp_set_num_threads(1);
  }
  ~CacheScope() {
    set_nest_cache_capacity(0);
    set_nest_cache_capacity(saved_capacity_);
    omp_set_num_threads(saved_threads_);
  }

 private:
  std::size_t saved_capacity_;
  int saved_threads_;
};

// Loop a, [0, 40), blocks of 8; every spelling visits each value once.
const LoopSpecs kSpecs{0, 40, 1, {8}};
constexpr long kSum = 40 * 39 / 2;

// The i-th of many distinct nests: three shapes, each with its own static chunk, so every i gives
// another canonical string and so another generated nest.
std::string distinct_string(long i) {
  static const char* const shapes[] = {"A", "aA", "Aa"};
  return std::string(shapes[i % 3]) + "@schedule(static," + std::to_string(i / 3 + 1) + ")";
}

// Builds and runs the nest; false when it visited anything but each value once.
bool build_and_run(const std::string& text) {
  ThreadedLoop<1> loop({kSpecs}, text, EngineKind::jit);
  long sum = 0, calls = 0;
  loop([&](int* ind) {
    sum += ind[0];
    ++calls;
  });
  return sum == kSum && calls == 40;
}

TEST(NestMemory, DistinctStringsKeepMappingsAndMemoryBounded) {
  CacheScope scope(nest_cache_capacity());
  // 200,000 nests, six times the ~32,700 at which unbounded nests ran out of mappings; under an
  // emulator (qemu, 10-20x slower) 80,000, still past the whole vm.max_map_count (65,530).
  const long kWarmUp = 20000, kTotal = weft::test::emulated() ? 80000 : 200000;
  std::size_t mappings_warm = 0, resident_warm = 0;
  long wrong = 0;
  for (long i = 0; i < kTotal; ++i) {
    wrong += !build_and_run(distinct_string(i));
    if (i + 1 == kWarmUp) {
      mappings_warm = weft::test::mapping_count();
      resident_warm = weft::test::resident_bytes();
    }
  }
  EXPECT_EQ(wrong, 0);
  const std::size_t mappings = weft::test::mapping_count();
  const std::size_t resident = weft::test::resident_bytes();
  // 180,000 more nests: with two mappings each that would be 360,000 more.
  EXPECT_LE(mappings, mappings_warm + 16) << mappings_warm << " -> " << mappings;
  EXPECT_LE(resident, resident_warm + weft::test::resident_slack(std::size_t{16} << 20)) << resident_warm << " -> " << resident;
  EXPECT_LE(cached_nest_count(), nest_cache_capacity());
}

TEST(NestMemory, CacheSizeIsBounded) {
  CacheScope scope(10);
  for (long i = 0; i < 100; ++i) ASSERT_TRUE(build_and_run(distinct_string(i)));
  EXPECT_EQ(cached_nest_count(), 10u);
  set_nest_cache_capacity(3);
  EXPECT_EQ(cached_nest_count(), 3u);
  EXPECT_EQ(nest_cache_capacity(), 3u);
}

TEST(NestMemory, RecentlyUsedNestsStayCached) {
  CacheScope scope(4);
  const auto kept = find_or_build_nest("aA@schedule(static,777)", 1);
  const CachedNest* address = kept.get();
  for (long i = 0; i < 50; ++i) {
    find_or_build_nest(distinct_string(i), 1);
    // Used between the others: it stays.
    EXPECT_EQ(find_or_build_nest("aA@schedule(static,777)", 1).get(), address);
  }
}

TEST(NestMemory, DroppedNestIsBuiltAgainForAnySpelling) {
  CacheScope scope(2);
  ASSERT_TRUE(build_and_run("aA@schedule(static,5)"));
  for (long i = 0; i < 10; ++i) find_or_build_nest(distinct_string(i), 1);
  const auto again = find_or_build_nest("aA@schedule( static , 5 )", 1);
  EXPECT_EQ(again->nest().canonical, "aA@schedule(static,5)");
  EXPECT_EQ(find_or_build_nest("aA@schedule(static,5)", 1), again);
  EXPECT_TRUE(build_and_run("aA@schedule(static,5)"));
}

TEST(NestMemory, EvictedNestKeepsRunningWhileAnotherThreadChurnsTheCache) {
  CacheScope scope(16);
  // Two loops whose nests the churn below drops from the cache at once: only the loops keep them
  // (and their code) alive.
  const ThreadedLoop<1> held_a({kSpecs}, "aA@schedule(static,3)", EngineKind::jit);
  const ThreadedLoop<1> held_b({kSpecs}, "Aa@schedule(static,2)", EngineKind::jit);
  std::atomic<bool> done{false};
  std::atomic<long> churn_wrong{0};
  std::thread churn([&] {
    omp_set_num_threads(1);
    for (long i = 0; i < 3000; ++i) churn_wrong += !build_and_run(distinct_string(1000000 + i));
    done = true;
  });
  long runs = 0, wrong = 0;
  while (!done || runs < 100) {
    for (const ThreadedLoop<1>* loop : {&held_a, &held_b}) {
      long sum = 0, calls = 0;
      (*loop)([&](int* ind) {
        sum += ind[0];
        ++calls;
      });
      wrong += sum != kSum || calls != 40;
    }
    ++runs;
  }
  churn.join();
  EXPECT_EQ(wrong, 0) << "of " << runs << " runs";
  EXPECT_EQ(churn_wrong.load(), 0);
  EXPECT_LE(cached_nest_count(), 16u);
}

TEST(NestMemory, DroppedNestStillInUseIsTakenBackRatherThanBuiltTwice) {
  CacheScope scope(2);
  const ThreadedLoop<1> held({kSpecs}, "aA@schedule(static,3)", EngineKind::jit);
  for (long i = 0; i < 3; ++i) find_or_build_nest(distinct_string(i), 1);
  EXPECT_EQ(&find_or_build_nest("aA@schedule(static,3)", 1)->nest(), &held.dynamic().nest());
  EXPECT_LE(cached_nest_count(), 2u);
}

TEST(NestMemory, DroppedNestsGiveTheirCodeBack) {
  CacheScope scope(8);
  for (long i = 0; i < 100; ++i) ASSERT_TRUE(build_and_run(distinct_string(2000000 + i)));
  const auto before = jit::default_code_arena().stats();
  for (long i = 100; i < 5000; ++i) ASSERT_TRUE(build_and_run(distinct_string(2000000 + i)));
  const auto after = jit::default_code_arena().stats();
  // 4,900 more nests, each a few hundred bytes of code: the arena did not grow for them.
  EXPECT_EQ(after.chunks, before.chunks);
  EXPECT_LE(after.used_blocks, before.used_blocks + 8);
}

TEST(NestMemory, CapacityZeroCachesNothingButLoopsStillRun) {
  CacheScope scope(0);
  EXPECT_TRUE(build_and_run("aA@schedule(static,9)"));
  EXPECT_EQ(cached_nest_count(), 0u);
}

}  // namespace
}  // namespace weft::parlooper
