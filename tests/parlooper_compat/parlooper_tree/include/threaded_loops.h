// Stand-in for PARLOOPER's threaded_loops.h: its include guard, its includes, and definitions that
// clash with weft's compatibility header, so that a build where both take effect fails.
#ifndef _THREADED_LOOPS_H_
#define _THREADED_LOOPS_H_
#include <string>
#include "jit_compile.h"
#include "par_loop_generator.h"

class LoopSpecs {
 public:
  explicit LoopSpecs(long end) : end(end) {}
  long end;
};

template <int N>
class ThreadedLoop {
 public:
  int parlooper_runtime_would_run_this = N;
};
#endif
