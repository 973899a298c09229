// The memory helpers of weft/jit/error.hpp: sizes that overflow or exceed this machine, and failed
// allocations, become a MemoryError that says how much memory was asked for.
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "weft/jit/error.hpp"

namespace weft {
namespace {

TEST(MemoryError, FormatsBytesInBinaryUnits) {
  EXPECT_EQ(format_bytes(0), "0 bytes");
  EXPECT_EQ(format_bytes(1), "1 byte");
  EXPECT_EQ(format_bytes(1023), "1023 bytes");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(std::uint64_t{3} << 30), "3.0 GiB");
  EXPECT_EQ(format_bytes(std::uint64_t{4} * 1000000000000), "3.6 TiB");
  EXPECT_EQ(format_bytes(kBytesOverflow), "16.0 EiB");
}

TEST(MemoryError, BytesNeededSaturatesInsteadOfWrapping) {
  EXPECT_EQ(bytes_needed({1000000, 1000000}, 4), std::uint64_t{4000000000000});
  EXPECT_EQ(bytes_needed({}, 8), 8u);
  EXPECT_EQ(bytes_needed({5, 0, INT64_MAX}, 4), 0u);
  EXPECT_EQ(bytes_needed({INT64_MAX, 2}, 4), kBytesOverflow);
  EXPECT_EQ(bytes_needed({std::int64_t{1} << 32, std::int64_t{1} << 32}, 1), kBytesOverflow);
  EXPECT_THROW(bytes_needed({4, -1}, 4), Error);
  EXPECT_EQ(add_bytes(1, 2), 3u);
  EXPECT_EQ(add_bytes(kBytesOverflow - 1, 2), kBytesOverflow);
}

TEST(MemoryError, RequireMemoryNamesTheBufferAndTheReason) {
  EXPECT_NO_THROW(require_memory("a small buffer", 4096));
  try {
    require_memory("matrix A (M x K)", bytes_needed({INT64_MAX, 4}, 4));
    FAIL();
  } catch (const MemoryError& e) {
    EXPECT_EQ(e.reason(), MemoryError::Reason::overflow);
    EXPECT_EQ(std::string(e.what()), "matrix A (M x K) needs more than 16 EiB of memory (its size overflows 64 bits)");
  }
  const std::uint64_t machine = physical_memory_bytes();
  ASSERT_GT(machine, 0u);
  if (machine < kBytesOverflow / 2) {
    try {
      require_memory("the trace", machine * 2);
      FAIL();
    } catch (const MemoryError& e) {
      EXPECT_EQ(e.reason(), MemoryError::Reason::beyond_machine);
      EXPECT_EQ(e.bytes(), machine * 2);
      EXPECT_EQ(std::string(e.what()), "the trace needs " + format_bytes(machine * 2) +
                                           " of memory, more than this machine's " + format_bytes(machine));
    }
  }
}

TEST(MemoryError, AllocatingTurnsBadAllocIntoAMessage) {
  EXPECT_EQ(allocating("a vector", 64, [] { return std::vector<float>(16); }).size(), 16u);
  try {
    allocating("matrix B (K x N)", std::uint64_t{5} << 30, []() -> int { throw std::bad_alloc(); });
    FAIL();
  } catch (const MemoryError& e) {
    EXPECT_EQ(e.reason(), MemoryError::Reason::allocation_failed);
    EXPECT_EQ(std::string(e.what()), "matrix B (K x N) needs 5.0 GiB of memory: allocating it failed");
  }
  EXPECT_THROW(allocating("x", 1, []() -> int { throw std::length_error("vector"); }), MemoryError);
  EXPECT_THROW(allocating("x", 1, []() -> int { throw std::runtime_error("other"); }), std::runtime_error);
}

}  // namespace
}  // namespace weft
