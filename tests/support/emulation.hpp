// Whether the tests run under a user-mode emulator (a cross build's ctest runs them under
// qemu-aarch64; tests/CMakeLists.txt sets WEFT_TEST_EMULATED=1 then). Such an emulator without
// binfmt_misc cannot start a program of the target from inside one (a death test re-executing
// itself), and emulates posix_spawn's vfork as a fork, so a child's exec error does not reach the
// parent: the tests that need either skip by name there.
#pragma once

#include <cstdlib>
#include <string_view>

namespace weft::test {

inline bool emulated() {
  const char* v = std::getenv("WEFT_TEST_EMULATED");
  return v != nullptr && std::string_view(v) == "1";
}

}  // namespace weft::test
