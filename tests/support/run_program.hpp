// Test helper: runs a shell command line and collects its exit status, standard output and
// standard error, for tests that run weft's tools as programs.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

namespace weft::test {

struct ProgramResult {
  int status = -1;  // the exit status; -1 when the program did not exit normally
  std::string out;
  std::string err;
};

// `command` has no redirections. Standard error goes through a file named after `tag`, the process
// and the call: ctest -j runs the tests of a suite as parallel processes, which overwrote each
// other's stderr through one shared name (a flaky failure under load).
inline ProgramResult run_program(const std::string& command, const std::string& tag) {
  static int calls = 0;
  const std::string err_file = ::testing::TempDir() + tag + "_stderr_" + std::to_string(getpid()) + "_" +
                               std::to_string(calls++) + ".txt";
  ProgramResult result;
  FILE* pipe = popen((command + " 2>'" + err_file + "'").c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer;
  std::size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (FILE* f = fopen(err_file.c_str(), "r")) {
    while ((n = fread(buffer.data(), 1, buffer.size(), f)) > 0) result.err.append(buffer.data(), n);
    fclose(f);
  }
  std::remove(err_file.c_str());
  return result;
}

}  // namespace weft::test
