// ThreadedLoop<N>: N logical loops declared once, a loop_string picking order, blocking and
// parallelization at run time (docs/loop_string.md), a body called once per innermost iteration.
//
//   using namespace weft::parlooper;
//   auto gemm_loop = ThreadedLoop<3>({LoopSpecs{0, Kb, 1},          // a
//                                     LoopSpecs{0, Mb, 1, {4}},     // b
//                                     LoopSpecs{0, Nb, 1, {2}}},    // c
//                                    "bcaBCb");
//   gemm_loop([&](int* ind) {
//     int ik = ind[0], im = ind[1], in = ind[2];
//     int rows = gemm_loop.get_loop_extent('b', ind);   // < step in a remainder block
//     ...
//   });
//   gemm_loop(body, [&] { /* per-thread init */ }, [&] { /* per-thread term */ });
//
// Threads: called outside any OpenMP parallel region, a call opens one with the default team
// size. Called from inside a parallel region, it runs as a work-sharing construct of that team:
// every thread of the team must make the call (with the same nest and bounds), like an
// `omp for`; the call ends with a barrier of the team. Called from inside the body of another
// ThreadedLoop, it runs on the calling thread alone (a team of one).
//
// Exceptions thrown by the body, init or term are caught on the thread that threw them; the
// remaining body calls still run (so barriers are met), and the first exception is rethrown by
// operator() once every thread has finished (in a work-sharing call, on every calling thread).
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "weft/parlooper/engine.hpp"
#include "weft/parlooper/loop_nest.hpp"
#include "weft/parlooper/loop_specs.hpp"
#include "weft/parlooper/loop_string.hpp"
#include "weft/parlooper/nest_cache.hpp"

namespace weft::parlooper {

// PARLOOPER's names and values.
enum threaded_loop_par_type {
  THREADED_LOOP_NO_PARALLEL = 0,
  THREADED_LOOP_PARALLEL_COLLAPSE = 1,
  THREADED_LOOP_PARALLEL_THREAD_ROWS = 2,
  THREADED_LOOP_PARALLEL_THREAD_COLS = 3,
  THREADED_LOOP_PARALLEL_THREAD_LAYERS = 4
};

// The range of a loop's innermost occurrence in the current body call: [begin, end) with `step`,
// already clamped to its enclosing block (so shorter in a remainder block).
struct LoopBlock {
  long begin = 0;
  long end = 0;
  long step = 1;
  long iterations() const { return end > begin ? (end - begin + step - 1) / step : 0; }
};

// A callback run once per participating thread, before (init) or after (term) its share.
struct ThreadHook {
  void (*fn)(void* ctx) = nullptr;
  void* ctx = nullptr;
};

namespace detail {
// Stores the exception being handled as the first error of the running call; for trampolines.
void capture_body_exception() noexcept;
}  // namespace detail

// The engine room of ThreadedLoop<N>, with the number of loops known at run time (tools, tuners).
class DynamicThreadedLoop {
 public:
  // Throws LoopStringError for an invalid string or LoopSpecs.
  DynamicThreadedLoop(std::span<const LoopSpecs> specs, std::string_view loop_string,
                      EngineKind engine);

  // Runs the nest: body(body_ctx, ind) once per innermost iteration.
  void run(BodyFn body, void* body_ctx, ThreadHook init = {}, ThreadHook term = {}) const;

  // Helpers for the body; `ind` is the pointer the body received. `loop` is 'a'.. or 'A'..
  static int get_tid(const int* ind) { return frame_of(ind)->tid; }
  threaded_loop_par_type get_loop_par_type(char loop, const int* ind) const;
  int get_loop_parallel_degree(char loop, const int* ind) const;
  int get_tid_in_parallel_dim(char loop, const int* ind) const;
  LoopBlock get_loop_block(char loop, const int* ind) const;
  // Index values the current body call spans along `loop`: min(step, end of the block - ind).
  int get_loop_extent(char loop, const int* ind) const;

