// Assembler::data: raw words among the code (the constant pools of the TPP emitters). The words are
// appended verbatim, labels bound after them count them (an adr to data after the code matches GNU
// as with .word), and no form is recorded for them.
#include <gtest/gtest.h>

#include <cstdint>
#include <exception>
#include <vector>

#include "gnu_binutils.hpp"
#include "weft/jit/aarch64/assembler.hpp"

namespace {

using namespace weft::jit::a64;

TEST(A64AssemblerData, WordsAppendedVerbatimLikeGnuWordWithNoForm) {
  Assembler a;
  Label pool;
  a.adr(x1, pool);
  a.ret();
  a.align(16);
  a.bind(pool);
  a.data(0x3f800000u);
  a.data(0xdeadbeefu);
  a.data(0u);
  a.data(0xffffffffu);
  std::vector<std::vector<std::uint32_t>> expected;
  try {
    expected = weft::test::a64::gnu_assemble({"adr x1, 1f\nret\nnop\nnop\n1:\n"
                                              ".word 0x3f800000\n.word 0xdeadbeef\n.word 0\n.word 0xffffffff\n"});
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
  ASSERT_EQ(expected.size(), 1u);
  EXPECT_EQ(a.words(), expected[0]);
  ASSERT_EQ(a.words().size(), 8u);
  EXPECT_EQ(a.words()[4], 0x3f800000u);
  EXPECT_EQ(a.words()[7], 0xffffffffu);
  // Only the instructions' forms: adr, ret and align's nop.
  EXPECT_EQ(a.forms_used().count(), 3u);
  EXPECT_TRUE(a.used(Form::adr));
  EXPECT_TRUE(a.used(Form::ret));
  EXPECT_TRUE(a.used(Form::nop));
}

}  // namespace
