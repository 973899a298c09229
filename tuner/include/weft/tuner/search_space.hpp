// The search space of one tuning run: loop strings (order, blocking levels, parallelization) from a
// loop specification, block sizes for the repeated letters, and the workload's knobs.
//
//   LoopSpecification spec = parse_loop_spec("a_0_K,b_1_M,c_1_N");
//   auto strings = enumerate_loop_strings(spec, {.threads = 2});   // weft's rules
//   auto theirs = parlooper_loop_strings(parse_loop_spec("a_0_K,b_0_M,c_0_N"));  // 16 strings
//   auto chains = enumerate_block_chains({.begin = 0, .end = 32, .step = 1}, 1, {});  // {{2},{4},...}
//
// weft's rules (docs/tuning.md): every distinct order of the letters in which no letter directly
// follows itself (a letter blocked by itself at once is the same loop); with one thread all lower
// case; with T > 1 threads either one work-shared run of adjacent upper-case letters of distinct,
// non-reduction loops (up to max_run_length letters), or an explicit R x C grid ({R:r} on one
// level, {C:c} on a later one, r * c == T, r, c >= 2) over two non-reduction loops.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "weft/tuner/loop_spec.hpp"

namespace weft::tuner {

struct LoopStringOptions {
  int threads = 1;
  bool allow_parallel_reduction = false;  // only for workloads that support partial results
  int max_run_length = 2;                 // letters in the work-shared run
  bool grids = true;                      // also R x C thread grids (needs T with a factor pair)
  // Letters of loops that run once and are not blocked: where they stand changes nothing, so they
  // are placed outermost, sequential, in this order, and only the other letters are permuted (a
  // convolution's seven loops often have three or four such, which multiply the strings by up to 5040).
  std::string fixed_letters = {};
};

std::vector<std::string> enumerate_loop_strings(const LoopSpecification& spec,
                                                const LoopStringOptions& options);

// PARLOOPER's loop_permute_generator rules, for comparison: every non-empty subset of the M/N
// loops parallel (upper case on one occurrence), all distinct permutations, adjacent repeats
// merged, only the first two upper-case letters kept parallel, duplicates removed (first kept).
std::vector<std::string> parlooper_loop_strings(const LoopSpecification& spec);

// One logical loop of a workload: [begin, end) with step, as in parlooper::LoopSpecs.
struct LogicalLoop {
  long begin = 0;
  long end = 0;
  long step = 1;
  bool reduction = false;
  long trips() const { return end > begin ? (end - begin + step - 1) / step : 0; }
};

struct BlockOptions {
  bool allow_remainder = true;  // also sizes that do not divide the range (remainder blocks)
  std::size_t max_choices = 6;  // per level, spread over the candidates (log scale)
};

// Block-size chains for a loop with `levels` extra blocking levels: vectors of `levels` values,
// outermost first, each a multiple of the step, strictly decreasing, the first smaller than the
// range. Candidates are the divisors of the trip count (times the step) and, with remainders,
// powers of two. Empty result when the loop is too short to be blocked that often.
std::vector<std::vector<long>> enumerate_block_chains(const LogicalLoop& loop, int levels,
                                                      const BlockOptions& options);

}  // namespace weft::tuner
