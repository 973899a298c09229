// The validated loop-nest IR that a loop_string compiles to (see docs/loop_string.md), and the
// runtime data an engine needs to run it. The parser produces a LoopNest; engines (the x86-64 JIT
// and the reference interpreter) consume it. Bounds are not part of the IR: one nest serves every
// problem size, and NestBounds carries the sizes of one ThreadedLoop.
//
//   LoopNest nest = parse_loop_string("bcaBCb", 3);   // throws LoopStringError on bad input
//   std::cout << render(nest);                          // C-like pseudo code
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace weft::parlooper {

inline constexpr int kMaxLoops = 26;    // letters a..z
inline constexpr int kMaxLevels = 512;  // occurrences in one string, all letters together

// How one level of the nest is parallelized.
enum class ParKind : std::uint8_t {
  none,      // sequential: every participating thread runs all of it
  collapse,  // member of the work-shared run (mode 1)
  rows,      // split over the rows of the thread grid ({R:n})
  cols,      // split over the columns ({C:n})
  layers,    // split over the layers ({L:n})
};

// runtime and auto_ are resolved by OpenMP at call time (OMP_SCHEDULE / omp_set_schedule, or the
// implementation's choice): engines run them as a work-sharing loop with that schedule.
enum class ScheduleKind : std::uint8_t { static_, dynamic, guided, runtime, auto_ };

struct Schedule {
  ScheduleKind kind = ScheduleKind::static_;
  int chunk = 0;  // 0: the default (static: one balanced contiguous block per thread; else 1)
  bool operator==(const Schedule&) const = default;
};

// One occurrence of a letter in the string, i.e. one blocking level of a logical loop.
struct LoopLevel {
  int loop = 0;             // logical loop, 0 for 'a'
  int occurrence = 0;       // 0 for the outermost occurrence of that loop
  int num_occurrences = 1;  // occurrences of that loop in the whole string
  ParKind par = ParKind::none;
  int ways = 1;             // grid split ways; 1 unless par is rows/cols/layers
  bool barrier_after = false;  // '|' follows: all participating threads meet after this loop
  bool operator==(const LoopLevel&) const = default;
};

// Bounds written in the loop_string after a letter, PARLOOPER's `a[start,end,step,(blocks)]`
// (e.g. "a[0,64,,(16)]bc"): each given field replaces that of LoopSpecs[loop]; an empty field
// keeps it, and an empty block list keeps LoopSpecs' block sizes.
struct InlineSpec {
  int loop = 0;
  bool has_start = false, has_end = false, has_step = false;
  long start = 0, end = 0, step = 0;
  std::vector<long> block_size;
  bool operator==(const InlineSpec&) const = default;
};

struct LoopNest {
  int num_loops = 0;
  std::vector<LoopLevel> levels;  // outermost first
  // The work-shared run (mode 1): levels [run_begin, run_begin + run_length); run_length == 0
  // when there is none. At most one run exists.
  int run_begin = -1;
  int run_length = 0;
  Schedule schedule;
  // Thread grid (mode 2); all 1 when no level has a grid.
  int grid_rows = 1;
  int grid_cols = 1;
  int grid_layers = 1;
  // Canonical text of the nest: equal for strings that mean the same (whitespace and clause
  // spelling normalized). With num_loops it is the cache key.
  std::string canonical;
  // At most one per loop, in loop order; make_nest_bounds applies them over the LoopSpecs.
  std::vector<InlineSpec> inline_specs;

  bool has_run() const { return run_length > 0; }
  int grid_threads() const { return grid_rows * grid_cols * grid_layers; }
  bool has_grid() const {
    for (const auto& l : levels)
      if (l.par == ParKind::rows || l.par == ParKind::cols || l.par == ParKind::layers) return true;
    return false;
  }
  // Some level is split among threads (a work-shared run or a thread grid): the nest opens a
  // parallel region. Without one it runs once, on the calling thread.
  bool is_parallel() const { return has_run() || has_grid(); }
  // One level per loop in loop order ("abc", any letters upper case), without grids, barriers,
  // inline bounds or a schedule other than the default: each thread meets the iterations of
  // the innermost loop one after the other, so the next body call is the next iteration of the
  // innermost loop (except where a thread's share of the run ends).
  bool is_plain_order() const {
    if (levels.size() != static_cast<std::size_t>(num_loops) || !inline_specs.empty() ||
        schedule != Schedule{})
      return false;
    for (std::size_t l = 0; l < levels.size(); ++l) {
      const LoopLevel& level = levels[l];
      if (level.loop != static_cast<int>(l) || level.barrier_after ||
          (level.par != ParKind::none && level.par != ParKind::collapse))
        return false;
    }
    return true;
  }
};

// Sizes of one ThreadedLoop, derived from its LoopSpecs and validated against the nest (all
// values fit in int, steps and blocks positive, blocks multiples of the step).
//
// Level l with loop x and occurrence j iterates with step level_step[l]:
//   j == 0: over [loop_start[x], loop_end[x])
//   j  > 0: over [v, min(v + level_step[p], hi_p)) where p is the level of occurrence j-1 of x,
//           v its current value and hi_p its current upper bound.
// level_step[l] is LoopSpecs::block[j] for j < num_occurrences-1, and LoopSpecs::step for the
// innermost occurrence.
struct NestBounds {
  std::int64_t loop_start[kMaxLoops] = {};
  std::int64_t loop_end[kMaxLoops] = {};
  std::int64_t level_step[kMaxLevels] = {};
};

// Per-thread state of one call. `ind` is at offset 0: the body receives `ind`, and the helpers
// (get_tid(ind), ...) recover the frame from that pointer.
struct ThreadFrame {
  int ind[kMaxLoops] = {};  // innermost value of each logical loop, what the body sees
  int tid = 0;              // id in the team (omp_get_thread_num())
  int team_size = 1;        // threads in the team
  int row = 0, col = 0, layer = 0;  // grid coordinates; 0 without a grid
  const LoopNest* nest = nullptr;
};
static_assert(sizeof(int) == 4);

inline const ThreadFrame* frame_of(const int* ind) {
  // ind is the first member of a standard-layout struct: pointer-interconvertible.
  return reinterpret_cast<const ThreadFrame*>(ind);
}

}  // namespace weft::parlooper
