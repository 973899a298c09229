// The compiled side of the PARLOOPER compatibility header <weft/parlooper/threaded_loops.h>.
// PARLOOPER code is built with -std=c++14 and -D_GLIBCXX_USE_CXX11_ABI=0, and weft's own headers
// need C++20, so this interface uses types whose layout neither changes: plain structs, C strings,
// function pointers, std::shared_ptr (no std::string, whose layout that macro changes). Users
// include threaded_loops.h, not this file.
//
//   weft::parlooper::compat::LoopBounds bounds[2] = {...};
//   weft::parlooper::compat::Loop loop(bounds, 2, "aB", 2, false);   // checks nothing yet
//   loop.run(&body_trampoline, &body, nullptr, nullptr, nullptr, nullptr);  // parses, checks, runs
#ifndef WEFT_PARLOOPER_COMPAT_BRIDGE_H
#define WEFT_PARLOOPER_COMPAT_BRIDGE_H

#include <cstddef>
#include <memory>

namespace weft {
namespace parlooper {
namespace compat {

// PARLOOPER's LoopSpecs holds this many block sizes (its MAX_BLOCKING_LEVELS).
constexpr int kMaxBlockingLevels = 5;

// One logical loop as a PARLOOPER LoopSpecs describes it.
struct LoopBounds {
  long start;
  long end;
  long step;
  long n_blocks;  // LoopSpecs::nBlockingLevels: block sizes given, which may exceed the array
  long blocks[kMaxBlockingLevels];
};

// Same shapes as weft's BodyFn and ThreadHook::fn.
typedef void (*BodyFn)(void* ctx, int* ind);
typedef void (*HookFn)(void* ctx);

// Records the exception being handled as the first error of the running call (it is rethrown by
// run() once every thread has finished). For body trampolines: nothing may propagate out of a
// body, which the nest calls from generated code.
void capture_body_exception() noexcept;

// Throws weft::Error: a ThreadedLoop was called with an empty std::function or a null function.
[[noreturn]] void throw_empty_body();

// The calling thread's id in the team; `ind` is the pointer the body received.
int get_tid(const int* ind);

// weft's rendering of a nest (C-like pseudo code with its parallel annotations), in a string from
// std::malloc that the caller frees; the number of loops is the highest letter used. Throws
// weft::Error for an invalid string.
char* loop_generator(const char* loop_string);

// A nest of PARLOOPER loops. Construction only copies: the string and the bounds are parsed and
// checked on the first run() or helper call (PARLOOPER checked nothing until a loop ran, and some
// of its samples build loops they never call), once, thread-safely, and every later call throws
// the same error. Copies share the parsed nest.
class Loop {
 public:
  // `default_scheme`: the string was built from the isParallel flags, not written by the user
  // (errors then say so).
  Loop(const LoopBounds* bounds, int num_loops, const char* loop_string, std::size_t length,
       bool default_scheme);
  // Copies only: a moved-from loop would have nothing to run. (Declaring them suppresses the moves.)
  Loop(const Loop&) = default;
  Loop& operator=(const Loop&) = default;

  // Runs the nest; throws weft::Error (LoopStringError for the string or bounds), or the first
  // exception of the body, init or term. Either hook may be null.
  void run(BodyFn body, void* body_ctx, HookFn init, void* init_ctx, HookFn term,
           void* term_ctx) const;

  // PARLOOPER's helpers; `loop` is 'a'.. or 'A'... The par type is a threaded_loop_par_type value.
  int get_loop_par_type(char loop, const int* ind) const;
  int get_loop_parallel_degree(char loop, const int* ind) const;
  int get_tid_in_parallel_dim(char loop, const int* ind) const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace compat
}  // namespace parlooper
}  // namespace weft

#endif  // WEFT_PARLOOPER_COMPAT_BRIDGE_H
