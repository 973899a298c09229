// The loop_string grammar, its canonical form, and every error of docs/loop_string.md.
#include "weft/parlooper/loop_string.hpp"

#include <gtest/gtest.h>

#include <initializer_list>

#include <string>
#include <vector>

#include "weft/parlooper/nest_cache.hpp"
#include "weft/parlooper/render.hpp"

namespace weft::parlooper {
namespace {

struct ErrorCase {
  std::string text;
  int loops;
  std::size_t position;
  std::string says;  // a piece of the problem statement
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << '"' << c.text << "\" (N=" << c.loops << ")"; }

class LoopStringErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(LoopStringErrorTest, NamesTheProblemAndPointsAtIt) {
  const ErrorCase& c = GetParam();
  try {
    parse_loop_string(c.text, c.loops);
    FAIL() << "accepted";
  } catch (const LoopStringError& e) {
    EXPECT_EQ(e.position(), c.position) << e.what();
    EXPECT_NE(e.problem().find(c.says), std::string::npos) << e.what();
    EXPECT_EQ(e.loop_string(), c.text);
    // The message shows the string and a caret under the culprit.
    const std::string message = e.what();
    std::string shown = c.text;
    for (char& ch : shown)
      if (static_cast<unsigned char>(ch) < 0x20) ch = '?';
    if (c.text.size() < 80) {
      EXPECT_NE(message.find("\n  " + shown + "\n  " + std::string(c.position, ' ') + "^"),
                std::string::npos)
          << message;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Grammar, LoopStringErrorTest,
    ::testing::Values(
        // PARLOOPER failure table: invalid character, missing letter, letter beyond N, empty.
        ErrorCase{"", 3, 0, "empty"},
        ErrorCase{"ab-c", 3, 2, "unexpected character '-'"},
        ErrorCase{"ab\x01" "c", 3, 2, "byte 0x01"},
        ErrorCase{"ab c", 3, 2, "space"},
        ErrorCase{"ab", 3, 2, "loop 'c' (LoopSpecs[2]) does not appear"},
        ErrorCase{"abd", 3, 2, "beyond the 3 loops"},
        ErrorCase{"abcD", 3, 3, "'D' is beyond"},
        // Parallel runs and grids.
        ErrorCase{"AbC", 3, 2, "second parallel run 'C'"},
        ErrorCase{"ABcDa", 4, 3, "Merge the runs"},
        ErrorCase{"A{R:2}BC", 3, 6, "mixed with a thread grid"},
        ErrorCase{"BCA{R:2}", 3, 0, "mixed with a thread grid"},
        ErrorCase{"a{R:2}bc", 3, 1, "write 'A{...}'"},
        ErrorCase{"A{R:2}B{R:2}c", 3, 8, "R is used twice"},
        ErrorCase{"A{X:2}bc", 3, 2, "expected R (rows), C (columns) or L (layers)"},
        ErrorCase{"A{R2}bc", 3, 3, "expected ':'"},
        ErrorCase{"A{R:0}bc", 3, 4, "must be positive"},
        ErrorCase{"A{R:}bc", 3, 4, "positive integer"},
        ErrorCase{"A{R:2bc", 3, 5, "expected '}'"},
        ErrorCase{"abC{", 3, 4, "unterminated"},
        ErrorCase{"A{R:99999999999}bc", 3, 4, "too large"},
        ErrorCase{"{R:2}abc", 3, 0, "must follow an upper-case loop letter"},
        ErrorCase{"A{R:65536}B{C:65536}c", 3, 14, "more than"},
        // Barriers.
        ErrorCase{"|abc", 3, 0, "'|' must follow a loop letter"},
        ErrorCase{"ab||c", 3, 3, "'|' must follow a loop letter"},
        ErrorCase{"aBC|", 3, 3, "put '|' after its first letter"},
        ErrorCase{"aBCa|", 3, 4, "inside the parallel loop 'B'"},
        ErrorCase{"A{R:2}bc|", 3, 8, "inside the parallel loop 'A'"},
        ErrorCase{"bC{C:2}a|", 3, 8, "unequal numbers of times"},
        // Clauses.
        ErrorCase{"abc@", 3, 3, "'@' must be followed by a clause"},
        ErrorCase{"aBC@ , ", 3, 3, "'@' must be followed by a clause"},
        ErrorCase{"aBC@collapse(2)", 3, 4, "unsupported clause 'collapse'; supported: schedule"},
        ErrorCase{"aBC@schedule(sometimes)", 3, 13, "unsupported schedule kind 'sometimes'"},
        ErrorCase{"aBC@schedule(runtime,2)", 3, 21, "schedule(runtime) takes no chunk size"},
        ErrorCase{"aBC@schedule(auto,4)", 3, 18, "schedule(auto) takes no chunk size"},
        ErrorCase{"aBC@schedule(monotonic,nonmonotonic:dynamic)", 3, 23, "both 'monotonic' and 'nonmonotonic'"},
        ErrorCase{"aBC@schedule(foo:dynamic)", 3, 13, "unsupported schedule modifier 'foo'"},
        ErrorCase{"aBC@schedule(:dynamic)", 3, 13, "expected a schedule modifier"},
        ErrorCase{"aBC@schedule(simd dynamic)", 3, 18, "expected ',' or ':' after a schedule modifier"},
        ErrorCase{"aBC@schedule(monotonic:)", 3, 23, "expected a schedule kind"},
        ErrorCase{"aBC@schedule()", 3, 13, "expected a schedule kind"},
        ErrorCase{"aBC@schedule(dynamic,0)", 3, 21, "must be positive"},
        ErrorCase{"aBC@schedule(dynamic,x)", 3, 21, "positive integer"},
        ErrorCase{"aBC@schedule(dynamic", 3, 20, "the string ends"},
        ErrorCase{"aBC@schedule dynamic", 3, 13, "expected '('"},
        ErrorCase{"aBC@schedule(static) schedule(dynamic)", 3, 21, "a second schedule"},
        ErrorCase{"aBC@schedule(static)@", 3, 20, "unexpected '@'"},
        ErrorCase{"abc@schedule(dynamic)", 3, 4, "needs a work-shared run"},
        ErrorCase{"A{R:2}bc@schedule(static,2)", 3, 9, "needs a work-shared run"},
        // Inline specs, PARLOOPER's "a[start,end,step,(blocks)]".
        ErrorCase{"a[0,8]b", 2, 5, "expected ',' in the inline spec, found ']'"},
        ErrorCase{"a[0,8,0]b", 2, 6, "the step of the inline spec must be positive"},
        ErrorCase{"a[0,8,-1]b", 2, 6, "expected the step of the inline spec (a positive integer)"},
        ErrorCase{"a[0,8,1,(0)]b", 2, 9, "a block size of the inline spec must be positive"},
        ErrorCase{"a[0,8,1,4]b", 2, 8, "expected '(' in the inline spec"},
        ErrorCase{"a[0,8,1,(4]b", 2, 10, "expected ')' in the inline spec"},
        ErrorCase{"a[0,8,1", 1, 7, "unterminated inline spec"},
        ErrorCase{"a[x,8,1]", 1, 2, "expected the start of the inline spec (an integer)"},
        ErrorCase{"a[0,99999999999,1]", 1, 4, "the end of the inline spec is beyond the range of int"},
        ErrorCase{"a[-2147483649,8,1]", 1, 2, "beyond the range of int"},
        ErrorCase{"a[0,8,1]a[0,8,1]", 1, 9, "a second inline spec for loop 'a'"},
        ErrorCase{"[0,8,1]a", 1, 0, "goes right after its loop letter"},
        ErrorCase{"a|[0,8,1]b", 2, 2, "goes right after its loop letter"},
        ErrorCase{"A[0,8,1]{R:2}b", 2, 8, "the thread grid goes before the inline spec"},
        ErrorCase{"a[0,8,1,(4)]aa", 1, 1, "its inline spec needs 2 block sizes"},
        ErrorCase{"a[0,8,2,(3)]a", 1, 1, "block size 3 of the inline spec is not a multiple of its step 2"},
        // The number of loops itself.
        ErrorCase{"a", 0, 0, "1 to 26 loops"},
        ErrorCase{"a", 27, 0, "1 to 26 loops"}));

TEST(LoopString, LevelsOccurrencesAndTheRun) {
  const LoopNest nest = parse_loop_string("bcaBCb", 3);
  ASSERT_EQ(nest.levels.size(), 6u);
  const int loops[] = {1, 2, 0, 1, 2, 1};
  const int occurrence[] = {0, 0, 0, 1, 1, 2};
  const int occurrences[] = {3, 2, 1, 3, 2, 3};
  for (std::size_t l = 0; l < 6; ++l) {
    EXPECT_EQ(nest.levels[l].loop, loops[l]) << l;
    EXPECT_EQ(nest.levels[l].occurrence, occurrence[l]) << l;
    EXPECT_EQ(nest.levels[l].num_occurrences, occurrences[l]) << l;
    EXPECT_EQ(nest.levels[l].par, l == 3 || l == 4 ? ParKind::collapse : ParKind::none) << l;
  }
  EXPECT_EQ(nest.run_begin, 3);
  EXPECT_EQ(nest.run_length, 2);
  EXPECT_FALSE(nest.has_grid());
  EXPECT_EQ(nest.schedule, Schedule{});
  EXPECT_EQ(nest.canonical, "bcaBCb");
}

TEST(LoopString, ThreadGridOfParloopersReadme) {
  const LoopNest nest = parse_loop_string("bC{R:5}B{C:4}cbA{L:3}", 3);
  EXPECT_EQ(nest.grid_rows, 5);
  EXPECT_EQ(nest.grid_cols, 4);
  EXPECT_EQ(nest.grid_layers, 3);
  EXPECT_EQ(nest.grid_threads(), 60);
  EXPECT_FALSE(nest.has_run());
  EXPECT_EQ(nest.levels[1].par, ParKind::rows);
  EXPECT_EQ(nest.levels[1].ways, 5);
  EXPECT_EQ(nest.levels[2].par, ParKind::cols);
  EXPECT_EQ(nest.levels[5].par, ParKind::layers);
  EXPECT_EQ(nest.levels[5].ways, 3);
  EXPECT_EQ(nest.canonical, "bC{R:5}B{C:4}cbA{L:3}");
}

TEST(LoopString, BarriersWhereEveryThreadReachesThem) {
  const LoopNest readme = parse_loop_string("bc|aBCb", 3);
  EXPECT_TRUE(readme.levels[1].barrier_after);
  EXPECT_EQ(readme.canonical, "bc|aBCb");
  // After the first letter of a run: after the whole work-shared loop.
  const LoopNest run = parse_loop_string("aB|C", 3);
  EXPECT_TRUE(run.levels[1].barrier_after);
  EXPECT_EQ(run.run_begin, 1);
  EXPECT_EQ(run.run_length, 2);
  const LoopNest grid = parse_loop_string("A{R:2}|bc", 3);
  EXPECT_TRUE(grid.levels[0].barrier_after);
  EXPECT_EQ(grid.canonical, "A{R:2}|bc");
}

TEST(LoopString, BarrierAfterGridLoopAtTheEndIsInsideIt) {
  EXPECT_THROW(parse_loop_string("A{R:2}bc|", 3), LoopStringError);
  EXPECT_NO_THROW(parse_loop_string("A{R:2}|bc", 3));
}

struct ScheduleCase {
  const char* text;
  ScheduleKind kind;
  int chunk;
  const char* canonical;
};

void expect_schedules(std::initializer_list<ScheduleCase> cases) {
  for (const ScheduleCase& c : cases) {
    const LoopNest nest = parse_loop_string(c.text, 3);
    EXPECT_EQ(nest.schedule.kind, c.kind) << c.text;
    EXPECT_EQ(nest.schedule.chunk, c.chunk) << c.text;
    EXPECT_EQ(nest.canonical, c.canonical) << c.text;
  }
}

TEST(LoopString, SchedulesAreParsedAndCanonical) {
  expect_schedules({
      {"aBC@schedule(static)", ScheduleKind::static_, 0, "aBC"},
      {"aBC@schedule(static,4)", ScheduleKind::static_, 4, "aBC@schedule(static,4)"},
      {"aBC@schedule(static,1)", ScheduleKind::static_, 1, "aBC@schedule(static,1)"},
      {"aBC@schedule(dynamic,1)", ScheduleKind::dynamic, 0, "aBC@schedule(dynamic)"},
      {"aBC@schedule( dynamic , 1 )", ScheduleKind::dynamic, 0, "aBC@schedule(dynamic)"},
      {"aBC@ ,schedule(guided,3) ", ScheduleKind::guided, 3, "aBC@schedule(guided,3)"},
  });
}

TEST(LoopString, RuntimeAutoAndModifiedSchedules) {
  // The modifiers change nothing in weft (its schedules satisfy both monotonic and nonmonotonic;
  // a nest is no simd loop), so spellings with and without them share one nest.
  expect_schedules({
      {"aBC@schedule(runtime)", ScheduleKind::runtime, 0, "aBC@schedule(runtime)"},
      {"aBC@schedule(auto)", ScheduleKind::auto_, 0, "aBC@schedule(auto)"},
      {"aBC@schedule(nonmonotonic:dynamic,4)", ScheduleKind::dynamic, 4, "aBC@schedule(dynamic,4)"},
      {"aBC@schedule(monotonic:dynamic,1)", ScheduleKind::dynamic, 0, "aBC@schedule(dynamic)"},
      {"aBC@schedule( simd , monotonic : guided , 3 )", ScheduleKind::guided, 3, "aBC@schedule(guided,3)"},
      {"aBC@schedule(monotonic:static)", ScheduleKind::static_, 0, "aBC"},
      {"aBC@schedule(nonmonotonic:runtime)", ScheduleKind::runtime, 0, "aBC@schedule(runtime)"},
      {"aBC@schedule(simd,simd:static,8)", ScheduleKind::static_, 8, "aBC@schedule(static,8)"},
  });
  EXPECT_NE(render(parse_loop_string("aBC@schedule(runtime)", 3)).find("schedule(runtime) nowait"),
            std::string::npos);
  EXPECT_NE(render(parse_loop_string("aBC@schedule(auto)", 3)).find("schedule(auto) nowait"),
            std::string::npos);
}

TEST(LoopString, InlineSpecsAreParsedAndCanonical) {
  const LoopNest nest = parse_loop_string("aa[0,64,2,(16)]B", 2);
  ASSERT_EQ(nest.inline_specs.size(), 1u);
  const InlineSpec& spec = nest.inline_specs[0];
  EXPECT_EQ(spec.loop, 0);
  EXPECT_TRUE(spec.has_start && spec.has_end && spec.has_step);
  EXPECT_EQ(spec.start, 0);
  EXPECT_EQ(spec.end, 64);
  EXPECT_EQ(spec.step, 2);
  EXPECT_EQ(spec.block_size, (std::vector<long>{16}));
  // A spec sits after its loop's first occurrence in the canonical form, wherever it was written.
  EXPECT_EQ(nest.canonical, "a[0,64,2,(16)]aB");

  const LoopNest grid = parse_loop_string("b|cA{R:2}[,10,]", 3);
  ASSERT_EQ(grid.inline_specs.size(), 1u);
  EXPECT_FALSE(grid.inline_specs[0].has_start);
  EXPECT_TRUE(grid.inline_specs[0].has_end);
  EXPECT_FALSE(grid.inline_specs[0].has_step);
  EXPECT_EQ(grid.canonical, "b|cA{R:2}[,10,]");

  const LoopNest signs = parse_loop_string("b[-4,-1,1]a[,,3]", 2);
  ASSERT_EQ(signs.inline_specs.size(), 2u);
  EXPECT_EQ(signs.inline_specs[0].loop, 0);  // sorted by loop
  EXPECT_EQ(signs.inline_specs[1].start, -4);
  EXPECT_EQ(signs.canonical, "b[-4,-1,1]a[,,3]");
}

TEST(LoopString, InlineSpecsKeepNestsApartInTheCache) {
  const auto plain = find_or_build_nest("aB", 2);
  const auto eight = find_or_build_nest("a[0,8,1]B", 2);
  const auto eight_again = find_or_build_nest("a[0,8,1,()]B", 2);
  const auto nine = find_or_build_nest("a[0,9,1]B", 2);
  EXPECT_NE(plain.get(), eight.get());
  EXPECT_EQ(eight.get(), eight_again.get());
  EXPECT_NE(eight.get(), nine.get());
}

TEST(LoopString, InlineSpecsReplaceTheLoopSpecsInTheBounds) {
  const LoopSpecs specs[] = {LoopSpecs{0, 100, 1}, LoopSpecs{0, 4, 1}};
  const LoopNest nest = parse_loop_string("a[2,18,2,(8)]Ba", 2);
  const NestBounds bounds = make_nest_bounds(nest, specs);
  EXPECT_EQ(bounds.loop_start[0], 2);
  EXPECT_EQ(bounds.loop_end[0], 18);
  EXPECT_EQ(bounds.level_step[0], 8);  // the inline block size
  EXPECT_EQ(bounds.level_step[2], 2);  // the inline step
  EXPECT_EQ(bounds.loop_end[1], 4);    // b keeps its LoopSpecs
  // Empty fields keep the LoopSpecs' values, which are then checked against the inline ones.
  const LoopSpecs blocked[] = {LoopSpecs{0, 100, 1, {4}}};
  EXPECT_EQ(make_nest_bounds(parse_loop_string("a[,,2]a", 1), blocked).level_step[0], 4);
  try {
    make_nest_bounds(parse_loop_string("a[,,3]a", 1), blocked);
    FAIL();
  } catch (const LoopStringError& e) {
    EXPECT_NE(e.problem().find("not a multiple of the step 3"), std::string::npos) << e.what();
  }
}

TEST(LoopString, LetterCaseMapsToLoopAndParallelism) {
  const LoopNest nest = parse_loop_string("dCba", 4);
  EXPECT_EQ(nest.levels[0].loop, 3);
  EXPECT_EQ(nest.levels[1].loop, 2);
  EXPECT_EQ(nest.levels[1].par, ParKind::collapse);
  EXPECT_EQ(nest.run_begin, 1);
  EXPECT_EQ(nest.run_length, 1);
}

TEST(LoopString, AllTwentySixLoops) {
  std::string text;
  for (char c = 'a'; c <= 'z'; ++c) text += c;
  text[5] = 'F';
  const LoopNest nest = parse_loop_string(text, 26);
  EXPECT_EQ(nest.levels.size(), 26u);
  EXPECT_EQ(nest.levels[25].loop, 25);
}

TEST(LoopString, FiveHundredTwelveLevelsAreTheLimit) {
  EXPECT_EQ(parse_loop_string(std::string(512, 'a'), 1).levels.size(), 512u);
  try {
    parse_loop_string(std::string(600, 'a'), 1);
    FAIL();
  } catch (const LoopStringError& e) {
    EXPECT_EQ(e.position(), 512u);
    EXPECT_NE(e.problem().find("more than 512"), std::string::npos);
  }
}

TEST(LoopString, LongStringsShowAWindowAroundTheCaret) {
  // 1000 characters: the message stays readable and the caret sits under the culprit.
  const std::string text = "aBc@" + std::string(600, ' ') + "foo" + std::string(393, ' ');
  try {
    parse_loop_string(text, 3);
    FAIL();
  } catch (const LoopStringError& e) {
    EXPECT_EQ(e.position(), 604u);
    const std::string message = e.what();
    const std::size_t line = message.find('\n') + 3;
    const std::size_t caret_line = message.find('\n', line) + 3;
    const std::size_t caret = message.find('^', caret_line) - caret_line;
    EXPECT_EQ(message.substr(line + caret, 3), "foo") << message;
    EXPECT_LT(message.size(), 400u);
  }
}

TEST(LoopString, SpellingsOfOneNestShareACacheEntry) {
  const auto a = find_or_build_nest("aBC@schedule(dynamic,1)", 3);
  const auto b = find_or_build_nest("aBC@schedule(dynamic)", 3);
  const auto c = find_or_build_nest("aBC@schedule(dynamic)", 4 - 1);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(b.get(), c.get());
  EXPECT_EQ(a->nest().canonical, "aBC@schedule(dynamic)");
  // The same letters with another number of loops are another nest: 'c' is not in range of 2.
  EXPECT_THROW(find_or_build_nest("aBC", 2), LoopStringError);
}

}  // namespace
}  // namespace weft::parlooper
