// Overflow-checked arithmetic on sizes that come from users: extents, strides, byte spans, loop
// bounds. Every layer computes its products and sums of such sizes with these, so that a size too
// large for what the layer can address is a weft::Error naming the quantity, its operands and the
// limit, never a wrapped number (undefined behaviour in signed arithmetic) that is used further on.
//
//   const std::int64_t bytes = weft::checked_mul(size, stride, "dimension 2's span in in0 (size x stride)");
//   // weft::Error: "dimension 2's span in in0 (size x stride): 4611686018427387904 x 8 is beyond
//   //               the limit 9223372036854775807 (2^63 - 1)"
//   const int end = weft::checked_int(spec.end, "LoopSpecs[0]'s end");
//   // weft::Error: "LoopSpecs[0]'s end: 4294967296 is beyond the range of int (-2147483648..2147483647)"
//
// `what` is a string or, where a message needs building, a callable returning one (called only on
// failure). `limit` bounds the magnitude of the result: |a op b| <= limit.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "weft/jit/error.hpp"

namespace weft {

inline constexpr std::int64_t kInt64Limit = std::numeric_limits<std::int64_t>::max();
inline constexpr std::int64_t kIntLimit = std::numeric_limits<int>::max();

namespace detail {

template <class What>
std::string name_of(const What& what) {
  if constexpr (std::is_invocable_v<const What&>) return std::string(what());
  else return std::string(what);
}

inline std::string name_limit(std::int64_t limit) {
  std::string text = std::to_string(limit);
  if (limit == kInt64Limit) return text + " (2^63 - 1)";
  if (limit == kIntLimit) return text + " (2^31 - 1)";
  return text;
}

template <class What>
[[noreturn]] void size_beyond_limit(const What& what, std::int64_t a, const char* op, std::int64_t b,
                                    std::int64_t limit) {
  throw Error(name_of(what) + ": " + std::to_string(a) + op + std::to_string(b) + " is beyond the limit " +
              name_limit(limit));
}

inline bool beyond(std::int64_t value, std::int64_t limit) { return value > limit || value < -limit; }

}  // namespace detail

template <class What>
std::int64_t checked_mul(std::int64_t a, std::int64_t b, const What& what, std::int64_t limit = kInt64Limit) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r) || detail::beyond(r, limit)) detail::size_beyond_limit(what, a, " x ", b, limit);
  return r;
}

template <class What>
std::int64_t checked_add(std::int64_t a, std::int64_t b, const What& what, std::int64_t limit = kInt64Limit) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r) || detail::beyond(r, limit)) detail::size_beyond_limit(what, a, " + ", b, limit);
  return r;
}

// value as an int, for interfaces (descriptors, loop bounds) that hold sizes in 32 bits.
template <class What>
int checked_int(std::int64_t value, const What& what) {
  if (!std::in_range<int>(value))
    throw Error(detail::name_of(what) + ": " + std::to_string(value) + " is beyond the range of int (" +
                std::to_string(std::numeric_limits<int>::min()) + ".." + std::to_string(kIntLimit) + ")");
  return static_cast<int>(value);
}

}  // namespace weft
