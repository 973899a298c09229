// The A64 assembler against GNU as: every golden case (golden_cases.cpp) must assemble to the
// same words, and the cases together must use every Form, so that an emitter whose forms_used()
// holds only Forms is made of tested encodings.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gnu_binutils.hpp"
#include "golden_cases.hpp"
#include "weft/jit/aarch64/assembler.hpp"

namespace {

using weft::jit::a64::Assembler;
using weft::jit::a64::Form;
using weft::jit::a64::kFormCount;

std::string hex_words(const std::vector<std::uint32_t>& words) {
  std::string out;
  char word[16];
  for (std::uint32_t w : words) {
    std::snprintf(word, sizeof word, "%s%08x", out.empty() ? "" : " ", w);
    out += word;
  }
  return out.empty() ? "(none)" : out;
}

TEST(A64AssemblerGolden, EveryCaseMatchesGnuAs) {
  const auto cases = weft::test::a64::golden_cases();
  std::vector<std::string> texts;
  for (const auto& c : cases) texts.push_back(c.text);
  std::vector<std::vector<std::uint32_t>> expected;
  try {
    expected = weft::test::a64::gnu_assemble(texts);
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }

  struct Mismatch {
    std::size_t index;
    std::vector<std::uint32_t> ours;
    std::string error;
  };
  std::vector<Mismatch> mismatches;
  std::vector<std::uint32_t> to_disassemble;
  std::size_t words = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    Assembler a;
    std::vector<std::uint32_t> ours;
    std::string error;
    try {
      cases[i].emit(a);
      ours = a.words();
    } catch (const std::exception& e) {
      error = e.what();
    }
    words += ours.size();
    if (ours == expected[i] && error.empty()) continue;
    mismatches.push_back({i, ours, error});
    to_disassemble.insert(to_disassemble.end(), ours.begin(), ours.end());
  }

  std::vector<std::string> disassembled;
  if (!to_disassemble.empty()) disassembled = weft::test::a64::gnu_disassemble(to_disassemble);
  std::size_t next = 0;
  for (const Mismatch& m : mismatches) {
    std::ostringstream ours_text;
    for (std::size_t k = 0; k < m.ours.size(); ++k, ++next) {
      ours_text << (k ? "; " : "") << (next < disassembled.size() ? disassembled[next] : "?");
    }
    ADD_FAILURE() << "golden case " << m.index << ": " << cases[m.index].text
                  << "\n  GNU as:  " << hex_words(expected[m.index]) << "\n  ours:    " << hex_words(m.ours)
                  << (m.error.empty() ? "" : "\n  threw:   " + m.error) << "\n  objdump of ours: " << ours_text.str();
  }
  std::printf("[ golden ] %zu cases, %zu words, %zu mismatches\n", cases.size(), words, mismatches.size());
}

TEST(A64AssemblerGolden, EveryFormHasACase) {
  std::bitset<kFormCount> covered;
  for (const auto& c : weft::test::a64::golden_cases()) {
    Assembler a;
    try {
      c.emit(a);
    } catch (const std::exception&) {
      continue;  // EveryCaseMatchesGnuAs reports it
    }
    covered |= a.forms_used();
  }
  std::string missing;
  for (std::size_t f = 0; f < kFormCount; ++f) {
    if (!covered.test(f)) missing += " " + std::string(weft::jit::a64::form_name(static_cast<Form>(f)));
  }
  EXPECT_TRUE(missing.empty()) << "forms that no golden case emits (add cases to golden_cases.cpp):" << missing;
  std::printf("[ golden ] %zu forms, %zu covered\n", kFormCount, covered.count());
}

// Emitter tests and failure messages name forms: the names must tell them apart.
TEST(A64AssemblerGolden, FormNamesAreDistinct) {
  std::set<std::string_view> names;
  for (std::size_t f = 0; f < kFormCount; ++f) {
    const std::string_view name = weft::jit::a64::form_name(static_cast<Form>(f));
    EXPECT_FALSE(name.empty()) << f;
    EXPECT_TRUE(names.insert(name).second) << "two forms are named " << name;
  }
  EXPECT_EQ(weft::jit::a64::form_name(Form::fmla_4s_elem), "fmla.4s.elem");
  EXPECT_EQ(weft::jit::a64::form_name(Form::ldr_q_post), "ldr.q.post");
}

}  // namespace
