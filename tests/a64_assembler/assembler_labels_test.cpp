// Labels of the A64 assembler: branches at the ends of their ranges, forward (patched at bind)
// and backward (encoded at once), match GNU as; one word further throws naming the form; a label
// that is never bound, bound twice or used by another assembler throws. (The golden cases cover
// each branch kind forward, backward and to itself.)
#include <gtest/gtest.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "gnu_binutils.hpp"
#include "weft/jit/aarch64/assembler.hpp"
#include "weft/jit/error.hpp"

namespace {

using namespace weft::jit::a64;

using Branch = std::function<void(Assembler&, Label&)>;

struct BranchKind {
  std::string text;  // GNU syntax up to the label
  Branch branch;
  int farthest_forward_nops;   // nops between the branch and the label at the largest forward reach
  int farthest_backward_nops;  // nops between the label and the branch at the largest backward reach
  std::string form;
};

// Word offsets: b.cond, cbz, cbnz and adr reach -2^18..2^18-1 words, tbz and tbnz -2^13..2^13-1.
// (b and bl reach +-2^25 words, 128 MiB of code: too large to build here; the same check guards them.)
std::vector<BranchKind> kinds() {
  return {
      {"b.ne ", [](Assembler& a, Label& l) { a.b(Cond::ne, l); }, (1 << 18) - 2, 1 << 18, "b.cond"},
      {"cbz x3, ", [](Assembler& a, Label& l) { a.cbz(x3, l); }, (1 << 18) - 2, 1 << 18, "cbz.x"},
      {"cbnz w30, ", [](Assembler& a, Label& l) { a.cbnz(w30, l); }, (1 << 18) - 2, 1 << 18, "cbnz.w"},
      {"adr x7, ", [](Assembler& a, Label& l) { a.adr(x7, l); }, (1 << 18) - 2, 1 << 18, "adr"},
      {"tbz x0, #63, ", [](Assembler& a, Label& l) { a.tbz(x0, 63, l); }, (1 << 13) - 2, 1 << 13, "tbz.x"},
      {"tbnz w9, #5, ", [](Assembler& a, Label& l) { a.tbnz(w9, 5, l); }, (1 << 13) - 2, 1 << 13, "tbnz.w"},
  };
}

void nops(Assembler& a, int count) {
  for (int i = 0; i < count; ++i) a.nop();
}

std::vector<std::uint32_t> forward(const BranchKind& k, int gap) {
  Assembler a;
  Label l;
  k.branch(a, l);
  nops(a, gap);
  a.bind(l);
  a.nop();
  return a.words();
}

std::vector<std::uint32_t> backward(const BranchKind& k, int gap) {
  Assembler a;
  Label l;
  a.bind(l);
  nops(a, gap);
  k.branch(a, l);
  return a.words();
}

std::string rept_nops(int count) { return ".rept " + std::to_string(count) + "\nnop\n.endr\n"; }

TEST(A64AssemblerLabels, FarthestBranchesMatchGnuAs) {
  std::vector<std::string> texts;
  std::vector<std::vector<std::uint32_t>> ours;
  for (const BranchKind& k : kinds()) {
    texts.push_back(k.text + "1f\n" + rept_nops(k.farthest_forward_nops) + "1: nop");
    ours.push_back(forward(k, k.farthest_forward_nops));
    texts.push_back("1:\n" + rept_nops(k.farthest_backward_nops) + k.text + "1b");
    ours.push_back(backward(k, k.farthest_backward_nops));
  }
  std::vector<std::vector<std::uint32_t>> expected;
  try {
    expected = weft::test::a64::gnu_assemble(texts);
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const std::string first_line = texts[i].substr(0, texts[i].find('\n'));
    const std::string last_line = texts[i].substr(texts[i].rfind('\n') + 1);
    ASSERT_EQ(ours[i].size(), expected[i].size()) << first_line << " ... " << last_line;
    EXPECT_EQ(ours[i], expected[i]) << first_line << " ... " << last_line;
  }
}

void expect_range_error(const std::function<void()>& emit, const std::string& form, const std::string& distance) {
  try {
    emit();
    ADD_FAILURE() << form << ": no weft::Error";
  } catch (const weft::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("a64 " + form + ":"), std::string::npos) << what;
    EXPECT_NE(what.find("label is " + distance + " bytes away"), std::string::npos) << what;
  }
}

