// One exit status policy for every program (cli/run_tool.hpp).
#include "weft/cli/run_tool.hpp"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include "weft/cli/values.hpp"
#include "weft/jit/error.hpp"

namespace {

struct Outcome {
  int status;
  std::string out, err;
};

// A stream into memory, read back as a string once closed.
struct MemoryStream {
  char* data = nullptr;
  std::size_t size = 0;
  std::FILE* file = open_memstream(&data, &size);
  std::string close() {
    std::fclose(file);
    std::string text(data, size);
    std::free(data);
    return text;
  }
};

template <class Body>
Outcome run(Body body) {
  MemoryStream out, err;
  const int status = weft::cli::run_tool({"tool", "usage: tool ARGS\n", out.file, err.file}, body);
  const std::string out_text = out.close();
  return {status, out_text, err.close()};
}

TEST(CliRunTool, MapsOutcomesToExitStatusAndMessages) {
  EXPECT_EQ(run([] { return 0; }).status, 0);
  EXPECT_EQ(run([] { return 1; }).status, 1);  // the program's own verdict, e.g. a failed check

  const Outcome help = run([]() -> int { throw CLI::CallForHelp(); });
  EXPECT_EQ(help.status, 0);
  EXPECT_EQ(help.out, "usage: tool ARGS\n");
  EXPECT_EQ(help.err, "");

  const Outcome usage = run([]() -> int { throw weft::cli::UsageError("--n: 'x' is not an integer"); });
  EXPECT_EQ(usage.status, 2);
  EXPECT_EQ(usage.err, "tool: --n: 'x' is not an integer\nusage: tool ARGS\n");
  EXPECT_EQ(usage.out, "");

  const Outcome bad_input = run([]() -> int { throw weft::Error("loop_string: letter 'D' ..."); });
  EXPECT_EQ(bad_input.status, 2);
  EXPECT_EQ(bad_input.err, "tool: loop_string: letter 'D' ...\n");  // no usage: the arguments parsed

  using Reason = weft::MemoryError::Reason;
  EXPECT_EQ(run([]() -> int { throw weft::MemoryError("A", 1 << 20, Reason::beyond_machine, 1 << 10); }).status, 2);
  EXPECT_EQ(run([]() -> int { throw weft::MemoryError("A", 1 << 20, Reason::overflow); }).status, 2);
  const Outcome allocation = run([]() -> int { throw weft::MemoryError("A", 1 << 20, Reason::allocation_failed); });
  EXPECT_EQ(allocation.status, 1);
  EXPECT_EQ(allocation.err, "tool: A needs 1.0 MiB of memory: allocating it failed\n");

  const Outcome failure = run([]() -> int { throw std::runtime_error("cannot write x.svg"); });
  EXPECT_EQ(failure.status, 1);
  EXPECT_EQ(failure.err, "tool: cannot write x.svg\n");
}

}  // namespace
