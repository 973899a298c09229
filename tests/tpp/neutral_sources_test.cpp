// The ISA-neutral files of the TPP layer (descriptors, validation, plans, references and the op
// property table they share) include no emitter header and, through nothing they include, Xbyak:
// DESIGN.md's "ISA-neutral code knows no architecture", kept by a test instead of by review. An
// emitter fact a plan needs (activation scratch registers, which ops keep bf16 bits) belongs in
// tpp/src/op_properties.hpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "include_closure.hpp"

namespace {

namespace fs = std::filesystem;

// The source tree, from this file's path (tests/tpp/neutral_sources_test.cpp).
// From the build, not from __FILE__: a compiler launcher (ccache with base_dir) makes __FILE__ relative.
fs::path source_root() { return fs::path(WEFT_SOURCE_DIR); }

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TEST(NeutralSources, NoEmitterHeaderNoXbyak) {
  const fs::path src = source_root() / "tpp" / "src";
  const std::vector<fs::path> neutral = {src / "op_properties.hpp", src / "unary_plan.cpp",   src / "unary_reference.cpp",
                                         src / "brgemm_desc.cpp",   src / "brgemm_plan.cpp",  src / "brgemm_reference.cpp",
                                         src / "data_types.cpp"};
  const auto reached = weft::test::include_closure(source_root(), neutral);
  ASSERT_FALSE(reached.empty()) << "no include found: is " << src << " the source folder?";
  for (const auto& r : reached) {
    ASSERT_TRUE(r.readable) << "cannot read " << r.header << " (the test finds the sources at WEFT_SOURCE_DIR)";
    EXPECT_EQ(r.header.find("xbyak"), std::string::npos) << r.chain << " includes " << r.header;
    EXPECT_FALSE(ends_with(r.header, "_emit.hpp")) << r.chain << " includes the emitter header " << r.header;
    EXPECT_FALSE(ends_with(r.header, "code_buffer.hpp")) << r.chain << " includes " << r.header;
  }
}

}  // namespace
