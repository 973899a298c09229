// What both loop-nest emitters (parlooper/src/arch/<arch>/jit_engine.cpp) lay out alike: the
// loop state of a generated nest (8-byte slots on the main function's stack, addressed from one
// base register), the offsets of the structs the generated code reads, and the nest's name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "collapsed_run.hpp"
#include "weft/parlooper/engine.hpp"
#include "weft/parlooper/loop_nest.hpp"

namespace weft::parlooper::detail {

// Offsets (bytes from the state's base) of the loop state.
class NestStateLayout {
 public:
  static constexpr std::size_t kRun = 0;          // const ThreadRun*
  static constexpr std::size_t kBounds = 8;       // const NestBounds*
  static constexpr std::size_t kBody = 16;        // BodyFn, for the chunk function
  static constexpr std::size_t kCtx = 24;         // body_ctx, for the chunk function
  static constexpr std::size_t kFrame = 32;       // ThreadFrame*, for the chunk function
  static constexpr std::size_t kInnerStep = 40;   // step of the innermost level
  static constexpr std::size_t kIterations = 48;  // collapsed iterations of the run at entry
  static constexpr std::size_t kRemaining = 56;   // chunk: collapsed iterations still to run
  static constexpr std::size_t kNextChunk = 64;   // static schedule with chunk: next begin
  static constexpr std::size_t kLevels = 72;

  NestStateLayout(int levels, int run_length)
      : levels_(static_cast<std::size_t>(levels)),
        bytes_(kLevels + 24 * levels_ + sizeof(RunLevelState) * static_cast<std::size_t>(run_length)) {}
  // Per level: current value, upper bound its inner occurrences clamp to, end of its loop (differs
  // from the bound in a grid split or a run's innermost level).
  static std::size_t value(int l) { return kLevels + 24 * static_cast<std::size_t>(l); }
  static std::size_t bound(int l) { return value(l) + 8; }
  static std::size_t end(int l) { return value(l) + 16; }
  // Per level of the run (k = level - run_begin): the RunLevelState CollapsedRun reads and writes.
  std::size_t run_state(int k) const {
    return kLevels + 24 * levels_ + sizeof(RunLevelState) * static_cast<std::size_t>(k);
  }
  // The state's bytes, before the architecture's stack alignment.
  std::size_t bytes() const { return bytes_; }

 private:
  std::size_t levels_;
  std::size_t bytes_;
};

inline constexpr std::size_t kStepOffset = offsetof(NestBounds, level_step);
inline constexpr std::size_t kStartOffset = offsetof(NestBounds, loop_start);
inline constexpr std::size_t kEndOffset = offsetof(NestBounds, loop_end);

inline std::size_t step_offset(int l) { return kStepOffset + 8 * static_cast<std::size_t>(l); }
inline std::size_t start_offset(int loop) { return kStartOffset + 8 * static_cast<std::size_t>(loop); }
inline std::size_t end_offset(int loop) { return kEndOffset + 8 * static_cast<std::size_t>(loop); }
inline std::size_t ind_offset(int loop) { return offsetof(ThreadFrame, ind) + 4 * static_cast<std::size_t>(loop); }

// The nest's loop_string, or its levels as letters ('A' for a parallel level, '|' for a barrier).
inline std::string describe(const LoopNest& nest) {
  if (!nest.canonical.empty()) return nest.canonical;
  std::string text;
  for (const auto& level : nest.levels) {
    text += static_cast<char>((level.par == ParKind::none ? 'a' : 'A') + level.loop);
    if (level.barrier_after) text += '|';
  }
  return text;
}

}  // namespace weft::parlooper::detail
