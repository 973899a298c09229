// The rendering of nests: pseudo code with the parallel annotations.
#include "weft/parlooper/render.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "weft/parlooper/loop_string.hpp"

namespace weft::parlooper {
namespace {

bool contains(const std::string& text, const std::string& piece) { return text.find(piece) != std::string::npos; }

TEST(Render, SymbolicWorkSharedNest) {
  const std::string text = render(parse_loop_string("bcaBCb@schedule(dynamic,2)", 3));
  EXPECT_TRUE(contains(text, "#pragma omp parallel\n")) << text;
  EXPECT_TRUE(contains(text, "for (int b0 = b.start; b0 < b.end; b0 += b.block[0])")) << text;
  EXPECT_TRUE(contains(text, "#pragma omp for collapse(2) schedule(dynamic,2) nowait")) << text;
  EXPECT_TRUE(contains(text, "for (int b1 = b0, b1_end = min(b0 + b.block[0], b.end); b1 < b1_end; b1 += b.block[1])")) << text;
  EXPECT_TRUE(contains(text, "for (int b2 = b1; b2 < min(b1 + b.block[1], b1_end); b2 += b.step)")) << text;
  EXPECT_TRUE(contains(text, "body(a0, b2, c1);")) << text;
  EXPECT_TRUE(contains(text, "no fixed owner")) << text;
}

TEST(Render, NumbersOfOneLoop) {
  const LoopNest nest = parse_loop_string("bc|aBCb", 3);
  const std::vector<LoopSpecs> specs{LoopSpecs{0, 4, 1}, LoopSpecs{0, 10, 1, {4, 2}}, LoopSpecs{0, 6, 2, {4}}};
  const std::string text = render(nest, make_nest_bounds(nest, specs));
  EXPECT_TRUE(contains(text, "for (int c0 = 0; c0 < 6; c0 += 4) {")) << text;
  EXPECT_TRUE(contains(text, "#pragma omp for collapse(2) nowait")) << text;
  EXPECT_TRUE(contains(text, "for (int c1 = c0; c1 < min(c0 + 4, 6); c1 += 2)")) << text;
  // The barrier follows the c0 loop's closing brace.
  EXPECT_TRUE(contains(text, "    }\n    team_barrier();")) << text;
}

TEST(Render, GridAndCollapsedRemainders) {
  const std::string grid = render(parse_loop_string("A{R:2}bC{C:3}", 3));
  EXPECT_TRUE(contains(grid, "thread grid 2 x 3 x 1")) << grid;
  EXPECT_TRUE(contains(grid, "split 2 ways over thread rows")) << grid;
  EXPECT_TRUE(contains(grid, "split 3 ways over thread cols")) << grid;
  const std::string single = render(parse_loop_string("Ba", 2));
  EXPECT_TRUE(contains(single, "#pragma omp for nowait")) << single;
  const std::string collapsed = render(parse_loop_string("BBa", 2));
  EXPECT_TRUE(contains(collapsed, "b1 is clamped to the block of b0 inside the collapsed space")) << collapsed;
}

}  // namespace
}  // namespace weft::parlooper
