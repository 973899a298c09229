#include "weft/jit/kernel_cache.hpp"

#include <cstdlib>
#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "emulation.hpp"

#include "weft/jit/error.hpp"

namespace {

using weft::jit::KernelCache;

TEST(KernelCache, CreatesOncePerKeyAndSharesTheEntry) {
  KernelCache<int, std::vector<int>> cache(1000);
  int made = 0;
  const auto a = cache.get_or_create(1, [&] { ++made; return std::vector<int>{1}; });
  for (int k = 2; k < 100; ++k) cache.get_or_create(k, [&] { ++made; return std::vector<int>{k}; });
  const auto again = cache.get_or_create(1, [&] { ++made; return std::vector<int>{-1}; });
  EXPECT_EQ(a, again);
  EXPECT_EQ(*a, std::vector<int>{1});
  EXPECT_EQ(made, 99);
  EXPECT_EQ(cache.size(), 99u);
  EXPECT_EQ(cache.find(1000), nullptr);
}

TEST(KernelCache, ConcurrentCallersShareOneEntry) {
  KernelCache<int, int> cache(1000);
  std::atomic<int> made{0};
  std::vector<const int*> seen(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 200; ++k) {
        const auto v = cache.get_or_create(k, [&] { ++made; return std::make_unique<int>(k * 2); });
        EXPECT_EQ(*v, k * 2);
        if (k == 7) seen[t] = v.get();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(cache.size(), 200u);
  EXPECT_GE(made.load(), 200);
  for (const int* p : seen) EXPECT_EQ(p, seen[0]);
}

TEST(KernelCache, FailedCreationCachesNothing) {
  KernelCache<int, int> cache(10);
  EXPECT_THROW(cache.get_or_create(5, []() -> int { throw std::runtime_error("no"); }), std::runtime_error);
  EXPECT_EQ(cache.find(5), nullptr);
  EXPECT_EQ(*cache.get_or_create(5, [] { return 9; }), 9);
}

TEST(KernelCache, DropsTheLeastRecentlyUsedBeyondItsCapacity) {
  KernelCache<int, int> cache(3);
  for (int k = 0; k < 3; ++k) cache.get_or_create(k, [&] { return k; });
  cache.find(0);                          // 0 is now the most recently used: 1 goes first
  cache.get_or_create(3, [] { return 3; });
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_NE(cache.find(0), nullptr);
  EXPECT_EQ(cache.find(1), nullptr);
  EXPECT_NE(cache.find(2), nullptr);
  EXPECT_NE(cache.find(3), nullptr);
}

// The entry counts its live copies: it must outlive the cache's reference while someone holds it.
struct Counted {
  explicit Counted(std::atomic<int>& live) : live_(&live) { ++*live_; }
  Counted(const Counted&) = delete;
  ~Counted() { --*live_; }
  std::atomic<int>* live_;
};

TEST(KernelCache, DroppedEntryLivesUntilItsLastHolderLetsGo) {
  std::atomic<int> live{0};
  KernelCache<int, Counted> cache(2);
  auto held = cache.get_or_create(0, [&] { return std::make_unique<Counted>(live); });
  for (int k = 1; k < 50; ++k) cache.get_or_create(k, [&] { return std::make_unique<Counted>(live); });
  EXPECT_EQ(cache.find(0), nullptr);
  EXPECT_EQ(live.load(), 3);  // the two cached and the one held
  held.reset();
  EXPECT_EQ(live.load(), 2);
}

TEST(KernelCache, CapacityZeroKeepsOnlyWhatHoldersHold) {
  std::atomic<int> live{0};
  KernelCache<int, Counted> cache(0);
  {
    const auto a = cache.get_or_create(1, [&] { return std::make_unique<Counted>(live); });
    EXPECT_EQ(live.load(), 1);
    EXPECT_EQ(cache.size(), 0u);
  }
  EXPECT_EQ(live.load(), 0);
}

// Restores the process-wide bound (and trims the caches to it) when the test ends.
class ProcessCapacityScope {
 public:
  ProcessCapacityScope() : saved_(weft::jit::kernel_cache_capacity()) {}
  ~ProcessCapacityScope() { weft::jit::set_kernel_cache_capacity(saved_); }

 private:
  std::size_t saved_;
};

TEST(KernelCache, DefaultBoundIsTheProcessWideOneAndChangingItTrimsAtOnce) {
  ProcessCapacityScope scope;
  weft::jit::set_kernel_cache_capacity(100);
  KernelCache<int, int> cache;
  EXPECT_EQ(cache.capacity(), 100u);
  for (int k = 0; k < 150; ++k) cache.get_or_create(k, [&] { return k; });
  EXPECT_EQ(cache.size(), 100u);
  weft::jit::set_kernel_cache_capacity(10);
  EXPECT_EQ(cache.size(), 10u);
  EXPECT_NE(cache.find(149), nullptr);
  EXPECT_EQ(cache.find(139), nullptr);
}

TEST(KernelCache, TheDefaultBoundIsSeveralThousand) {
  if (std::getenv("WEFT_KERNEL_CACHE_SIZE") != nullptr) GTEST_SKIP() << "WEFT_KERNEL_CACHE_SIZE is set";
  EXPECT_GE(weft::jit::kernel_cache_capacity(), 4096u);
}

// The environment is read once per process: each case runs in a fresh one (a threadsafe death
// test re-runs the test binary), whose exit status says what it saw.
[[noreturn]] void exit_with_env_verdict(const char* value) {
  ::setenv("WEFT_KERNEL_CACHE_SIZE", value, 1);
  try {
    weft::jit::kernel_cache_capacity();
  } catch (const weft::Error& e) {
    const std::string expected = "WEFT_KERNEL_CACHE_SIZE='" + std::string(value) + "' is not a number of kernels";
    std::_Exit(std::string(e.what()).find(expected) != std::string::npos ? 0 : 2);
  }
  std::_Exit(1);
}

[[noreturn]] void exit_with_bound_verdict() {
  ::setenv("WEFT_KERNEL_CACHE_SIZE", "7", 1);
  KernelCache<int, int> cache;
  for (int k = 0; k < 20; ++k) cache.get_or_create(k, [&] { return k; });
  std::_Exit(weft::jit::kernel_cache_capacity() == 7 && cache.size() == 7 ? 0 : 1);
}

TEST(KernelCacheDeathTest, BadEnvironmentValueIsAClearError) {
  if (weft::test::emulated()) GTEST_SKIP() << "re-executes the test program: not under a user-mode emulator";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (const char* value : {"many", "-1", "12k", "1e3", " 5", "99999999999999999999999"})
    EXPECT_EXIT(exit_with_env_verdict(value), ::testing::ExitedWithCode(0), "") << value;
}

TEST(KernelCacheDeathTest, EnvironmentValueIsTheBound) {
  if (weft::test::emulated()) GTEST_SKIP() << "re-executes the test program: not under a user-mode emulator";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(exit_with_bound_verdict(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
