// The golden cases of the A64 assembler: each is a call of the assembler and the GNU as text that
// must assemble to the same words, e.g.
//
//   {"fmla v0.4s, v1.4s, v2.s[3]", [](Assembler& a) { a.fmla(v0.s4(), v1.s4(), v2.s(3)); }}
//
// Together they use every Form (assembler_golden_test.cpp checks both).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "weft/jit/aarch64/assembler.hpp"

namespace weft::test::a64 {

struct GoldenCase {
  std::string text;  // one or more lines of GNU as syntax; numeric labels (1:, 1f, 1b) are local to a case
  std::function<void(weft::jit::a64::Assembler&)> emit;
};

std::vector<GoldenCase> golden_cases();

}  // namespace weft::test::a64
