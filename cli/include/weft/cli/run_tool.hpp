// One exit status policy and one message form for every weft program:
//
//   const weft::cli::Tool kTool{"weft-explain", kUsage};
//   int main(int argc, char** argv) {
//     return weft::cli::run_tool(kTool, [&] { return explain(argc, argv); });
//   }
//
// Exit status: 0 success, also for -h / --help (the usage goes to `out`); 1 a run-time failure:
// memory that could not be allocated (weft::MemoryError, allocation_failed) and every exception
// that is not a weft::Error (a failed write, a failed measurement); 2 bad usage: a UsageError or
// another CLI11 parse error (followed by the usage), or any other weft::Error: a bad loop_string
// (with its caret), an impossible shape, sizes this machine cannot hold. Messages go to `err` as
// "<name>: <message>". A program's own verdicts (a failed check: 1) are the body's return value.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

namespace weft::cli {

struct Tool {
  std::string name;   // "weft-gemm", the prefix of every message
  std::string usage;  // printed for --help and after usage errors
  std::FILE* out = stdout;
  std::FILE* err = stderr;
};

int run_tool(const Tool& tool, const std::function<int()>& body);

}  // namespace weft::cli
