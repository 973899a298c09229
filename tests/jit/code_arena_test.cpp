#include "weft/jit/code_arena.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "process_memory.hpp"
#include "weft/jit/error.hpp"
#if defined(__x86_64__)
#include "weft/jit/x64/code_buffer.hpp"
#endif

namespace {

using weft::jit::CodeArena;
using weft::jit::CodeArenaLimits;
using ReturnsInt = int (*)();

#if defined(__x86_64__)
// mov eax, value; ret -- then int3 up to `size` bytes, so blocks of any size can be made.
std::vector<std::uint8_t> returning(int value, std::size_t size = 6) {
  std::vector<std::uint8_t> code(std::max<std::size_t>(size, 6), 0xCC);
  code[0] = 0xB8;
  std::memcpy(&code[1], &value, 4);
  code[5] = 0xC3;
  return code;
}
// What a call into a released block dies of: int3.
constexpr int kTrapSignal = SIGTRAP;
#elif defined(__aarch64__)
// movz w0, #low; movk w0, #high, lsl #16; ret -- then udf #0 (zero words) up to `size` bytes.
std::vector<std::uint8_t> returning(int value, std::size_t size = 12) {
  const auto bits = static_cast<std::uint32_t>(value);
  const std::uint32_t words[] = {0x52800000u | (bits & 0xFFFFu) << 5,  // movz w0, #(bits & 0xffff)
                                 0x72A00000u | (bits >> 16) << 5,      // movk w0, #(bits >> 16), lsl #16
                                 0xD65F03C0u};                          // ret
  std::vector<std::uint8_t> code(std::max<std::size_t>(size, sizeof words), 0x00);
  std::memcpy(code.data(), words, sizeof words);
  return code;
}
// What a call into a released block dies of: udf #0.
constexpr int kTrapSignal = SIGILL;
#endif

int call(const void* code) { return reinterpret_cast<ReturnsInt>(const_cast<void*>(code))(); }

#if defined(__x86_64__)
// padding bytes of nops, then return value.
struct ReturnConstant : weft::jit::x64::CodeBuffer {
  ReturnConstant(int value, std::size_t padding, CodeArena& arena)
      : CodeBuffer(padding + 64, arena) {
    nop(padding);
    mov(eax, value);
    ret();
  }
};
#endif

TEST(CodeArena, InstalledCodeRuns) {
  CodeArena arena;
  const auto code = returning(42);
  const void* fn = arena.install(code.data(), code.size(), "forty-two");
  EXPECT_EQ(call(fn), 42);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(fn) % CodeArena::kAlignment, 0u);
  arena.release(fn);
}

TEST(CodeArena, ReleasedSpaceIsReused) {
  // One chunk of 64 KiB, and the limit forbids a second: 100,000 installs of up to 4 KiB each only
  // fit by reusing what was released.
  CodeArena arena(CodeArenaLimits{.chunk_bytes = 64 << 10, .max_bytes = 64 << 10});
  const auto first = returning(1, 1000);
  const void* a = arena.install(first.data(), first.size(), "a");
  arena.release(a);
  const void* b = arena.install(first.data(), first.size(), "b");
  EXPECT_EQ(a, b);
  arena.release(b);

  std::vector<const void*> live(8, nullptr);
  for (int i = 0; i < 100000; ++i) {
    const std::size_t slot = static_cast<std::size_t>(i) % live.size();
    arena.release(live[slot]);
    const auto code = returning(i, 1 + static_cast<std::size_t>(i * 7919) % 4096);
    live[slot] = arena.install(code.data(), code.size(), "churn");
    ASSERT_EQ(call(live[slot]), i);
  }
  for (const void* p : live) arena.release(p);
  const auto stats = arena.stats();
  EXPECT_EQ(stats.chunks, 1u);
  EXPECT_EQ(stats.used_blocks, 0u);
  EXPECT_EQ(stats.used_bytes, 0u);
  EXPECT_EQ(stats.largest_free, std::size_t{64} << 10) << "released neighbours must merge again";
}

