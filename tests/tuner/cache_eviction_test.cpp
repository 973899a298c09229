#include <weft/tuner/cache_eviction.hpp>

#include <weft/jit/error.hpp>

#include <gtest/gtest.h>

namespace weft::tuner {
namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;

TEST(CacheEvictor, WritesTwiceTheL2AndAShareOfTwiceTheL3PerThread) {
  EXPECT_EQ(CacheEvictor(1, 1 * MiB, 32 * MiB).bytes_per_thread(), 2 * MiB + 64 * MiB);
  EXPECT_EQ(CacheEvictor(2, 1 * MiB, 16 * MiB).bytes_per_thread(), 2 * MiB + 16 * MiB);
  // A hypervisor's report of the host's whole L3 (320 MiB on the Zen 4 VM) is capped at 32 MiB.
  EXPECT_EQ(CacheEvictor(2, 1 * MiB, 320 * MiB).bytes_per_thread(), 2 * MiB + 32 * MiB);
  // Unknown sizes: 1 MiB of L2, the cap for the L3.
  EXPECT_EQ(CacheEvictor(1, 0, 0).bytes_per_thread(), 2 * MiB + 64 * MiB);
  // Whole cache lines.
  EXPECT_EQ(CacheEvictor(3, 1000, 1000).bytes_per_thread() % 64, 0u);
}

TEST(CacheEvictor, RunsOnItsTeamAndRefusesAnEmptyTeam) {
  CacheEvictor evict(2, 64 << 10, 1 * MiB);
  evict();
  evict();
  EXPECT_THROW(CacheEvictor(0, 1 * MiB, 1 * MiB), Error);
}

}  // namespace
}  // namespace weft::tuner
