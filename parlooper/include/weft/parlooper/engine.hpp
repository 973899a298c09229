// Engines run one thread's share of a LoopNest. The runtime opens (or joins) the parallel region,
// fills a ThreadFrame per participating thread and calls Engine::run once per such thread.
//
// Semantics every engine implements identically (docs/loop_string.md):
// - sequential levels: every participating thread runs all iterations in order;
// - the work-shared run (levels run_begin .. run_begin+run_length-1) is collapsed to one linear
//   space of I = prod(trip_l) iterations, decoded innermost-fastest. trip_l = ceil(len_l / step_l)
//   where len_l is the level's range length at entry, except for a level whose previous occurrence
//   of the same loop is also in the run: there len_l = level_step of that previous occurrence (the
//   full block), and decoded values >= the real clamped bound are skipped (no body call);
//   static schedule without chunk: thread t of T takes iterations [t*(I/T) + min(t, I%T), +I/T +
//   (t < I%T)); static with chunk c: chunks of c round robin starting at thread 0; dynamic and
//   guided: through run_chunks_dynamic() (OpenMP's own schedules, nowait);
// - a grid level with n ways splits its trip count I into n contiguous blocks each time it is
//   entered, the first I%n one longer; block j goes to threads whose row/col/layer is j;
// - barrier_after: after the level's loop completes, call team_barrier_wait(barrier).
#pragma once

#include <cstdint>
#include <memory>

#include "weft/parlooper/loop_nest.hpp"

namespace weft::parlooper {

class TeamBarrier;

// Called once per innermost iteration: the body of the nest.
using BodyFn = void (*)(void* ctx, int* ind);

struct ThreadRun {
  ThreadFrame* frame = nullptr;
  const NestBounds* bounds = nullptr;
  BodyFn body = nullptr;
  void* body_ctx = nullptr;
  TeamBarrier* barrier = nullptr;  // shared by the participating threads of this call
};

// A barrier over the threads that take part in one call (in grid mode, threads beyond the grid
// take no part and are not waited for).
void team_barrier_wait(TeamBarrier* barrier);

// Runs a dynamic or guided schedule over [0, iterations) inside the current parallel region,
// calling chunk(state, begin, end) for each chunk this thread gets. Every thread of the team
// calls it the same number of times (it is an OpenMP work-sharing loop with nowait).
using ChunkFn = void (*)(void* state, std::int64_t begin, std::int64_t end);
void run_chunks_dynamic(const Schedule& schedule, std::int64_t iterations, ChunkFn chunk,
                        void* state);

class Engine {
 public:
  virtual ~Engine() = default;
  // Runs the calling thread's share of the nest: sequential levels fully, parallel levels as
  // described above. Thread-safe: many threads call run() on one engine at once.
  virtual void run(const ThreadRun& run) const = 0;
  virtual const char* name() const = 0;
};

enum class EngineKind { jit, reference };

// The portable interpreter: the oracle of the tests.
std::unique_ptr<Engine> make_reference_engine(const LoopNest& nest);
// Machine code of the target architecture (parlooper/src/arch/<arch>/jit_engine.cpp: x86-64 with
// Xbyak, AArch64 with our A64 assembler).
std::unique_ptr<Engine> make_jit_engine(const LoopNest& nest);

// WEFT_ENGINE=jit|reference, else jit. Throws weft::Error for an unknown name.
EngineKind default_engine_kind();

}  // namespace weft::parlooper