  std::string render() const;
  int num_loops() const { return cached_->nest().num_loops; }
  const LoopNest& nest() const { return cached_->nest(); }
  const NestBounds& bounds() const { return bounds_; }
  const Engine& engine() const { return *engine_; }

 private:
  int loop_index(char loop) const;

  std::shared_ptr<const CachedNest> cached_;  // keeps the nest and its code alive while this loop lives
  const Engine* engine_;
  NestBounds bounds_;
};

template <int N>
class ThreadedLoop {
  static_assert(N >= 1 && N <= kMaxLoops, "ThreadedLoop<N>: N must be 1..26 (letters a..z)");

 public:
  ThreadedLoop(std::array<LoopSpecs, N> specs, std::string loop_string)
      : ThreadedLoop(std::move(specs), std::move(loop_string), default_engine_kind()) {}
  ThreadedLoop(std::array<LoopSpecs, N> specs, std::string loop_string, EngineKind engine)
      : loop_(std::span<const LoopSpecs>(specs), loop_string, engine) {}

  template <class Body>
  void operator()(Body&& body) const {
    run(body, ThreadHook{}, ThreadHook{});
  }
  // init and term run once per participating thread; either may be nullptr.
  template <class Body, class Init, class Term>
  void operator()(Body&& body, Init init, Term term) const {
    run(body, hook(init), hook(term));
  }

  // Called by the engine once per innermost iteration, with the body inlined into it.
  template <class F>
  static void trampoline(void* ctx, int* ind) {
    if constexpr (std::is_nothrow_invocable_v<F&, int*>) {
      (*static_cast<F*>(ctx))(ind);
    } else {
      try {
        (*static_cast<F*>(ctx))(ind);
      } catch (...) {
        detail::capture_body_exception();
      }
    }
  }

  static int get_tid(const int* ind) { return DynamicThreadedLoop::get_tid(ind); }
  threaded_loop_par_type get_loop_par_type(char loop, const int* ind) const {
    return loop_.get_loop_par_type(loop, ind);
  }
  int get_loop_parallel_degree(char loop, const int* ind) const {
    return loop_.get_loop_parallel_degree(loop, ind);
  }
  int get_tid_in_parallel_dim(char loop, const int* ind) const {
    return loop_.get_tid_in_parallel_dim(loop, ind);
  }
  LoopBlock get_loop_block(char loop, const int* ind) const { return loop_.get_loop_block(loop, ind); }
  int get_loop_extent(char loop, const int* ind) const { return loop_.get_loop_extent(loop, ind); }

  std::string render() const { return loop_.render(); }
  const DynamicThreadedLoop& dynamic() const { return loop_; }

 private:
  template <class F>
  static void* erase(F& f) {
    return const_cast<void*>(static_cast<const void*>(std::addressof(f)));
  }

  template <class Body>
  void run(Body& body, ThreadHook init, ThreadHook term) const {
    using F = std::remove_reference_t<Body>;
    if constexpr (std::is_function_v<F>) {
      F* fn = &body;
      loop_.run(&trampoline<F*>, &fn, init, term);
    } else {
      loop_.run(&trampoline<F>, erase(body), init, term);
    }
  }

  template <class H>
  static void call_hook(void* ctx) {
    (*static_cast<H*>(ctx))();
  }

  template <class H>
  static ThreadHook hook(H& h) {
    if constexpr (std::is_null_pointer_v<H> || std::is_integral_v<H>) {
      return {};  // nullptr, or PARLOOPER-style NULL
    } else {
      static_assert(std::is_invocable_v<H&>, "init and term take no arguments");
      if constexpr (std::is_constructible_v<bool, H&>) {
        if (!static_cast<bool>(h)) return {};  // a null function pointer, an empty std::function
      }
      return {&call_hook<H>, erase(h)};
    }
  }

  DynamicThreadedLoop loop_;
};

}  // namespace weft::parlooper
