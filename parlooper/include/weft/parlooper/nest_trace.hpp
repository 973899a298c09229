// The indices every body call of one run of a nest visits, per thread: what `weft-explain --trace`
// prints and weft.trace (Python) returns.
//
//   const DynamicThreadedLoop loop(specs, "aBb", default_engine_kind());
//   NestTrace trace = trace_nest(loop, specs, /*threads=*/2);
//   // trace.per_thread[t]: thread t's index tuples (trace.loops ints each), in the order it ran them
#pragma once

#include <span>
#include <vector>

#include "weft/parlooper/threaded_loop.hpp"

namespace weft::parlooper {

struct NestTrace {
  int loops = 0;
  std::vector<std::vector<int>> per_thread;  // flattened index tuples, loops ints per body call
};

// Runs `loop` (made from `specs`) once on a team of `threads` threads (0: OpenMP's count for the calling thread; the
// calling thread's setting is restored afterwards), its body recording the indices. Throws
// weft::MemoryError, before running, when the recorded indices (every index tuple of the loops'
// ranges at least once) cannot fit this machine, and when recording runs out of memory.
NestTrace trace_nest(const DynamicThreadedLoop& loop, std::span<const LoopSpecs> specs, int threads);

}  // namespace weft::parlooper
