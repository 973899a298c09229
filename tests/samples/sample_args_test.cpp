#include "sample_args.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

using weft::samples::SampleArgs;
using weft::samples::UsageError;

SampleArgs parse(std::vector<std::string> words, const std::vector<std::string>& known = {"threads"}) {
  std::vector<char*> argv{const_cast<char*>("prog")};
  for (auto& w : words) argv.push_back(w.data());
  return SampleArgs::parse(static_cast<int>(argv.size()), argv.data(), known);
}

TEST(SampleArgs, PositionalAndOptionsInAnyOrder) {
  const auto args = parse({"aBC", "--threads", "2", "64"});
  EXPECT_EQ(args.positional, (std::vector<std::string>{"aBC", "64"}));
  EXPECT_EQ(args.option_integer("threads", 0), 2);
  EXPECT_EQ(args.integer(1, "M", 0), 64);
  EXPECT_EQ(args.integer(5, "absent", 7), 7);
}

TEST(SampleArgs, MalformedInputIsAUsageError) {
  EXPECT_THROW(parse({"--bogus", "1"}), UsageError);
  EXPECT_THROW(parse({"--threads"}), UsageError);
  EXPECT_THROW(parse({"x", "12abc"}).integer(1, "M", 0), UsageError);
  EXPECT_THROW(parse({"x", "0"}).integer(1, "M", 0), UsageError);
  EXPECT_THROW(parse({"x", "99999999999999999999"}).integer(1, "M", 0), UsageError);
  EXPECT_THROW(parse({"--threads", "-1"}).option_integer("threads", 0), UsageError);
}

TEST(SampleArgs, MissingAndExtraArgumentsAreNamed) {
  try {
    weft::samples::require_gemm_shape_arguments(parse({"aBC", "64", "64"}));
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("missing K (argument 4)"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(weft::samples::require_gemm_shape_arguments(parse({"a", "1", "1", "1", "1", "1", "1"})));
  try {
    parse({"a", "b", "c"}).require_at_most(2, "X Y");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("unexpected argument 'c' (argument 3)"), std::string::npos) << e.what();
  }
}

TEST(SampleArgs, Lists) {
  const auto args = parse({"--threads", "4,2"});
  EXPECT_EQ(args.option_list("threads"), (std::vector<long>{4, 2}));
  EXPECT_THROW(parse({"--threads", "4,,2"}).option_list("threads"), UsageError);
}

}  // namespace
