// Base of every exception weft throws, so callers can catch all of ours at once:
//
//   try { ... } catch (const weft::Error& e) { std::cerr << e.what() << '\n'; }
//
// Buffers whose size comes from the user are sized with bytes_needed() (no silent overflow),
// checked with require_memory() and allocated inside allocating(), so that a size this machine
// cannot hold says how much memory it needs instead of ending in std::bad_alloc or a wrapped size:
//
//   const std::uint64_t bytes = weft::bytes_needed({M, K}, sizeof(float));
//   weft::require_memory("matrix A (M x K)", bytes);
//   auto a = weft::allocating("matrix A (M x K)", bytes, [&] { return std::vector<float>(M * K); });
//   // weft::MemoryError: "matrix A (M x K) needs 3.6 TiB of memory, more than this machine's 31.2 GiB"
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace weft {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A byte count that does not fit in 64 bits (bytes_needed and add_bytes saturate to it).
inline constexpr std::uint64_t kBytesOverflow = std::numeric_limits<std::uint64_t>::max();

// "512 bytes", "1.5 KiB", ..., "3.6 TiB".
inline std::string format_bytes(std::uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  static constexpr const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < sizeof units / sizeof *units) value /= 1024.0, ++unit;
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

// A buffer that a user-given size calls for and that cannot be had. The message names the buffer
// and the memory it needs. overflow and beyond_machine depend only on the sizes (and the machine),
// so a tool reports them as bad usage; allocation_failed is a run-time failure.
class MemoryError : public Error {
 public:
  enum class Reason { overflow, beyond_machine, allocation_failed };

  MemoryError(std::string_view what, std::uint64_t bytes, Reason reason, std::uint64_t machine_bytes = 0)
      : Error(message(what, bytes, reason, machine_bytes)), bytes_(bytes), reason_(reason) {}

  std::uint64_t bytes() const { return bytes_; }  // kBytesOverflow for Reason::overflow
  Reason reason() const { return reason_; }

 private:
  static std::string message(std::string_view what, std::uint64_t bytes, Reason reason,
                             std::uint64_t machine_bytes) {
    std::string text(what);
    if (reason == Reason::overflow || bytes == kBytesOverflow)
      return text + " needs more than 16 EiB of memory (its size overflows 64 bits)";
    text += " needs " + format_bytes(bytes) + " of memory";
    if (reason == Reason::beyond_machine) return text + ", more than this machine's " + format_bytes(machine_bytes);
    return text + ": allocating it failed";
  }

  std::uint64_t bytes_;
  Reason reason_;
};

// Bytes of a dense buffer of product(dims) elements of element_bytes each; kBytesOverflow when that
// does not fit in 64 bits. Throws weft::Error for a negative dimension.
inline std::uint64_t bytes_needed(std::initializer_list<std::int64_t> dims, std::uint64_t element_bytes) {
  std::uint64_t bytes = element_bytes;
  bool overflow = false;
  for (std::int64_t d : dims) {
    if (d < 0) throw Error("bytes_needed: negative size " + std::to_string(d));
    if (d == 0) return 0;
    overflow = overflow || __builtin_mul_overflow(bytes, static_cast<std::uint64_t>(d), &bytes);
  }
  return overflow ? kBytesOverflow : bytes;
}

// a + b, kBytesOverflow when that does not fit in 64 bits.
inline std::uint64_t add_bytes(std::uint64_t a, std::uint64_t b) {
  std::uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? kBytesOverflow : sum;
}

// Physical memory of this machine; kBytesOverflow when the system does not say.
inline std::uint64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return kBytesOverflow;
  return bytes_needed({pages}, static_cast<std::uint64_t>(page));
}

// Throws MemoryError when `bytes` (for `what`) overflowed or exceeds this machine's physical memory:
// such a buffer would fail to allocate, or thrash and be killed, rather than compute anything.
inline void require_memory(std::string_view what, std::uint64_t bytes) {
  if (bytes == kBytesOverflow) throw MemoryError(what, bytes, MemoryError::Reason::overflow);
  const std::uint64_t machine = physical_memory_bytes();
  if (bytes > machine) throw MemoryError(what, bytes, MemoryError::Reason::beyond_machine, machine);
}

// Returns allocate(), which allocates about `bytes` for `what`; std::bad_alloc or std::length_error
// from it becomes a MemoryError (allocation_failed) that says how much was asked for.
template <class Allocate>
decltype(auto) allocating(std::string_view what, std::uint64_t bytes, Allocate&& allocate) {
  try {
    return std::forward<Allocate>(allocate)();
  } catch (const std::bad_alloc&) {
    throw MemoryError(what, bytes, MemoryError::Reason::allocation_failed);
  } catch (const std::length_error&) {
    throw MemoryError(what, bytes, MemoryError::Reason::allocation_failed);
  }
}

}  // namespace weft
