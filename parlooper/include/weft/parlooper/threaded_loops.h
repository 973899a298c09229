// PARLOOPER compatibility. PARLOOPER user code compiles and runs on weft with only its include
// line changed, from `#include "threaded_loops.h"` to:
//
//   #include <weft/parlooper/threaded_loops.h>
//
// (PARLOOPER's samples, whose common_utils.h includes PARLOOPER's header itself, need no change to
// their sources: compile them with `-include weft/parlooper/threaded_loops.h`.)
//
//   auto loop = ThreadedLoop<2>({LoopSpecs{0, Mb, 1, {4}}, LoopSpecs{0, Nb, 1}}, "bA{R:2}b");
//   loop([&](int* ind) {
//     if (loop.get_loop_par_type('a', ind) == THREADED_LOOP_PARALLEL_THREAD_ROWS) { ... }
//   });
//
// This header is C++14 (PARLOOPER's Makefiles build with -std=c++14) and declares what PARLOOPER's
// threaded_loops.h declares, in the global namespace: LoopSpecs (also as loop_rt_spec_t) with its
// public fields and constructors, MAX_BLOCKING_LEVELS, MAX_LOGICAL_LOOPS, MAX_LOOPS,
// threaded_loop_par_type and its values, the init_func / fini_func / loop_func typedefs,
// ThreadedLoop<N> and loop_generator(), plus the standard headers PARLOOPER's header included,
// which user code may rely on. Everything runs on weft's native runtime through a compiled bridge
// (compat_bridge.h); do not mix this header with weft's native ones in one file.
//
// What differs from PARLOOPER (docs/parlooper_compat.md): the string and the LoopSpecs are
// checked when the loop first runs, and errors are exceptions that reach the caller (weft::Error,
// a std::runtime_error: C++14 code catches the latter, weft's error header being C++17); a ThreadedLoop without a string uses the scheme PARLOOPER intended
// (upper case for the loops whose isParallel is true); exceptions thrown by the body, init or term
// reach the caller too.
#ifndef WEFT_PARLOOPER_THREADED_LOOPS_H
#define WEFT_PARLOOPER_THREADED_LOOPS_H

// PARLOOPER's own threaded_loops.h guards itself with _THREADED_LOOPS_H_. Its include/common_utils.h
// includes it by a quoted name, which finds PARLOOPER's copy next to common_utils.h whatever the
// include path says. Taking the guard here turns every later inclusion of PARLOOPER's copy into
// nothing, so PARLOOPER's samples build unchanged once this header comes first (the compiler's
// `-include weft/parlooper/threaded_loops.h`). Coming second, both would define LoopSpecs and
// ThreadedLoop: stop with what to change instead of a page of redefinition errors.
#ifdef _THREADED_LOOPS_H_
#error "weft: PARLOOPER's threaded_loops.h was included before <weft/parlooper/threaded_loops.h> (PARLOOPER's common_utils.h includes it). Include weft's header first: compile with -include weft/parlooper/threaded_loops.h, or put #include <weft/parlooper/threaded_loops.h> above #include \"common_utils.h\" (docs/parlooper_compat.md)"
#else  // the rest of the header is skipped after the error: no redefinition errors bury it
#define _THREADED_LOOPS_H_

#include <stdio.h>
#include <string.h>

#include <cstdlib>
#include <array>
#include <cassert>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "weft/parlooper/compat_bridge.h"

typedef std::function<void()> init_func;
typedef std::function<void()> fini_func;
typedef std::function<void(int*)> loop_func;

constexpr int MAX_BLOCKING_LEVELS = 5;
constexpr int MAX_LOGICAL_LOOPS = 10;
constexpr int MAX_LOOPS = MAX_LOGICAL_LOOPS * MAX_BLOCKING_LEVELS;
static_assert(MAX_BLOCKING_LEVELS == weft::parlooper::compat::kMaxBlockingLevels,
              "LoopSpecs::block_size and the bridge's copy of it have one size");

typedef enum threaded_loop_par_type {
  THREADED_LOOP_NO_PARALLEL = 0,
  THREADED_LOOP_PARALLEL_COLLAPSE = 1,
  THREADED_LOOP_PARALLEL_THREAD_ROWS = 2,
  THREADED_LOOP_PARALLEL_THREAD_COLS = 3,
  THREADED_LOOP_PARALLEL_THREAD_LAYERS = 4
} threaded_loop_par_type;

