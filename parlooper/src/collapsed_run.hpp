// The iteration space of a work-shared run (docs/loop_string.md, Rule 2, mode 1): the tuples of
// values its levels take, in nest order, each inner range clamped to its parent's block exactly as
// in a sequential nest. Its size is the true count: a remainder block adds only the values it has,
// so the static split is as balanced as OpenMP's. Any position can be reached by seek() in time
// that depends on the number of levels only, never on block sizes or trip counts: a thread starts
// its share where it begins and walks it like a sequential nest.
//
// Both engines use it: the reference engine directly, the JIT engine by calling
// collapsed_run_count() and collapsed_run_seek() from generated code (once per run entry and once
// per chunk).
#pragma once

#include <cstdint>
#include <vector>

#include "weft/parlooper/loop_nest.hpp"

namespace weft::parlooper {

// Per level of the run, in run order; a plain struct because generated code reads and writes it.
struct RunLevelState {
  // Filled by the engine before count(), for head levels only (levels whose loop has no earlier
  // level in the run): the level's range at run entry.
  std::int64_t entry_lo = 0;
  std::int64_t entry_hi = 0;
  // Filled by count(): leaves under one full block of the previous level of the same loop entering
  // this level (saturated at INT64_MAX where such a block cannot occur).
  std::int64_t full = 0;
  // Filled by seek(): the level's value at the position, and the upper end of its range there
  // (what its inner occurrences clamp to).
  std::int64_t value = 0;
  std::int64_t bound = 0;
};

class CollapsedRun {
 public:
  explicit CollapsedRun(const LoopNest& nest);  // nest.has_run()

  int length() const { return static_cast<int>(loop_.size()); }
  // A head level takes its range at run entry; the others clamp to their previous occurrence.
  bool is_head(int k) const { return prev_[static_cast<std::size_t>(k)] < 0; }
  // The run level of the previous occurrence of level k's loop (-1 for a head).
  int previous(int k) const { return prev_[static_cast<std::size_t>(k)]; }

  // The number of tuples, from the entry ranges of the heads; fills `full`. Never overflows for
  // bounds accepted by make_nest_bounds (max_count() fits in 64 bits).
  std::int64_t count(const NestBounds& bounds, RunLevelState* state) const noexcept;
  // Sets value and bound of every level to the tuple at `index` (0 <= index < count()); count()
  // must have filled `full` for the same entry.
  void seek(const NestBounds& bounds, RunLevelState* state, std::int64_t index) const noexcept;

  // The largest count over every possible entry of the run, or -1 if it does not fit in 63 bits.
  std::int64_t max_count(const NestBounds& bounds) const;

 private:
  std::int64_t step(const NestBounds& bounds, int k) const {
    return bounds.level_step[run_begin_ + k];
  }
  void fill_full(const NestBounds& bounds, RunLevelState* state) const noexcept;
  // Tuples of the chain of level k's loop from level k on, for a range of `length` entering k.
  std::int64_t leaves(const NestBounds& bounds, const RunLevelState* state, int k,
                      std::int64_t length) const noexcept;

  int run_begin_;
  std::vector<int> loop_;  // per run level: logical loop
  std::vector<int> prev_;  // per run level: run level of the previous occurrence of its loop, or -1
  std::vector<int> next_;  // per run level: run level of the next occurrence of its loop, or -1
  std::vector<int> outer_parent_;  // per run level: level (in the nest) of the previous occurrence
                                   // of a head's loop outside the run, or -1
  // per run level k: for each other loop with a level after k, the first such level (seek()
  // multiplies their counts without allocating)
  std::vector<std::vector<int>> others_next_;
};

// Entry points for generated code (SysV ABI).
std::int64_t collapsed_run_count(const CollapsedRun* run, const NestBounds* bounds,
                                 RunLevelState* state) noexcept;
void collapsed_run_seek(const CollapsedRun* run, const NestBounds* bounds, RunLevelState* state,
                        std::int64_t index) noexcept;

}  // namespace weft::parlooper