TEST(CodeArena, NeighboursMergeWhenReleased) {
  CodeArena arena(CodeArenaLimits{.chunk_bytes = 4096, .max_bytes = 4096});
  const auto block = returning(7, 1024);
  const void* a = arena.install(block.data(), block.size(), "a");
  const void* b = arena.install(block.data(), block.size(), "b");
  const void* c = arena.install(block.data(), block.size(), "c");
  const void* d = arena.install(block.data(), block.size(), "d");
  arena.release(b);
  arena.release(a);
  // 2 KiB only fits where a and b were.
  const auto two = returning(8, 2048);
  EXPECT_EQ(arena.install(two.data(), two.size(), "a+b"), a);
  EXPECT_EQ(call(c), 7);
  EXPECT_EQ(call(d), 7);
}

#if defined(__x86_64__)
TEST(CodeArena, ManyFunctionsShareFewMappings) {
  // Before the arena, every code buffer took two mappings of its own: 4,000 here.
  const std::size_t before = weft::test::mapping_count();
  std::vector<std::unique_ptr<ReturnConstant>> code;
  for (int i = 0; i < 2000; ++i) {
    code.push_back(std::make_unique<ReturnConstant>(i, 100, weft::jit::default_code_arena()));
    code.back()->finalize<ReturnsInt>("constant");
  }
  // The heap may map a few regions of its own for the buffers (ASan's allocator does).
  EXPECT_LE(weft::test::mapping_count(), before + 64);
  for (int i = 0; i < 2000; ++i) EXPECT_EQ(call(code[static_cast<std::size_t>(i)]->getCode()), i);
}
#endif

TEST(CodeArena, NoMappingOfCodeIsEverWritable) {
  CodeArena arena;
  const auto code = returning(3);
  const void* fn = arena.install(code.data(), code.size(), "three");
  std::ifstream maps("/proc/self/maps");
  int code_mappings = 0;
  for (std::string line; std::getline(maps, line);) {
    if (line.find("weft-jit-code") == std::string::npos) continue;
    ++code_mappings;
    const std::string perms = line.substr(line.find(' ') + 1, 4);
    EXPECT_EQ(perms, "r-xs") << line;
  }
  EXPECT_GE(code_mappings, 1);
  arena.release(fn);
}

TEST(CodeArena, BlockLargerThanAChunkGetsAChunkOfItsOwn) {
  CodeArena arena(CodeArenaLimits{.chunk_bytes = 4096, .max_bytes = 1 << 20});
  const auto big = returning(9, 10000);
  const void* fn = arena.install(big.data(), big.size(), "big");
  EXPECT_EQ(call(fn), 9);
  EXPECT_EQ(arena.stats().chunks, 1u);
  EXPECT_EQ(arena.stats().mapped_bytes, 12288u);
  arena.release(fn);
}

#if defined(__x86_64__)
TEST(CodeArena, FullArenaThrowsWeftErrorNamingTheCause) {
  // Two chunks of one page each: room for two 3000-byte functions, not three.
  CodeArena arena(CodeArenaLimits{.chunk_bytes = 4096, .max_bytes = 8192});
  ReturnConstant one(1, 3000, arena);
  one.finalize<ReturnsInt>("one");
  auto two = std::make_unique<ReturnConstant>(2, 3000, arena);
  two->finalize<ReturnsInt>("two");
  ReturnConstant three(3, 3000, arena);
  try {
    three.finalize<ReturnsInt>("the third function");
    FAIL() << "the arena grew beyond its limit";
  } catch (const weft::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("the third function"), std::string::npos) << message;
    EXPECT_NE(message.find("limit of 8192 bytes"), std::string::npos) << message;
    EXPECT_NE(message.find("2 mappings"), std::string::npos) << message;
  }
  EXPECT_FALSE(three.finalized());
  // Space given back is space to use.
  two.reset();
  ReturnConstant four(4, 3000, arena);
  EXPECT_EQ(four.finalize<ReturnsInt>("four")(), 4);
  EXPECT_EQ(arena.stats().chunks, 2u);
}
#endif

