#include "weft/jit/x64/code_buffer.hpp"

#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "weft/jit/cpu.hpp"
#include "weft/jit/emitting.hpp"
#include "weft/jit/error.hpp"

namespace {

struct AddConstant : weft::jit::x64::CodeBuffer {
  explicit AddConstant(int c) {
    mov(eax, edi);
    add(eax, c);
    ret();
  }
};

// Permissions ("r-xp", "rw-p", ...) of the mapping that holds `address`, from /proc/self/maps.
std::string mapping_permissions(const void* address) {
  std::ifstream maps("/proc/self/maps");
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, perms;
    in >> range >> perms;
    const auto dash = range.find('-');
    const auto lo = std::stoull(range.substr(0, dash), nullptr, 16);
    const auto hi = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (a >= lo && a < hi) return perms;
  }
  return "unmapped";
}

TEST(CodeBuffer, GeneratedFunctionRuns) {
  AddConstant code(1);
  auto fn = code.finalize<int (*)(int)>("add_one");
  EXPECT_EQ(fn(41), 42);
  EXPECT_TRUE(code.finalized());
  EXPECT_EQ(code.name(), "add_one");
}

TEST(CodeBuffer, WritableWhileEmittedExecutableAfterNeverBoth) {
  AddConstant code(2);
  EXPECT_EQ(mapping_permissions(code.getCode()).substr(0, 3), "rw-");
  auto fn = code.finalize<int (*)(int)>("add_two");
  EXPECT_EQ(mapping_permissions(reinterpret_cast<const void*>(fn)).substr(0, 3), "r-x");
}

TEST(CodeBuffer, GeneratedCodeLiesWithinRel32ReachOfCompiledCode) {
  // Many buffers, so the allocator must keep finding nearby free ranges.
  std::vector<std::unique_ptr<AddConstant>> buffers;
  const auto compiled = reinterpret_cast<std::intptr_t>(&weft::jit::cpu_features);
  for (int i = 0; i < 64; ++i) {
    buffers.push_back(std::make_unique<AddConstant>(i));
    auto fn = buffers.back()->finalize<int (*)(int)>("near");
    EXPECT_EQ(fn(1), 1 + i);
    const std::intptr_t distance = reinterpret_cast<std::intptr_t>(fn) - compiled;
    EXPECT_LT(distance < 0 ? -distance : distance, std::intptr_t{1} << 31) << "buffer " << i;
  }
}

TEST(CodeBuffer, FinalizeTwiceIsAnError) {
  AddConstant code(3);
  code.finalize<int (*)(int)>("add_three");
  EXPECT_THROW(code.finalize<int (*)(int)>("again"), weft::Error);
}

TEST(CodeBuffer, CodeLivesInTheArenaUntilTheBufferIsDestroyed) {
  weft::jit::CodeArena arena;
  struct Seven : weft::jit::x64::CodeBuffer {
    explicit Seven(weft::jit::CodeArena& a) : CodeBuffer(64, a) {
      mov(eax, 7);
      ret();
    }
  };
  auto code = std::make_unique<Seven>(arena);
  EXPECT_EQ(arena.stats().used_blocks, 0u);
  auto fn = code->finalize<int (*)()>("seven");
  EXPECT_EQ(fn(), 7);
  EXPECT_EQ(static_cast<const void*>(code->getCode()), reinterpret_cast<const void*>(fn));
  EXPECT_EQ(code->getSize(), 6u);
  EXPECT_EQ(arena.stats().used_blocks, 1u);
  // Emitting after finalize() must not write anywhere.
  EXPECT_ANY_THROW(code->ret());
  code.reset();
  EXPECT_EQ(arena.stats().used_blocks, 0u);
}

TEST(CodeBuffer, XbyakErrorsDuringEmissionBecomeWeftErrorsNamingTheCode) {
  struct TooBig : weft::jit::x64::CodeBuffer {
    TooBig() : CodeBuffer(16) { nop(64); }
  };
  try {
    weft::jit::emitting("kernel xyz", [] { return std::make_unique<TooBig>(); });
    FAIL() << "64 bytes went into a 16-byte buffer";
  } catch (const weft::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("kernel xyz"), std::string::npos) << message;
    EXPECT_NE(message.find("code is too big"), std::string::npos) << message;
  }
}

TEST(CodeBuffer, UndefinedLabelIsAWeftErrorAtFinalize) {
  struct Dangling : weft::jit::x64::CodeBuffer {
    Dangling() { jmp(nowhere, T_NEAR); }
    Xbyak::Label nowhere;
  };
  Dangling code;
  try {
    code.finalize<void (*)()>("dangling jump");
    FAIL() << "finalized with an undefined label";
  } catch (const weft::Error& e) {
    EXPECT_NE(std::string(e.what()).find("dangling jump"), std::string::npos) << e.what();
  }
}

TEST(CodeBuffer, AlignBeyondTheArenaAlignmentIsAnError) {
  struct Aligned : weft::jit::x64::CodeBuffer {
    explicit Aligned(std::size_t to) {
      nop(3);
      align(to);
      ret();
    }
  };
  EXPECT_NO_THROW({ Aligned code(weft::jit::CodeArena::kAlignment); });
  EXPECT_THROW({ Aligned code(2 * weft::jit::CodeArena::kAlignment); }, weft::Error);
}

}  // namespace
