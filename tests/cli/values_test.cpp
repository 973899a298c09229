// The values weft's programs read (cli/values.hpp): strict, in range, one wording.
#include "weft/cli/values.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

using weft::cli::UsageError;

std::string message(void (*read)()) {
  try {
    read();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CliValues, IntegersAreWholeDecimalTextsInRange) {
  EXPECT_EQ(weft::cli::parse_integer("42", "n", 0, 100), 42);
  EXPECT_EQ(weft::cli::parse_integer("-7", "n", -10, 10), -7);
  EXPECT_EQ(weft::cli::parse_integer("010", "n", 0, 100), 10);  // decimal, not octal
  for (const char* bad : {"", "-", "+5", " 5", "5 ", "0x10", "1e3", "12abc", "99999999999999999999"})
    EXPECT_THROW(weft::cli::parse_integer(bad, "n", INT64_MIN, INT64_MAX), UsageError) << bad;
  EXPECT_EQ(message([] { weft::cli::parse_integer("x", "K", 1, 5); }), "K: 'x' is not an integer");
  EXPECT_EQ(message([] { weft::cli::parse_integer("0", "bm", 1, 4096); }), "bm: 0 is outside [1, 4096]");
}

TEST(CliValues, NumbersAreFiniteAndInRange) {
  EXPECT_EQ(weft::cli::parse_number("0.5", "x", 0, 1), 0.5);
  EXPECT_EQ(weft::cli::parse_number("1e3", "x", 0, 1e6), 1000.0);
  for (const char* bad : {"", "nan", "inf", "1e400", "0x1p3", "1.5s", " 1"})
    EXPECT_THROW(weft::cli::parse_number(bad, "x", -1e9, 1e9), UsageError) << bad;
  EXPECT_EQ(message([] { weft::cli::parse_number("0", "--budget", 0.1, 1e6); }), "--budget: 0 is outside [0.1, 1e+06]");
}

TEST(CliValues, ListsAreIntegersSeparatedByCommas) {
  EXPECT_EQ(weft::cli::parse_integer_list("8,2", "l", 1, 64), (std::vector<long>{8, 2}));
  EXPECT_EQ(weft::cli::parse_integer_list("3", "l", 1, 64), (std::vector<long>{3}));
  for (const char* bad : {"", ",", "4,,2", "4,", ",4", "4;2"})
    EXPECT_THROW(weft::cli::parse_integer_list(bad, "l", 1, 64), UsageError) << bad;
  EXPECT_EQ(message([] { weft::cli::parse_integer_list("4,0", "--m-blocks", 1, 64); }),
            "--m-blocks: 0 is outside [1, 64]");
}

}  // namespace
