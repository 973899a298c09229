// The questions a LoopNest answers about itself, so that callers ask the parsed nest instead of
// scanning the loop_string's text (where grids, inline specs and clauses hold letters too).
#include "weft/parlooper/loop_nest.hpp"

#include <gtest/gtest.h>

#include <string>

#include "weft/parlooper/loop_string.hpp"

namespace weft::parlooper {
namespace {

struct NestCase {
  const char* text;
  int loops;
  bool parallel;
  bool plain_order;
};

void PrintTo(const NestCase& c, std::ostream* os) { *os << '"' << c.text << "\" (N=" << c.loops << ")"; }

class LoopNestQueries : public ::testing::TestWithParam<NestCase> {};

TEST_P(LoopNestQueries, AnswerFromTheParsedNest) {
  const NestCase& c = GetParam();
  const LoopNest nest = parse_loop_string(c.text, c.loops);
  EXPECT_EQ(nest.is_parallel(), c.parallel);
  EXPECT_EQ(nest.is_plain_order(), c.plain_order);
}

INSTANTIATE_TEST_SUITE_P(
    Strings, LoopNestQueries,
    ::testing::Values(
        NestCase{"a", 1, false, true},
        NestCase{"abc", 3, false, true},
        NestCase{"aBC", 3, true, true},
        NestCase{"Abc", 3, true, true},
        // The same nest spelled with the default schedule written out.
        NestCase{"aBC@schedule(static)", 3, true, true},
        NestCase{"aBC@schedule(static,4)", 3, true, false},
        NestCase{"aBC@schedule(dynamic)", 3, true, false},
        // Out of order, blocked, with grids, barriers or inline bounds: not plain.
        NestCase{"bac", 3, false, false},
        NestCase{"acb", 3, false, false},
        NestCase{"abcb", 3, false, false},
        NestCase{"bcaBCb", 3, true, false},
        NestCase{"A{R:2}B{C:2}c", 3, true, false},
        NestCase{"a|bc", 3, false, false},
        NestCase{"a[0,8,1]bc", 3, false, false},
        // Upper-case letters in a grid or a clause are no parallel level of their own.
        NestCase{"B{R:2}ac", 3, true, false},
        NestCase{"ab", 2, false, true}));

}  // namespace
}  // namespace weft::parlooper