// One logical loop, PARLOOPER's class: [start, end) with step, and the block sizes of its outer
// occurrences in the loop_string, outermost first. More than MAX_BLOCKING_LEVELS block sizes are
// an error when the loop runs (PARLOOPER asserted, or overflowed without assertions).
class LoopSpecs {
  // The isParallel forms take exactly a bool, so that an int step never picks them (PARLOOPER's
  // plain overloads made LoopSpecs{0, n, 2} ambiguous).
  template <class B>
  using IfBool = typename std::enable_if<std::is_same<B, bool>::value, int>::type;

 public:
  LoopSpecs(long end_, std::initializer_list<long> block_sizes = {}) {
    assign(0L, end_, 1L, true, block_sizes);
  }
  template <class Bool, IfBool<Bool> = 0>
  LoopSpecs(long end_, Bool is_parallel, std::initializer_list<long> block_sizes = {}) {
    assign(0L, end_, 1L, is_parallel, block_sizes);
  }
  LoopSpecs(long start_, long end_, std::initializer_list<long> block_sizes = {}) {
    assign(start_, end_, 1L, true, block_sizes);
  }
  template <class Bool, IfBool<Bool> = 0>
  LoopSpecs(long start_, long end_, Bool is_parallel, std::initializer_list<long> block_sizes = {}) {
    assign(start_, end_, 1L, is_parallel, block_sizes);
  }
  LoopSpecs(long start_, long end_, long step_, std::initializer_list<long> block_sizes = {}) {
    assign(start_, end_, step_, true, block_sizes);
  }
  template <class Bool, IfBool<Bool> = 0>
  LoopSpecs(long start_, long end_, long step_, Bool is_parallel,
            std::initializer_list<long> block_sizes = {}) {
    assign(start_, end_, step_, is_parallel, block_sizes);
  }

  long start;
  long end;
  long step;
  bool isParallel;
  long nBlockingLevels;
  long block_size[MAX_BLOCKING_LEVELS];

 private:
  void assign(long start_, long end_, long step_, bool is_parallel,
              std::initializer_list<long> block_sizes) {
    start = start_;
    end = end_;
    step = step_;
    isParallel = is_parallel;
    nBlockingLevels = static_cast<long>(block_sizes.size());
    for (int i = 0; i < MAX_BLOCKING_LEVELS; ++i) block_size[i] = 0;
    int i = 0;
    for (long b : block_sizes) {
      if (i == MAX_BLOCKING_LEVELS) break;
      block_size[i++] = b;
    }
  }
};

using loop_rt_spec_t = LoopSpecs;

namespace weft {
namespace parlooper {
namespace compat {

struct Hook {
  HookFn fn;
  void* ctx;
};

// For strings the bridge returns (made in the library, read here in the user's string ABI).
struct FreeDeleter {
  void operator()(char* text) const { std::free(text); }
};

template <class H>
void* erase(H& h) {
  return const_cast<void*>(static_cast<const void*>(std::addressof(h)));
}

// A function passed by name becomes a pointer to it: the bridge stores object addresses.
template <class H>
typename std::enable_if<!std::is_function<H>::value, H&>::type callable_object(H& h) {
  return h;
}
template <class H>
typename std::enable_if<std::is_function<H>::value, H*>::type callable_object(H& h) {
  return &h;
}

template <class H>
void call_hook(void* ctx) {
  (*static_cast<H*>(ctx))();
}

template <class H>
Hook hook_of_callable(H& h, std::true_type /* testable */) {
  if (!static_cast<bool>(h)) return Hook{nullptr, nullptr};  // empty std::function, null pointer
  return Hook{&call_hook<H>, erase(h)};
}
template <class H>
Hook hook_of_callable(H& h, std::false_type) {
  return Hook{&call_hook<H>, erase(h)};
}

template <class H>
Hook hook_of(H&, std::true_type /* a null constant: PARLOOPER's NULL or nullptr */) {
  return Hook{nullptr, nullptr};
}
template <class H>
Hook hook_of(H& h, std::false_type) {
  return hook_of_callable(h, std::is_constructible<bool, H&>());
}

template <class H>
Hook to_hook(H& h) {
  return hook_of(h, std::integral_constant<bool, std::is_integral<H>::value ||
                                                     std::is_null_pointer<H>::value>());
}

template <class F>
bool is_empty_callable(F& f, std::true_type /* testable */) {
  return !static_cast<bool>(f);
}
template <class F>
bool is_empty_callable(F&, std::false_type) {
  return false;
}

// Called by the nest once per innermost iteration, the body inlined into it. Nothing may leave
// it: the nest calls it from generated code, and the bridge rethrows what it records.
template <class F>
void trampoline(void* ctx, int* ind) {
  try {
    (*static_cast<F*>(ctx))(ind);
  } catch (...) {
    capture_body_exception();
  }
}

}  // namespace compat
}  // namespace parlooper
}  // namespace weft

