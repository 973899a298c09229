// weft/jit/checked_arithmetic.hpp: products and sums of user sizes either fit the limit or throw a
// weft::Error that names the quantity, its operands and the limit.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "weft/jit/checked_arithmetic.hpp"

namespace weft {
namespace {

std::string message_of(void (*f)()) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CheckedArithmetic, ResultsWithinTheLimitAreExact) {
  EXPECT_EQ(checked_mul(3037000499, 3037000499, "square"), std::int64_t{9223372030926249001});
  EXPECT_EQ(checked_mul(-4, 5, "negative"), -20);
  EXPECT_EQ(checked_add(kInt64Limit - 1, 1, "sum"), kInt64Limit);
  EXPECT_EQ(checked_mul(46340, 46340, "int", kIntLimit), 2147395600);
  EXPECT_EQ(checked_int(-kIntLimit - 1, "int"), -2147483647 - 1);
  EXPECT_EQ(checked_int(kIntLimit, "int"), 2147483647);
}

TEST(CheckedArithmetic, OverflowNamesTheQuantityOperandsAndLimit) {
  EXPECT_EQ(message_of([] { checked_mul(std::int64_t{1} << 62, 2, "dimension 0's span (size x stride)"); }),
            "dimension 0's span (size x stride): 4611686018427387904 x 2 is beyond the limit "
            "9223372036854775807 (2^63 - 1)");
  EXPECT_EQ(message_of([] { checked_add(kInt64Limit, 1, "the bound"); }),
            "the bound: 9223372036854775807 + 1 is beyond the limit 9223372036854775807 (2^63 - 1)");
  EXPECT_EQ(message_of([] { checked_mul(INT64_MIN, -1, "negated"); }),
            "negated: -9223372036854775808 x -1 is beyond the limit 9223372036854775807 (2^63 - 1)");
}

TEST(CheckedArithmetic, ALimitBoundsTheMagnitude) {
  EXPECT_EQ(message_of([] { checked_add(kIntLimit, 7, "m rounded up to vectors", kIntLimit); }),
            "m rounded up to vectors: 2147483647 + 7 is beyond the limit 2147483647 (2^31 - 1)");
  EXPECT_EQ(message_of([] { checked_mul(-65536, 65536, "a negative product", kIntLimit); }),
            "a negative product: -65536 x 65536 is beyond the limit 2147483647 (2^31 - 1)");
  EXPECT_EQ(message_of([] { checked_mul(10, 11, "bytes", 100); }), "bytes: 10 x 11 is beyond the limit 100");
  EXPECT_EQ(message_of([] { checked_int(std::int64_t{1} << 31, "a loop bound"); }),
            "a loop bound: 2147483648 is beyond the range of int (-2147483648..2147483647)");
  EXPECT_EQ(message_of([] { checked_int(-(std::int64_t{1} << 31) - 1, "a loop bound"); }),
            "a loop bound: -2147483649 is beyond the range of int (-2147483648..2147483647)");
}

TEST(CheckedArithmetic, BuildsTheNameOnlyOnFailure) {
  int built = 0;
  const auto name = [&] {
    ++built;
    return std::string("lazily named");
  };
  EXPECT_EQ(checked_mul(6, 7, name), 42);
  EXPECT_EQ(built, 0);
  EXPECT_THROW(checked_mul(kInt64Limit, 2, name), Error);
  EXPECT_EQ(built, 1);
}

}  // namespace
}  // namespace weft
