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
#error "a public TPP header includes Xbyak (through weft/jit/x64/code_buffer.hpp?): keep emitters in tpp/src"
#endif

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "include_closure.hpp"

namespace {

namespace fs = std::filesystem;

// The source tree, from this file's path (tests/tpp/public_headers_test.cpp).
// From the build, not from __FILE__: a compiler launcher (ccache with base_dir) makes __FILE__ relative.
fs::path source_root() { return fs::path(WEFT_SOURCE_DIR); }

// Then, for every header under tpp/include (also those added later), following the weft headers
// it includes: no include of Xbyak or of code_buffer.hpp on the way.
TEST(PublicHeaders, NoTppHeaderReachesXbyak) {
  const fs::path root = source_root();
  const fs::path tpp_include = root / "tpp" / "include";
  ASSERT_TRUE(fs::is_directory(tpp_include)) << tpp_include << " (the test finds the sources at WEFT_SOURCE_DIR)";
  std::vector<fs::path> headers;
  for (const auto& entry : fs::recursive_directory_iterator(tpp_include))
    if (entry.path().extension() == ".hpp") headers.push_back(entry.path());
  ASSERT_FALSE(headers.empty());
  for (const auto& r : weft::test::include_closure(root, headers)) {
    ASSERT_TRUE(r.readable) << r.header;
    EXPECT_EQ(r.header.find("xbyak"), std::string::npos) << r.chain << " includes " << r.header;
    EXPECT_EQ(r.header.find("code_buffer.hpp"), std::string::npos) << r.chain << " includes " << r.header;
  }
}

}  // namespace
