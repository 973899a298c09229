// What both loop-nest emitters (parlooper/src/arch/<arch>/jit_engine.cpp) share: the loop state
// of a generated nest (8-byte slots on the main function's stack, addressed from one base
// register), the offsets of the structs the generated code reads, the nest as the emitters walk it
// (NestShape), its name, and the Engine around the generated code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collapsed_run.hpp"
#include "weft/jit/emitting.hpp"
#include "weft/jit/error.hpp"
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

// The nest as an emitter walks it: its levels, its work-shared run, and for each level the previous
// occurrence of the same loop (whose block it clamps to). An emitter derives from it beside its
// code buffer. Throws weft::Error for a nest no emitter can generate.
class NestShape {
 protected:
  explicit NestShape(const LoopNest& nest)
      : nest_(nest),
        schedule_(nest.schedule),
        last_(static_cast<int>(nest.levels.size()) - 1),
        run_begin_(nest.has_run() ? nest.run_begin : -1),
        run_last_(nest.has_run() ? nest.run_begin + nest.run_length - 1 : -1),
        parent_(nest.levels.size(), -1) {
    check(nest);
    if (nest.has_run()) collapsed_.emplace(nest);
    std::vector<int> latest(kMaxLoops, -1);
    for (std::size_t l = 0; l < nest.levels.size(); ++l) {
      const int loop = nest.levels[l].loop;
      parent_[l] = latest[static_cast<std::size_t>(loop)];
      latest[static_cast<std::size_t>(loop)] = static_cast<int>(l);
    }
  }

  int parent(int l) const { return parent_[static_cast<std::size_t>(l)]; }
  const LoopLevel& level(int l) const { return nest_.levels[static_cast<std::size_t>(l)]; }
  int run_k(int l) const { return l - run_begin_; }
  bool is_grid(int l) const {
    const ParKind par = level(l).par;
    return par == ParKind::rows || par == ParKind::cols || par == ParKind::layers;
  }
  // Where the loop of level l ends: its bound, except where the thread runs only part of the range
  // (a grid split, the row of a work-shared run).
  std::size_t loop_end(int l) const {
    return is_grid(l) || l == run_last_ ? NestStateLayout::end(l) : NestStateLayout::bound(l);
  }

  const LoopNest& nest_;
  const Schedule schedule_;  // run_chunks_dynamic() reads it through the address in the code
  const int last_;
  const int run_begin_;
  const int run_last_;
  std::vector<int> parent_;  // level of the previous occurrence of the same loop, or -1
  std::optional<CollapsedRun> collapsed_;  // the generated code calls it with this address

 private:
  static void check(const LoopNest& nest) {
    if (nest.levels.empty()) throw Error("jit engine: the nest has no levels");
    if (nest.levels.size() > static_cast<std::size_t>(kMaxLevels))
      throw Error("jit engine: more than kMaxLevels levels");
    for (const auto& level : nest.levels)
      if (level.loop < 0 || level.loop >= kMaxLoops) throw Error("jit engine: loop index out of range");
    if (nest.has_run() &&
        (nest.run_begin < 0 || nest.run_begin + nest.run_length > static_cast<int>(nest.levels.size())))
      throw Error("jit engine: work-shared run out of range");
  }
};

// The Engine of a generated nest: Code(nest) emits and installs it, entry() is `run`.
template <class Code>
class GeneratedNestEngine final : public Engine {
 public:
  explicit GeneratedNestEngine(const LoopNest& nest) : code_(nest), entry_(code_.entry()) {}
  void run(const ThreadRun& run) const override { entry_(&run); }
  const char* name() const override { return "jit"; }

 private:
  Code code_;
  typename Code::Fn entry_;
};

template <class Code>
std::unique_ptr<Engine> make_generated_nest_engine(const LoopNest& nest) {
  return jit::emitting("weft::parlooper nest " + describe(nest),
                       [&] { return std::make_unique<GeneratedNestEngine<Code>>(nest); });
}

}  // namespace weft::parlooper::detail
