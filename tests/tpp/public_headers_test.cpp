// The public TPP headers need no Xbyak: emitters are private (tpp/src), so a user of the TPP API does
// not compile Xbyak or depend on its version, and a kernel's interface is its argument struct alone.
// First, at compile time, for the headers there are today: none of them may define Xbyak's guard.
#include "weft/tpp/binary.hpp"
#include "weft/tpp/brgemm.hpp"
#include "weft/tpp/data_types.hpp"
#include "weft/tpp/mini_jit_brgemm.hpp"
#include "weft/tpp/mini_jit_unary.hpp"
#include "weft/tpp/tpp_kernel.hpp"
#include "weft/tpp/unary.hpp"

#ifdef XBYAK_XBYAK_H_
#error "a public TPP header includes Xbyak (through weft/jit/code_buffer.hpp?): keep emitters in tpp/src"
#endif

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// The source tree, from this file's path (tests/tpp/public_headers_test.cpp).
fs::path source_root() { return fs::path(__FILE__).parent_path().parent_path().parent_path(); }

// Then, for every header under tpp/include (also those added later), following the weft headers
// it includes: no include of Xbyak or of code_buffer.hpp on the way.
TEST(PublicHeaders, NoTppHeaderReachesXbyak) {
  const fs::path root = source_root();
  const fs::path tpp_include = root / "tpp" / "include";
  ASSERT_TRUE(fs::is_directory(tpp_include)) << tpp_include << " (the test finds the sources from __FILE__)";
  const std::regex include_line(R"(^\s*#\s*include\s*[<"]([^>"]+)[>"])");
  const std::regex weft_header(R"(weft/(\w+)/.+)");
  struct Visit {
    fs::path file;
    std::string chain;
  };
  std::vector<Visit> todo;
  for (const auto& entry : fs::recursive_directory_iterator(tpp_include))
    if (entry.path().extension() == ".hpp") todo.push_back({entry.path(), fs::relative(entry.path(), tpp_include).string()});
  ASSERT_FALSE(todo.empty());
  std::set<fs::path> seen;
  while (!todo.empty()) {
    const Visit v = todo.back();
    todo.pop_back();
    if (!seen.insert(v.file).second) continue;
    std::ifstream in(v.file);
    ASSERT_TRUE(in) << v.file;
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, include_line)) continue;
      const std::string header = m[1];
      EXPECT_EQ(header.find("xbyak"), std::string::npos) << v.chain << " includes " << header;
      EXPECT_EQ(header.find("code_buffer.hpp"), std::string::npos) << v.chain << " includes " << header;
      std::smatch layer;
      if (std::regex_match(header, layer, weft_header)) {
        const fs::path next = root / layer[1].str() / "include" / header;
        if (fs::exists(next)) todo.push_back({next, v.chain + " -> " + header});
      }
    }
  }
}

}  // namespace