TEST(A64AssemblerLabels, OneWordBeyondTheRangeThrowsNamingTheForm) {
  for (const BranchKind& k : kinds()) {
    SCOPED_TRACE(k.form);
    const int forward_gap = k.farthest_forward_nops + 1, backward_gap = k.farthest_backward_nops + 1;
    expect_range_error([&] { forward(k, forward_gap); }, k.form, std::to_string((forward_gap + 1) * 4));
    expect_range_error([&] { backward(k, backward_gap); }, k.form, "-" + std::to_string(backward_gap * 4));
  }
  // The message says the reach, e.g. for tbz.
  Assembler a;
  Label l;
  a.tbz(x1, 2, l);
  nops(a, 8191);
  try {
    a.bind(l);
    FAIL();
  } catch (const weft::Error& e) {
    EXPECT_STREQ(e.what(), "a64 tbz.x: label is 32768 bytes away, beyond -32768..32764");
  }
}

TEST(A64AssemblerLabels, UnboundLabelThrowsWhenTheCodeIsTaken) {
  Assembler a;
  Label never;
  a.nop();
  a.cbnz(x2, never);
  EXPECT_EQ(a.size_bytes(), 8u);
  try {
    (void)a.words();
    FAIL();
  } catch (const weft::Error& e) {
    EXPECT_STREQ(e.what(), "a64 cbnz.x at byte 4: its label is never bound");
  }
  EXPECT_THROW((void)a.bytes(), weft::Error);
  a.bind(never);
  EXPECT_EQ(a.words().size(), 2u);
}

TEST(A64AssemblerLabels, LabelBoundTwiceOrOfAnotherAssemblerThrows) {
  Assembler a, other;
  Label l;
  a.bind(l);
  EXPECT_THROW(a.bind(l), weft::Error);
  EXPECT_THROW(other.b(l), weft::Error);
  Label unused;  // a label never used is no error
  (void)unused;
  EXPECT_NO_THROW((void)a.words());
}

TEST(A64AssemblerLabels, ManyForwardBranchesToOneLabelArePatched) {
  Assembler a;
  Label done;
  for (int i = 0; i < 5; ++i) a.cbz(XReg(static_cast<unsigned>(i)), done);
  a.bind(done);
  a.ret();
  const auto& words = a.words();
  ASSERT_EQ(words.size(), 6u);
  for (unsigned i = 0; i < 5; ++i) EXPECT_EQ(words[i], 0xB4000000u | (5 - i) << 5 | i) << i;
}

TEST(A64AssemblerLabels, AlignPadsWithNops) {
  Assembler a;
  a.ret();
  a.align(16);
  EXPECT_EQ(a.words(), (std::vector<std::uint32_t>{0xD65F03C0, 0xD503201F, 0xD503201F, 0xD503201F}));
  a.align(16);  // already aligned
  EXPECT_EQ(a.size_bytes(), 16u);
  a.align(4);
  EXPECT_EQ(a.size_bytes(), 16u);
  const std::vector<std::uint8_t> bytes = a.bytes();
  ASSERT_EQ(bytes.size(), 16u);
  EXPECT_EQ((std::vector<std::uint8_t>(bytes.begin(), bytes.begin() + 4)),
            (std::vector<std::uint8_t>{0xC0, 0x03, 0x5F, 0xD6}));
  EXPECT_TRUE(a.used(Form::ret));
  EXPECT_TRUE(a.used(Form::nop));
  EXPECT_FALSE(a.used(Form::b));
}

}  // namespace