// The same address runs other code after a release: on AArch64 the instruction cache must see
// code the kernel stored (pwrite), and under qemu-user, which translated the old code, the pages
// must be mapped again (code_arena.cpp says why). The reused block lies between two live ones on
// the same page, which must keep working.
TEST(CodeArena, CodeInstalledWhereOtherCodeRanRunsTheNewCode) {
  CodeArena arena(CodeArenaLimits{.chunk_bytes = 4096, .max_bytes = 4096});
  const auto before = returning(-1), after = returning(-2);
  const void* live_before = arena.install(before.data(), before.size(), "before");
  const auto first = returning(1);
  const void* block = arena.install(first.data(), first.size(), "first");
  const void* live_after = arena.install(after.data(), after.size(), "after");
  ASSERT_EQ(call(block), 1);
  for (int i = 2; i <= 1000; ++i) {
    arena.release(block);
    const auto code = returning(i * 1000 + i);
    ASSERT_EQ(arena.install(code.data(), code.size(), "next"), block) << "the test wants the block reused";
    ASSERT_EQ(call(block), i * 1000 + i) << "reuse " << i << " ran the code released before";
    ASSERT_EQ(call(live_before), -1);
    ASSERT_EQ(call(live_after), -2);
  }
  for (const void* p : {block, live_before, live_after}) arena.release(p);
}

TEST(CodeArena, CallIntoReleasedCodeTraps) {
  CodeArena arena(CodeArenaLimits{.chunk_bytes = 4096, .max_bytes = 4096});
  const auto code = returning(5);
  const void* fn = arena.install(code.data(), code.size(), "five");
  ASSERT_EQ(call(fn), 5);
  arena.release(fn);
  EXPECT_EXIT(std::exit(call(fn)), ::testing::KilledBySignal(kTrapSignal), "");
}

TEST(CodeArena, ForkedChildRunsItsOwnCopyOfTheCode) {
  CodeArena arena(CodeArenaLimits{.chunk_bytes = 64 << 10, .max_bytes = 64 << 10});
  const auto one = returning(1);
  const void* code = arena.install(one.data(), one.size(), "one");
  int to_child[2], to_parent[2];
  ASSERT_EQ(::pipe(to_child), 0);
  ASSERT_EQ(::pipe(to_parent), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // By the time the parent writes, it has put other code where `one` was. The child still runs
    // `one`, and code it installs itself is its own.
    char go = 0;
    if (::read(to_child[0], &go, 1) != 1) ::_exit(100);
    const int first = call(code);
    const auto five = returning(5);
    const void* mine = arena.install(five.data(), five.size(), "five");
    const auto address = reinterpret_cast<std::uintptr_t>(mine);
    if (::write(to_parent[1], &address, sizeof address) != sizeof address) ::_exit(101);
    ::_exit(first * 10 + call(mine));
  }
  arena.release(code);
  const auto two = returning(2);
  const void* again = arena.install(two.data(), two.size(), "two");
  ASSERT_EQ(again, code) << "the test wants the parent to reuse the block";
  ASSERT_EQ(::write(to_child[1], "x", 1), 1);
  std::uintptr_t child_address = 0;
  ASSERT_EQ(::read(to_parent[0], &child_address, sizeof child_address),
            static_cast<ssize_t>(sizeof child_address));
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died (signal " << WTERMSIG(status)
                                 << "): it ran code the parent replaced";
  EXPECT_EQ(WEXITSTATUS(status), 15);
  EXPECT_EQ(call(again), 2);
  // What the child wrote is not in the parent's pages.
  const auto* mine = reinterpret_cast<const std::uint8_t*>(child_address);
  const auto five = returning(5);
  EXPECT_NE(std::memcmp(mine, five.data(), five.size()), 0);
  for (int fd : {to_child[0], to_child[1], to_parent[0], to_parent[1]}) ::close(fd);
  arena.release(again);
}

}  // namespace
