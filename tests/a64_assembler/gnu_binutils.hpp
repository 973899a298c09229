// GNU binutils for AArch64 as the reference of the A64 assembler tests: assembles snippets of
// assembly text and disassembles instruction words, on any host.
//
//   const auto words = weft::test::a64::gnu_assemble({"add x0, x1, x2", "b 1f\nnop\n1: nop"});
//   // words[1] == {0x14000002, 0xd503201f, 0xd503201f}
//   weft::test::a64::gnu_disassemble({0x8b020020});  // {"add\tx0, x1, x2"}
//
// The tools' paths come from the build (WEFT_A64_AS, WEFT_A64_OBJDUMP); without them every call
// throws, naming the Debian package, so that a host without the tools fails instead of passing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace weft::test::a64 {

// The words each snippet assembles to (snippets are separated into their own symbol, so a snippet
// with more or fewer words than expected does not shift the others). Throws std::runtime_error
// with the assembler's messages when a snippet does not assemble.
std::vector<std::vector<std::uint32_t>> gnu_assemble(const std::vector<std::string>& snippets);

// objdump's text for each word ("add\tx0, x1, x2"; "<unknown>" or ".inst" for no instruction).
std::vector<std::string> gnu_disassemble(const std::vector<std::uint32_t>& words);

}  // namespace weft::test::a64
