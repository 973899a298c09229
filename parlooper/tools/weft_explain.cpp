// weft-explain: shows what a loop_string does.
//
//   weft-explain [--threads T] [--trace] LOOP_STRING SPEC...
//
// One SPEC per logical loop, in order a, b, c, ...: start,end,step[,block0[,block1...]].
// Without --trace it prints the nest as C-like pseudo code. With --trace it runs the nest on T
// threads (default: OpenMP's) and prints one line per body call, "tid i0 i1 ...", grouped by
// ascending tid, each thread's lines in the order it ran them. WEFT_ENGINE picks the engine.
// Exit status (weft/cli/run_tool.hpp): 0 success; 2 invalid input (an unknown, repeated or
// malformed option, a bad SPEC or loop_string, a trace this machine cannot hold), the message on
// stderr; 1 a run-time failure.
#include <cstdio>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include <weft/cli/command_line.hpp>
#include <weft/cli/run_tool.hpp>

#include "weft/jit/error.hpp"
#include "weft/parlooper/nest_trace.hpp"
#include "weft/parlooper/threaded_loop.hpp"

namespace {

using weft::cli::UsageError;
using weft::parlooper::DynamicThreadedLoop;
using weft::parlooper::LoopSpecs;
using weft::parlooper::NestTrace;
using weft::parlooper::trace_nest;

const weft::cli::Tool kTool{
    "weft-explain",
    "usage: weft-explain [--threads T] [--trace] LOOP_STRING SPEC...\n"
    "  SPEC (one per loop, in order a, b, c, ...): start,end,step[,block0[,block1...]]\n"
    "  --trace      run the nest and print 'tid i0 i1 ...' per body call, grouped by thread\n"
    "  --threads T  threads of the traced run (default: OpenMP's)\n"
    "  WEFT_ENGINE=jit|reference picks the engine\n"
    "  exit status: 0 success, 1 run-time failure, 2 bad usage\n"};

LoopSpecs parse_spec(const std::string& text, std::size_t loop) {
  const std::string what = "SPEC of loop '" + std::string(1, static_cast<char>('a' + loop)) + "'";
  const std::vector<long> fields = weft::cli::parse_integer_list(
      text, what, std::numeric_limits<long>::min(), std::numeric_limits<long>::max());
  if (fields.size() < 3) throw UsageError(what + ": '" + text + "' needs start,end,step[,block0[,block1...]]");
  LoopSpecs spec{fields[0], fields[1], fields[2]};
  spec.block_size.assign(fields.begin() + 3, fields.end());
  return spec;
}

// Writes the lines in pieces: a trace can be far larger than one string should be.
void print_trace(const NestTrace& trace) {
  std::string out;
  const auto loops = static_cast<std::size_t>(trace.loops);
  for (std::size_t tid = 0; tid < trace.per_thread.size(); ++tid) {
    const auto& values = trace.per_thread[tid];
    for (std::size_t i = 0; i < values.size(); i += loops) {
      out += std::to_string(tid);
      for (std::size_t x = 0; x < loops; ++x) out += ' ' + std::to_string(values[i + x]);
      out += '\n';
      if (out.size() >= (1u << 20)) {
        std::fwrite(out.data(), 1, out.size(), stdout);
        out.clear();
      }
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
}

int explain(int argc, char** argv) {
  CLI::App app;
  bool trace = false;
  int threads = 0;
  std::vector<std::string> positional;
  weft::cli::add_flag(app, "--trace", trace, "run the nest and print the indices of every body call");
  weft::cli::add_threads(app, threads, 1);
  app.add_option("positional", positional);
  weft::cli::parse(app, argc, argv);
  if (positional.size() < 2) throw UsageError("give a LOOP_STRING and one SPEC per loop");
  const std::size_t loops = positional.size() - 1;
  if (loops > static_cast<std::size_t>(weft::parlooper::kMaxLoops))
    throw UsageError("at most 26 SPECs (loops a..z), got " + std::to_string(loops));
  std::vector<LoopSpecs> specs;
  for (std::size_t i = 0; i < loops; ++i) specs.push_back(parse_spec(positional[i + 1], i));

  const DynamicThreadedLoop loop(specs, positional[0], weft::parlooper::default_engine_kind());
  if (!trace) {
    std::cout << loop.render();
    return 0;
  }
  const NestTrace result = trace_nest(loop, specs, threads);
  print_trace(result);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return weft::cli::run_tool(kTool, [&] { return explain(argc, argv); }); }
