// The runtime of ThreadedLoop: opens (or joins) the parallel region, fills one ThreadFrame per
// participating thread, runs the engine on each, and brings exceptions back to the caller.
#include "weft/parlooper/threaded_loop.hpp"

#include <omp.h>

#include <algorithm>
#include <exception>
#include <mutex>
#include <optional>
#include <string>

#include "weft/parlooper/render.hpp"
#include "weft/parlooper/team_barrier.hpp"

namespace weft::parlooper {
namespace {

// What the threads of one call share.
struct SharedCall {
  std::optional<TeamBarrier> barrier;
  std::mutex error_mutex;
  std::exception_ptr error;

  void capture(std::exception_ptr e) noexcept {
    std::lock_guard lock(error_mutex);
    if (!error) error = std::move(e);
  }
};

struct ThreadCall {
  const LoopNest* nest;
  const Engine* engine;
  const NestBounds* bounds;
  BodyFn body;
  void* body_ctx;
  ThreadHook init;
  ThreadHook term;
};

// The call the current thread is running, for exceptions caught in trampolines.
thread_local SharedCall* t_running = nullptr;

int participants(const LoopNest& nest, int team_size) {
  return nest.has_grid() ? nest.grid_threads() : team_size;
}

void call_hook(const ThreadHook& hook, SharedCall& shared) {
  if (hook.fn == nullptr) return;
  try {
    hook.fn(hook.ctx);
  } catch (...) {
    shared.capture(std::current_exception());
  }
}

// Runs init, the engine with `frame`, and term on the calling thread.
void run_thread(const ThreadCall& call, ThreadFrame& frame, SharedCall& shared) {
  frame.nest = call.nest;
  SharedCall* const outer = std::exchange(t_running, &shared);
  call_hook(call.init, shared);
  try {
    call.engine->run(ThreadRun{&frame, call.bounds, call.body, call.body_ctx,
                               shared.barrier ? &*shared.barrier : nullptr});
  } catch (...) {
    shared.capture(std::current_exception());
  }
  call_hook(call.term, shared);
  t_running = outer;
}

std::string grid_too_large(const LoopNest& nest, int team) {
  std::string message = "loop_string \"" + nest.canonical + "\" needs a thread grid of " +
                        std::to_string(nest.grid_rows) + " x " + std::to_string(nest.grid_cols) + " x " +
                        std::to_string(nest.grid_layers) + " = " + std::to_string(nest.grid_threads()) +
                        " threads, but the team has " + std::to_string(team) + "; ";
  if (omp_get_level() > 1)
    message += "the call comes from inside a parallel region, where the nest runs on a nested team, "
               "which OpenMP limits to " + std::to_string(team) +
               " thread(s) (raise OMP_MAX_ACTIVE_LEVELS and the inner OMP_NUM_THREADS), or call it "
               "outside the region";
  else
    message += "raise OMP_NUM_THREADS (or omp_set_num_threads) or shrink the grid";
  return message;
}

// One thread's part of a call inside the region the call opened.
void run_share(const ThreadCall& call, SharedCall& shared) {
  const LoopNest& nest = *call.nest;
  const int tid = omp_get_thread_num();
  const int team = omp_get_num_threads();
  if (nest.has_grid()) {
    if (team < nest.grid_threads()) {
      if (tid == 0) shared.capture(std::make_exception_ptr(weft::Error(grid_too_large(nest, team))));
      return;
    }
    if (tid >= nest.grid_threads()) return;  // beyond the grid: no part, no init/term
  }
  ThreadFrame frame;
  frame.tid = tid;
  frame.team_size = team;
  if (nest.has_grid()) {
    const int rc = nest.grid_rows * nest.grid_cols;
    frame.row = (tid % rc) / nest.grid_cols;
    frame.col = tid % nest.grid_cols;
    frame.layer = tid / rc;
  }
  run_thread(call, frame, shared);
}

// A nest with a parallel level: a new region, nested when the caller is inside one (each calling
// thread then runs the whole nest on a team of its own, as in PARLOOPER). Every thread of the
// region makes the same calls, so no misuse of a team can hang it or lose work.
void run_in_new_region(const ThreadCall& call, bool needs_barrier) {
  SharedCall shared;
#pragma omp parallel
  {
    if (needs_barrier) {
#pragma omp single
      shared.barrier.emplace(participants(*call.nest, omp_get_num_threads()));
    }
    run_share(call, shared);
  }
  if (shared.error) std::rethrow_exception(shared.error);
}

// A nest without a parallel level opens no region: it runs once, on the calling thread, like a
// plain function call (PARLOOPER's behaviour, which code that accumulates relies on). get_tid()
// is the caller's thread number, so per-thread scratch stays private when each thread of a team
// calls the nest.
void run_on_calling_thread(const ThreadCall& call, bool needs_barrier) {
  SharedCall shared;
  if (needs_barrier) shared.barrier.emplace(1);
  ThreadFrame frame;
  frame.tid = omp_get_thread_num();
  frame.team_size = 1;
  run_thread(call, frame, shared);
  if (shared.error) std::rethrow_exception(shared.error);
}

}  // namespace

void detail::capture_body_exception() noexcept {
  if (t_running == nullptr) std::terminate();  // a trampoline called outside any run
  t_running->capture(std::current_exception());
}

DynamicThreadedLoop::DynamicThreadedLoop(std::span<const LoopSpecs> specs,
                                         std::string_view loop_string, EngineKind engine)
    : cached_(find_or_build_nest(loop_string, static_cast<int>(specs.size()))),
      engine_(&cached_->engine(engine)),
      bounds_(make_nest_bounds(cached_->nest(), specs)) {}

void DynamicThreadedLoop::run(BodyFn body, void* body_ctx, ThreadHook init, ThreadHook term) const {
  const ThreadCall call{&cached_->nest(), engine_, &bounds_, body, body_ctx, init, term};
  if (call.nest->is_parallel())
    run_in_new_region(call, cached_->has_barrier());
  else
    run_on_calling_thread(call, cached_->has_barrier());
}

int DynamicThreadedLoop::loop_index(char loop) const {
  const int index = loop >= 'A' && loop <= 'Z' ? loop - 'A' : loop - 'a';
  if (index < 0 || index >= num_loops())
    throw weft::Error(std::string("ThreadedLoop helper: '") + loop + "' is not one of the " +
                      std::to_string(num_loops()) + " loops of this nest");
  return index;
}

threaded_loop_par_type DynamicThreadedLoop::get_loop_par_type(char loop, const int*) const {
  switch (cached_->parallelism(loop_index(loop)).par) {
    case ParKind::collapse: return THREADED_LOOP_PARALLEL_COLLAPSE;
    case ParKind::rows: return THREADED_LOOP_PARALLEL_THREAD_ROWS;
    case ParKind::cols: return THREADED_LOOP_PARALLEL_THREAD_COLS;
    case ParKind::layers: return THREADED_LOOP_PARALLEL_THREAD_LAYERS;
    case ParKind::none: break;
  }
  return THREADED_LOOP_NO_PARALLEL;
}

int DynamicThreadedLoop::get_loop_parallel_degree(char loop, const int* ind) const {
  const LoopParallelism& p = cached_->parallelism(loop_index(loop));
  if (p.par == ParKind::collapse) return frame_of(ind)->team_size;
  return p.ways;
}

int DynamicThreadedLoop::get_tid_in_parallel_dim(char loop, const int* ind) const {
  const ThreadFrame& frame = *frame_of(ind);
  switch (cached_->parallelism(loop_index(loop)).par) {
    case ParKind::collapse: return frame.tid;
    case ParKind::rows: return frame.row;
    case ParKind::cols: return frame.col;
    case ParKind::layers: return frame.layer;
    case ParKind::none: break;
  }
  return -1;
}

LoopBlock DynamicThreadedLoop::get_loop_block(char loop, const int* ind) const {
  // The blocks of each level partition their parent's range, so the chain of enclosing block
  // starts follows from the innermost value alone.
  const int x = loop_index(loop);
  const std::int64_t value = ind[x];
  std::int64_t lo = bounds_.loop_start[x];
  std::int64_t hi = bounds_.loop_end[x];
  for (std::size_t l = 0; l < nest().levels.size(); ++l) {
    const LoopLevel& level = nest().levels[l];
    if (level.loop != x) continue;
    const std::int64_t step = bounds_.level_step[l];
    if (level.occurrence + 1 == level.num_occurrences) return LoopBlock{lo, hi, step};
    const std::int64_t block_start = lo + (value - lo) / step * step;
    hi = std::min(block_start + step, hi);
    lo = block_start;
  }
  return LoopBlock{lo, hi, 1};  // unreachable for a valid nest: every loop appears
}

int DynamicThreadedLoop::get_loop_extent(char loop, const int* ind) const {
  const LoopBlock block = get_loop_block(loop, ind);
  const long value = ind[loop_index(loop)];
  return static_cast<int>(std::min(block.step, block.end - value));
}

std::string DynamicThreadedLoop::render() const { return parlooper::render(nest(), bounds_); }

}  // namespace weft::parlooper