template <int N>
class ThreadedLoop {
  static_assert(N >= 1 && N <= 26, "ThreadedLoop<N>: N must be 1..26 (letters a..z)");

 public:
  // An empty scheme means PARLOOPER's default: the loops in order, upper case where isParallel.
  ThreadedLoop(std::array<LoopSpecs, N> bounds, std::string scheme = "")
      : bounds_(bounds), loop_(make_loop(bounds, scheme)) {}

  template <class T>
  void operator()(T&& func) const {
    run(func, weft::parlooper::compat::Hook{nullptr, nullptr},
        weft::parlooper::compat::Hook{nullptr, nullptr});
  }
  // init and term run once per participating thread; NULL, nullptr or an empty std::function
  // skips them.
  template <class T, class Ti, class Tf>
  void operator()(T&& func, Ti&& init, Tf&& fini) const {
    auto&& init_object = weft::parlooper::compat::callable_object(init);
    auto&& fini_object = weft::parlooper::compat::callable_object(fini);
    run(func, weft::parlooper::compat::to_hook(init_object),
        weft::parlooper::compat::to_hook(fini_object));
  }

  std::string getDefaultScheme() const { return default_scheme(bounds_); }

  int get_tid(int* ind) const { return weft::parlooper::compat::get_tid(ind); }
  threaded_loop_par_type get_loop_par_type(char loop_name, int* ind) const {
    return static_cast<threaded_loop_par_type>(loop_.get_loop_par_type(loop_name, ind));
  }
  int get_loop_parallel_degree(char loop_name, int* ind) const {
    return loop_.get_loop_parallel_degree(loop_name, ind);
  }
  int get_tid_in_parallel_dim(char loop_name, int* ind) const {
    return loop_.get_tid_in_parallel_dim(loop_name, ind);
  }

 private:
  static std::string default_scheme(const std::array<LoopSpecs, N>& bounds) {
    std::string scheme;
    for (int i = 0; i < N; ++i)
      scheme += static_cast<char>((bounds[static_cast<std::size_t>(i)].isParallel ? 'A' : 'a') + i);
    return scheme;
  }

  static weft::parlooper::compat::Loop make_loop(const std::array<LoopSpecs, N>& bounds,
                                                 const std::string& scheme) {
    weft::parlooper::compat::LoopBounds converted[N];
    for (int i = 0; i < N; ++i) {
      const LoopSpecs& s = bounds[static_cast<std::size_t>(i)];
      weft::parlooper::compat::LoopBounds& b = converted[i];
      b.start = s.start;
      b.end = s.end;
      b.step = s.step;
      b.n_blocks = s.nBlockingLevels;
      for (int j = 0; j < MAX_BLOCKING_LEVELS; ++j) b.blocks[j] = s.block_size[j];
    }
    const bool use_default = scheme.empty();
    const std::string text = use_default ? default_scheme(bounds) : scheme;
    return weft::parlooper::compat::Loop(converted, N, text.data(), text.size(), use_default);
  }

  template <class T>
  void run(T& func, weft::parlooper::compat::Hook init, weft::parlooper::compat::Hook fini) const {
    auto&& body = weft::parlooper::compat::callable_object(func);
    using F = typename std::remove_reference<decltype(body)>::type;
    if (weft::parlooper::compat::is_empty_callable(body, std::is_constructible<bool, F&>()))
      weft::parlooper::compat::throw_empty_body();
    loop_.run(&weft::parlooper::compat::trampoline<F>, weft::parlooper::compat::erase(body), init.fn,
              init.ctx, fini.fn, fini.ctx);
  }

  std::array<LoopSpecs, N> bounds_;
  weft::parlooper::compat::Loop loop_;
};

// weft's rendering of the nest a loop_string describes (PARLOOPER returned the C++ source it
// compiled). Throws weft::Error for an invalid string.
inline std::string loop_generator(const char* loop_nest_desc) {
  const std::unique_ptr<char, weft::parlooper::compat::FreeDeleter> text(
      weft::parlooper::compat::loop_generator(loop_nest_desc));
  return std::string(text.get());
}

#endif  // _THREADED_LOOPS_H_
#endif  // WEFT_PARLOOPER_THREADED_LOOPS_H
