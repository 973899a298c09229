// LoopSpecs constructors (PARLOOPER's) and NestBounds: values and every LoopSpecs error.
#include "weft/parlooper/loop_specs.hpp"

#include <gtest/gtest.h>

#include <climits>
#include <vector>

#include "weft/parlooper/loop_string.hpp"

namespace weft::parlooper {
namespace {

TEST(LoopSpecs, ParloopersConstructors) {
  const LoopSpecs end_only{16};
  EXPECT_EQ(end_only.start, 0);
  EXPECT_EQ(end_only.end, 16);
  EXPECT_EQ(end_only.step, 1);
  EXPECT_TRUE(end_only.block_size.empty());

  const LoopSpecs range{4, 16};
  EXPECT_EQ(range.start, 4);
  EXPECT_EQ(range.end, 16);
  EXPECT_EQ(range.step, 1);

  const LoopSpecs stepped{0, 16, 2};
  EXPECT_EQ(stepped.step, 2);

  const LoopSpecs blocked{0, 16, 2, {8, 4}};
  EXPECT_EQ(blocked.block_size, (std::vector<long>{8, 4}));

  const LoopSpecs end_blocked{16, {4}};
  EXPECT_EQ(end_blocked.end, 16);
  EXPECT_EQ(end_blocked.block_size, (std::vector<long>{4}));

  const LoopSpecs range_blocked{2, 16, {4}};
  EXPECT_EQ(range_blocked.start, 2);
  EXPECT_EQ(range_blocked.step, 1);
  EXPECT_EQ(range_blocked.block_size, (std::vector<long>{4}));

  // PARLOOPER's isParallel forms.
  const LoopSpecs flagged{0, 16, 2, false, {8}};
  EXPECT_FALSE(flagged.isParallel);
  EXPECT_EQ(flagged.block_size, (std::vector<long>{8}));
  const LoopSpecs flagged_end{16, true};
  EXPECT_TRUE(flagged_end.isParallel);
  EXPECT_EQ(flagged_end.end, 16);

  long Kb = 12, k_step = 2, l1 = 8, l0 = 4;
  const LoopSpecs readme{0, Kb, k_step, {l1, l0}};
  EXPECT_EQ(readme.end, 12);
  EXPECT_EQ(readme.block_size.size(), 2u);
}

TEST(NestBounds, StepsPerLevelFollowRuleOne) {
  const LoopNest nest = parse_loop_string("bcaBCb", 3);
  const std::vector<LoopSpecs> specs{LoopSpecs{0, 8, 1}, LoopSpecs{-2, 20, 2, {8, 4}},
                                     LoopSpecs{0, 9, 3, {6, 99}}};
  const NestBounds b = make_nest_bounds(nest, specs);
  EXPECT_EQ(b.loop_start[1], -2);
  EXPECT_EQ(b.loop_end[1], 20);
  const std::int64_t steps[] = {8, 6, 1, 4, 3, 2};  // extra block size 99 is ignored
  for (int l = 0; l < 6; ++l) EXPECT_EQ(b.level_step[l], steps[l]) << l;
}

struct SpecsErrorCase {
  const char* text;
  std::vector<LoopSpecs> specs;
  std::size_t position;
  const char* says;
};

TEST(NestBounds, EveryLoopSpecsErrorPointsAtItsLetter) {
  const long big = 1L << 40;
  const SpecsErrorCase cases[] = {
      {"aBC", {LoopSpecs{0, 4, 0}, LoopSpecs{4}, LoopSpecs{4}}, 0, "step 0 must be positive"},
      {"aBC", {LoopSpecs{4}, LoopSpecs{0, 4, -1}, LoopSpecs{4}}, 1, "step -1 must be positive"},
      {"bBac", {LoopSpecs{4}, LoopSpecs{0, 8, 1, {-4}}, LoopSpecs{4}}, 0, "block size -4 (block_size[0]) must be positive"},
      {"bBac", {LoopSpecs{4}, LoopSpecs{0, 8, 1, {0}}, LoopSpecs{4}}, 0, "must be positive"},
      {"acbB", {LoopSpecs{4}, LoopSpecs{0, 8, 2, {3}}, LoopSpecs{4}}, 2, "not a multiple of the step 2"},
      // PARLOOPER failure table: a letter repeated more often than its block list allows.
      {"bcaBCb", {LoopSpecs{4}, LoopSpecs{0, 8, 1, {4}}, LoopSpecs{0, 8, 1, {2}}}, 5,
       "loop 'b' appears 3 times, so LoopSpecs[1] (loop 'b') needs 2 block sizes"},
      {"aaBc", {LoopSpecs{4}, LoopSpecs{4}, LoopSpecs{4}}, 1, "needs 1 block size (outermost first), but it has 0"},
      // Bounds beyond int: the body receives int*.
      {"aBc", {LoopSpecs{0, big}, LoopSpecs{4}, LoopSpecs{4}}, 0,
       "the end of [0, 1099511627776) step 1 (the body receives int indices): 1099511627776 is beyond the range of "
       "int (-2147483648..2147483647)"},
      {"aBc", {LoopSpecs{4}, LoopSpecs{-big, 0}, LoopSpecs{4}}, 1, "the start of [-1099511627776, 0) step 1"},
      {"aBc", {LoopSpecs{4}, LoopSpecs{0, 4, big}, LoopSpecs{4}}, 1,
       "the step of [0, 4) step 1099511627776 (the body receives int indices): 1099511627776 is beyond the range of int"},
      {"aaBc", {LoopSpecs{0, 4, 1, {big}}, LoopSpecs{4}, LoopSpecs{4}}, 0,
       "block size 1099511627776 (block_size[0]): 1099511627776 is beyond the range of int (-2147483648..2147483647)"},
      // A run whose collapsed count does not fit in 64 bits.
      {"ABC", {LoopSpecs{INT_MIN, INT_MAX}, LoopSpecs{INT_MIN, INT_MAX}, LoopSpecs{INT_MIN, INT_MAX}}, 0,
       "more than 2^62 collapsed iterations"},
  };
  for (const SpecsErrorCase& c : cases) {
    const LoopNest nest = parse_loop_string(c.text, 3);
    try {
      make_nest_bounds(nest, c.specs);
      ADD_FAILURE() << c.text << ": accepted";
    } catch (const LoopStringError& e) {
      EXPECT_EQ(e.position(), c.position) << e.what();
      EXPECT_NE(e.problem().find(c.says), std::string::npos) << e.what();
    }
  }
}

TEST(NestBounds, IntExtremesAreAccepted) {
  const LoopNest nest = parse_loop_string("A", 1);
  const std::vector<LoopSpecs> specs{LoopSpecs{INT_MIN, INT_MAX, INT_MAX}};
  const NestBounds b = make_nest_bounds(nest, specs);
  EXPECT_EQ(b.loop_start[0], INT_MIN);
  EXPECT_EQ(b.level_step[0], INT_MAX);
}

}  // namespace
}  // namespace weft::parlooper
