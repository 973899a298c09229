// The ISA-neutral files of the layers below tensor/ (everything in jit/, tpp/ and parlooper/ outside
// their arch/ folders: descriptors, validation, plans, references, caches, the loop IR and the
// family code) include no architecture's header and, through nothing they include, Xbyak or an
// emitter: DESIGN.md's "ISA-neutral code knows no architecture", kept by a test instead of by
// review. An emitter fact a plan needs (activation scratch registers, which ops keep bf16 bits)
// belongs in tpp/src/op_properties.hpp; what an architecture brings is reached through the neutral
// declarations it defines (weft/jit/architecture.hpp, tpp/src/emitters.hpp, ...).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "include_closure.hpp"

namespace {

namespace fs = std::filesystem;

// From the build, not from __FILE__: a compiler launcher (ccache with base_dir) makes __FILE__ relative.
fs::path source_root() { return fs::path(WEFT_SOURCE_DIR); }

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Every .cpp and .hpp below `folder`, except under an arch/ folder.
void collect_neutral(const fs::path& folder, std::vector<fs::path>& out) {
  for (auto it = fs::recursive_directory_iterator(folder); it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_directory() && it->path().filename() == "arch") {
      it.disable_recursion_pending();
      continue;
    }
    const auto ext = it->path().extension();
    if (it->is_regular_file() && (ext == ".cpp" || ext == ".hpp" || ext == ".h")) out.push_back(it->path());
  }
}

TEST(NeutralSources, NoArchitectureHeaderNoXbyakNoEmitter) {
  std::vector<fs::path> neutral;
  for (const char* layer : {"jit", "tpp", "parlooper"}) {
    for (const char* part : {"include", "src"}) collect_neutral(source_root() / layer / part, neutral);
  }
  ASSERT_GT(neutral.size(), 40u) << "too few neutral files found: is " << source_root() << " the source tree?";
  const auto reached = weft::test::include_closure(source_root(), neutral);
  for (const auto& r : reached) {
    ASSERT_TRUE(r.readable) << "cannot read " << r.header << " (the test finds the sources at WEFT_SOURCE_DIR)";
    EXPECT_EQ(r.header.find("xbyak"), std::string::npos) << r.chain << " includes " << r.header;
    EXPECT_EQ(r.header.find("/x64/"), std::string::npos) << r.chain << " includes " << r.header;
    EXPECT_EQ(r.header.find("/aarch64/"), std::string::npos) << r.chain << " includes " << r.header;
    EXPECT_FALSE(ends_with(r.header, "_emit.hpp")) << r.chain << " includes the emitter header " << r.header;
    EXPECT_FALSE(ends_with(r.header, "code_buffer.hpp")) << r.chain << " includes " << r.header;
  }
}

}  // namespace
