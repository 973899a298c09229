// The TPP kernel caches and the mini_jit trampolines are bounded (WEFT_KERNEL_CACHE_SIZE), so a
// process that makes kernels from shapes (a server, a notebook) keeps its code arena, mappings and
// memory bounded, while functors made early keep their code and run. Before the bound every distinct
// descriptor kept its code and about 4.4 KB of resident memory for the life of the process.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "emulation.hpp"
#include "process_memory.hpp"
#include "weft/jit/code_arena.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/jit/kernel_cache.hpp"
#include "weft/tpp/mini_jit_unary.hpp"
#include "weft/tpp/unary.hpp"

namespace weft::tpp {
namespace {

using jit::Isa;

// Sets the bound of every kernel cache; restores it afterwards, dropping what the test cached, so
// later tests in the same process see the caches as they would alone.
class CapacityScope {
 public:
  explicit CapacityScope(std::size_t capacity) : saved_(jit::kernel_cache_capacity()) {
    jit::set_kernel_cache_capacity(capacity);
  }
  ~CapacityScope() {
    jit::set_kernel_cache_capacity(0);
    jit::set_kernel_cache_capacity(saved_);
  }

 private:
  std::size_t saved_;
};

// The i-th of many distinct descriptors: a copy of two columns of 1 to 16 rows, ld_in apart. relu
// copies too (the input is not negative): tests take an op of their own, so that none finds the
// kernels of another in the cache.
UnaryDesc distinct_copy(long i, UnaryOp op = UnaryOp::copy) {
  const std::int64_t m = 1 + i % 16;
  return UnaryDesc{.op = op, .m = m, .n = 2, .ld_in = m + i / 16, .ld_out = m};
}

// in[k] = k, enough for every distinct_copy(i) with i < 1,100,000.
const std::vector<float>& input() {
  static const std::vector<float> in = [] {
    std::vector<float> v(70000);
    for (std::size_t k = 0; k < v.size(); ++k) v[k] = static_cast<float>(k);
    return v;
  }();
  return in;
}

// Runs a copy kernel of distinct_copy's shape; false when the output is not its two columns.
template <class Kernel>
bool copies_right(const UnaryDesc& d, const Kernel& run) {
  float out[33];  // two columns of up to 16 rows and one that must stay untouched
  for (float& x : out) x = -1.0f;
  run(UnaryArgs{.in = input().data(), .out = out});
  for (std::int64_t r = 0; r < d.m; ++r) {
    if (out[r] != static_cast<float>(r) || out[d.m + r] != static_cast<float>(d.ld_in + r)) return false;
  }
  return out[2 * d.m] == -1.0f;
}

bool copies_right(const Unary& k) {
  return copies_right(k.desc(), [&](const UnaryArgs& args) { k(args); });
}

double megabytes(std::size_t bytes) { return static_cast<double>(bytes) / 1e6; }

struct Footprint {
  jit::CodeArenaStats arena;
  std::size_t mappings;
  std::size_t resident;
};

Footprint footprint() {
  return {jit::default_code_arena().stats(), weft::test::mapping_count(), weft::test::resident_bytes()};
}

// Generous next to what the bound keeps (4096 kernels of well under 1 KB of code each), far below
// what 1,000,000 descriptors took without it (4.4 GB).
constexpr std::size_t kResidentSlack = std::size_t{32} << 20;

// Under qemu-user every new kernel is also translated into qemu's own code cache, which counts in
// the process's resident memory and which qemu bounds, not weft: there the arena and the mappings
// are checked, over fewer kernels (each one is translated), and resident memory is not.
bool checks_resident() { return !weft::test::emulated(); }

void expect_bounded(const Footprint& warm, const Footprint& now, long made) {
  ASSERT_LE(now.arena.mapped_bytes, warm.arena.mapped_bytes + jit::default_code_arena().limits().chunk_bytes)
      << "after " << made << " kernels";
  ASSERT_LE(now.arena.used_blocks, warm.arena.used_blocks + 16) << "after " << made << " kernels";
  ASSERT_LE(now.mappings, warm.mappings + 16) << "after " << made << " kernels";
  if (checks_resident()) {
    ASSERT_LE(now.resident, warm.resident + weft::test::resident_slack(kResidentSlack)) << "after " << made << " kernels";
  }
}

TEST(KernelCacheBound, MillionDistinctDescriptorsKeepArenaMappingsAndMemoryBounded) {
  CapacityScope scope(4096);
  const long kDistinct = checks_resident() ? 1000000 : 100000;
  constexpr long kWarmUp = 20000, kCheckEvery = 50000;
  const auto begin = std::chrono::steady_clock::now();
  const Footprint start = footprint();
  // Made first, so the churn drops their descriptors from the cache at once: only they hold them.
  const Unary early_a(distinct_copy(0)), early_b(distinct_copy(17));
  std::optional<UnaryCode> early_code;
  if (jit::selected_isa() != Isa::reference) early_code.emplace(unary_kernel(distinct_copy(5), jit::selected_isa()));
  const Unary early_copy = early_a;  // a copy shares the kernel too
  long wrong = 0;
  Footprint warm{};
  for (long i = 1; i < kDistinct; ++i) {
    const Unary k(distinct_copy(i));
    wrong += !copies_right(k);
    if (i == kWarmUp) warm = footprint();
    if (i > kWarmUp && i % kCheckEvery == 0) {
      ASSERT_NO_FATAL_FAILURE(expect_bounded(warm, footprint(), i));
      ASSERT_TRUE(copies_right(early_a) && copies_right(early_b));
    }
  }
  const Footprint end = footprint();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  EXPECT_EQ(wrong, 0);
  expect_bounded(warm, end, kDistinct);
  EXPECT_TRUE(copies_right(early_a));
  EXPECT_TRUE(copies_right(early_b));
  EXPECT_TRUE(copies_right(early_copy));
  if (early_code) {
    EXPECT_TRUE(copies_right(distinct_copy(5), [&](const UnaryArgs& args) { (*early_code)(&args); }));
  }
  // Dropped long ago, made again.
  EXPECT_TRUE(copies_right(Unary(distinct_copy(0))));
  std::printf("[ figures  ] %ld distinct unary descriptors in %.1f s: arena mapped %zu -> %zu -> %zu bytes, "
              "%zu -> %zu -> %zu blocks in use; mappings %zu -> %zu -> %zu; resident %.1f -> %.1f -> %.1f MB "
              "(start -> after %ld -> end)\n",
              kDistinct, seconds, start.arena.mapped_bytes, warm.arena.mapped_bytes, end.arena.mapped_bytes,
              start.arena.used_blocks, warm.arena.used_blocks, end.arena.used_blocks, start.mappings, warm.mappings,
              end.mappings, megabytes(start.resident), megabytes(warm.resident), megabytes(end.resident), kWarmUp);
}

TEST(KernelCacheBound, EvictedKernelsKeepRunningWhileOtherThreadsChurnTheCache) {
  CapacityScope scope(8);
  const Unary held_a(distinct_copy(3, UnaryOp::relu)), held_b(distinct_copy(40, UnaryOp::relu));
  const std::size_t blocks_before = jit::default_code_arena().stats().used_blocks;
  std::atomic<int> churning{2};
  std::atomic<long> churn_wrong{0};
  std::vector<std::thread> churn;
  for (long t = 0; t < 2; ++t) {
    churn.emplace_back([&, t] {
      // Both threads also make the same descriptors (every third one), racing on their entries.
      for (long i = 0; i < 3000; ++i) {
        const long index = 100 + (i % 3 == 0 ? i : 2 * i + t);
        churn_wrong += !copies_right(Unary(distinct_copy(index, UnaryOp::relu)));
      }
      --churning;
    });
  }
  long runs = 0, wrong = 0;
  while (churning > 0 || runs < 100) {
    wrong += !copies_right(held_a) + !copies_right(held_b);
    ++runs;
  }
  for (auto& th : churn) th.join();
  EXPECT_EQ(wrong, 0) << "of " << runs << " runs";
  EXPECT_EQ(churn_wrong.load(), 0);
  EXPECT_LE(jit::default_code_arena().stats().used_blocks, blocks_before + 8);
}

TEST(KernelCacheBound, CapacityZeroKeepsOnlyLiveKernels) {
  CapacityScope scope(0);
  const std::size_t blocks_before = jit::default_code_arena().stats().used_blocks;
  const Unary held(distinct_copy(7, UnaryOp::relu));
  for (long i = 0; i < 200; ++i) ASSERT_TRUE(copies_right(Unary(distinct_copy(10000 + i, UnaryOp::relu))));
  EXPECT_TRUE(copies_right(held));
  EXPECT_LE(jit::default_code_arena().stats().used_blocks, blocks_before + 1);
}

// mini_jit::Unary's zero kernel of m x n, ld_b = m: true when it zeroed exactly B.
bool zeroes_right(mini_jit::Unary::kernel_t kernel, std::uint32_t m, std::uint32_t n) {
  std::vector<float> b(static_cast<std::size_t>(m) * n + 1, 5.0f);
  kernel(nullptr, b.data(), m, m);
  for (std::size_t k = 0; k + 1 < b.size(); ++k)
    if (b[k] != 0.0f) return false;
  return b.back() == 5.0f;
}

TEST(KernelCacheBound, MiniJitUnaryKernelsStayBoundedAndEarlyOnesKeepRunning) {
  CapacityScope scope(16);
  using mini_jit::Unary;
  Unary early;
  ASSERT_EQ(early.generate(3, 2, 0, Unary::dtype_t::fp32, Unary::ptype_t::zero), Unary::error_t::success);
  const Unary early_copy = early;  // a copy owns the kernel too
  const std::size_t blocks_before = jit::default_code_arena().stats().used_blocks;
  long wrong = 0;
  for (std::uint32_t i = 0; i < 20000; ++i) {
    const std::uint32_t m = 1 + i % 64, n = 3 + i / 64;
    Unary u;
    ASSERT_EQ(u.generate(m, n, 0, Unary::dtype_t::fp32, Unary::ptype_t::zero), Unary::error_t::success);
    if (i % 100 == 0) wrong += !zeroes_right(u.get_kernel(), m, n);
  }
  EXPECT_EQ(wrong, 0);
  // A trampoline and a TPP kernel per entry, 16 of each cached.
  EXPECT_LE(jit::default_code_arena().stats().used_blocks, blocks_before + 2 * 16);
  EXPECT_TRUE(zeroes_right(early.get_kernel(), 3, 2));
  early = Unary();  // the copy alone keeps the kernel now
  EXPECT_TRUE(zeroes_right(early_copy.get_kernel(), 3, 2));
}

}  // namespace
}  // namespace weft::tpp
