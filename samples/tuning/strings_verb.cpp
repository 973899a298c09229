// weft-tune strings: the loop strings of loop specs, one per line (PARLOOPER's spec_loop_generator
// role), by weft's rules (enumerate_loop_strings) or PARLOOPER's (parlooper_loop_strings), for
// `weft-tune measure` or any script. With the loops' bounds (--loop-ends), every string comes once
// per choice of block sizes for its repeated letters, written as inline specs (`b[,,,(8)]`), which
// every sample's ThreadedLoop reads.
#include <omp.h>

#include <cctype>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <weft/cli/command_line.hpp>
#include <weft/tuner/search_space.hpp>

#include "tune_request.hpp"
#include "tune_verbs.hpp"

namespace weft::samples {
namespace {

// `loop_string` with an inline spec "[,,,(b0,b1)]" after the first letter (and its grid) of
// every loop x with blocks[x] non-empty.
std::string with_inline_blocks(const std::string& loop_string, const std::vector<std::vector<long>>& blocks) {
  std::string out;
  std::vector<bool> done(blocks.size(), false);
  for (std::size_t i = 0; i < loop_string.size();) {
    const char letter = loop_string[i];
    std::size_t end = i + 1;
    if (end < loop_string.size() && loop_string[end] == '{') end = loop_string.find('}', end) + 1;
    out.append(loop_string, i, end - i);
    const auto x = static_cast<std::size_t>(std::tolower(static_cast<unsigned char>(letter)) - 'a');
    if (x < blocks.size() && !blocks[x].empty() && !done[x]) {
      done[x] = true;
      out += "[,,,(";
      for (std::size_t j = 0; j < blocks[x].size(); ++j) out += (j ? "," : "") + std::to_string(blocks[x][j]);
      out += ")]";
    }
    i = end;
  }
  return out;
}

// Every combination of one chain per loop.
void for_each_blocking(const std::vector<std::vector<std::vector<long>>>& chains,
                       const std::function<void(const std::vector<std::vector<long>>&)>& use) {
  std::vector<std::vector<long>> current(chains.size());
  auto next = [&](auto&& self, std::size_t x) -> void {
    if (x == chains.size()) return use(current);
    for (const auto& chain : chains[x]) {
      current[x] = chain;
      self(self, x + 1);
    }
  };
  next(next, 0);
}

}  // namespace

int strings_verb(int argc, char** argv, std::FILE* out, std::FILE* err) {
  CLI::App app;
  std::string spec_text;
  int threads = omp_get_max_threads();
  std::int64_t run_length = 2, block_choices = 6;
  bool parlooper = false, parallel_reductions = false, no_grids = false;
  std::vector<long> ends, steps;
  cli::add_text(app, "--spec", spec_text, "loop specs, ';'-separated");
  cli::add_threads(app, threads, 1);
  cli::add_flag(app, "--parlooper", parlooper, "PARLOOPER's rules");
  cli::add_flag(app, "--parallel-reductions", parallel_reductions, "reductions may be parallel");
  cli::add_integer(app, "--run-length", run_length, 1, 26, "letters of the work-shared run");
  cli::add_flag(app, "--no-grids", no_grids, "no thread grids");
  cli::add_integer_list(app, "--loop-ends", ends, 1, INT32_MAX, "each loop's end (its start is 0)");
  cli::add_integer_list(app, "--loop-steps", steps, 1, INT32_MAX, "each loop's step");
  cli::add_integer(app, "--block-choices", block_choices, 1, 1000, "block sizes per blocking level");
  cli::parse(app, argc, argv, 2);
  if (!cli::given(app, "--spec")) throw CliError("strings needs --spec (e.g. a_0_K,b_1_M,c_1_N)");
  const std::vector<tuner::LoopSpecification> specs = parse_specs(spec_text, "--spec");
  if (parlooper)
    for (const char* mine : {"--threads", "--parallel-reductions", "--run-length", "--no-grids"})
      if (cli::given(app, mine))
        throw CliError(std::string(mine) + " has no effect with --parlooper: PARLOOPER's rules parallelize every "
                       "subset of the M and N loops, whatever the team");
  for (const char* needs_ends : {"--loop-steps", "--block-choices"})
    if (cli::given(app, needs_ends) && ends.empty())
      throw CliError(std::string(needs_ends) + " needs --loop-ends: block sizes come from the loops' bounds");
  if (!steps.empty() && steps.size() != ends.size())
    throw CliError("--loop-steps has " + std::to_string(steps.size()) + " entries, --loop-ends " +
                   std::to_string(ends.size()) + ": one per loop");
  steps.resize(ends.size(), 1);

  tuner::LoopStringOptions options;
  options.threads = threads;
  options.allow_parallel_reduction = parallel_reductions;
  options.max_run_length = static_cast<int>(run_length);
  options.grids = !no_grids;
  const tuner::BlockOptions block_options{.allow_remainder = true, .max_choices = static_cast<std::size_t>(block_choices)};
  std::set<std::string> seen;
  std::size_t printed = 0;
  for (const tuner::LoopSpecification& spec : specs) {
    const std::vector<std::string> strings =
        parlooper ? parlooper_loop_strings(spec) : enumerate_loop_strings(spec, options);
    std::vector<std::vector<std::vector<long>>> chains(static_cast<std::size_t>(spec.num_loops()), {{}});
    if (!ends.empty()) {
      if (ends.size() != static_cast<std::size_t>(spec.num_loops()))
        throw CliError("--loop-ends has " + std::to_string(ends.size()) + " entries; --spec '" + spec.to_string() +
                       "' has " + std::to_string(spec.num_loops()) + " loops");
      for (int x = 0; x < spec.num_loops(); ++x) {
        const auto i = static_cast<std::size_t>(x);
        const tuner::LogicalLoop loop{0, ends[i], steps[i], spec.loop(x).reduction()};
        chains[i] = enumerate_block_chains(loop, spec.loop(x).extra_levels, block_options);
        if (chains[i].empty())
          std::fprintf(err, "weft-tune: --spec '%s': loop '%c' has %ld iterations, too few to block %d more times\n",
                       spec.to_string().c_str(), 'a' + x, loop.trips(), spec.loop(x).extra_levels);
      }
    }
    for (const std::string& s : strings)
      for_each_blocking(chains, [&](const std::vector<std::vector<long>>& blocks) {
        const std::string line = with_inline_blocks(s, blocks);
        if (!seen.insert(line).second) return;
        std::fprintf(out, "%s\n", line.c_str());
        ++printed;
      });
  }
  if (printed == 0) throw CliError("--spec '" + spec_text + "' leaves no loop string for these loops");
  std::fprintf(err, "weft-tune: %zu loop strings\n", printed);
  return 0;
}

}  // namespace weft::samples
