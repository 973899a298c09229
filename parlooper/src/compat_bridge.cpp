// The PARLOOPER compatibility layer's compiled half: PARLOOPER-shaped bounds and strings in, weft's
// DynamicThreadedLoop built on first use.
#include "weft/parlooper/compat_bridge.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "weft/jit/error.hpp"
#include "weft/parlooper/loop_string.hpp"
#include "weft/parlooper/render.hpp"  // render(const LoopNest&)
#include "weft/parlooper/threaded_loop.hpp"

namespace weft::parlooper::compat {
namespace {

// The block sizes a PARLOOPER LoopSpecs carries. Its generated code read block_size[j] whatever
// nBlockingLevels said, so sizes set by assignment after construction count too.
std::vector<long> block_sizes(const LoopBounds& b) {
  long count = std::clamp(b.n_blocks, 0L, static_cast<long>(kMaxBlockingLevels));
  for (long i = count; i < kMaxBlockingLevels; ++i)
    if (b.blocks[i] != 0) count = i + 1;
  return std::vector<long>(b.blocks, b.blocks + count);
}

}  // namespace

struct Loop::Impl {
  std::vector<LoopSpecs> specs;
  std::vector<long> given_blocks;  // per loop: nBlockingLevels as given
  std::string loop_string;
  bool default_scheme = false;
  std::mutex build_mutex;
  std::unique_ptr<DynamicThreadedLoop> built;
  std::atomic<const DynamicThreadedLoop*> ready{nullptr};

  // Builds on first use; a failed build keeps nothing, so every call reports the same error.
  const DynamicThreadedLoop& get() {
    if (const DynamicThreadedLoop* loop = ready.load(std::memory_order_acquire)) return *loop;
    std::lock_guard lock(build_mutex);
    if (!built) {
      check_block_counts();
      try {
        built = std::make_unique<DynamicThreadedLoop>(specs, loop_string, default_engine_kind());
      } catch (const LoopStringError& e) {
        if (!default_scheme) throw;
        throw LoopStringError(e.problem() + " (this loop_string was built from the LoopSpecs' isParallel "
                                            "flags, as none was given: pass one to the ThreadedLoop)",
                              e.loop_string(), e.position());
      }
      ready.store(built.get(), std::memory_order_release);
    }
    return *built;
  }

  void check_block_counts() const {
    for (std::size_t i = 0; i < given_blocks.size(); ++i) {
      if (given_blocks[i] > kMaxBlockingLevels)
        throw weft::Error("LoopSpecs[" + std::to_string(i) + "] (loop '" + static_cast<char>('a' + i) +
                          "') has " + std::to_string(given_blocks[i]) +
                          " block sizes; PARLOOPER's LoopSpecs holds at most MAX_BLOCKING_LEVELS = " +
                          std::to_string(kMaxBlockingLevels));
    }
  }
};

void capture_body_exception() noexcept { detail::capture_body_exception(); }

void throw_empty_body() {
  throw weft::Error("ThreadedLoop: the loop body is empty (a null function or an empty std::function)");
}

int get_tid(const int* ind) { return DynamicThreadedLoop::get_tid(ind); }

char* loop_generator(const char* loop_string) {
  if (loop_string == nullptr) throw weft::Error("loop_generator: the loop_string is a null pointer");
  // PARLOOPER counts the loops by the letters the string uses; grids, inline specs and clauses
  // hold no loop letters.
  const std::string text(loop_string);
  int num_loops = 0;
  char closing = 0;
  for (const char c : text) {
    if (closing != 0) {
      if (c == closing) closing = 0;
      continue;
    }
    if (c == '@') break;
    if (c == '{') closing = '}';
    else if (c == '[') closing = ']';
    else if (c >= 'a' && c <= 'z') num_loops = std::max(num_loops, c - 'a' + 1);
    else if (c >= 'A' && c <= 'Z') num_loops = std::max(num_loops, c - 'A' + 1);
  }
  const std::string rendered = render(parse_loop_string(text, std::max(num_loops, 1)));
  char* copy = static_cast<char*>(std::malloc(rendered.size() + 1));
  if (copy == nullptr) throw std::bad_alloc();
  std::memcpy(copy, rendered.c_str(), rendered.size() + 1);
  return copy;
}

Loop::Loop(const LoopBounds* bounds, int num_loops, const char* loop_string, std::size_t length,
           bool default_scheme)
    : impl_(std::make_shared<Impl>()) {
  impl_->loop_string.assign(loop_string, length);
  impl_->default_scheme = default_scheme;
  for (int i = 0; i < num_loops; ++i) {
    const LoopBounds& b = bounds[i];
    LoopSpecs spec(b.start, b.end, b.step);
    spec.block_size = block_sizes(b);
    impl_->specs.push_back(std::move(spec));
    impl_->given_blocks.push_back(b.n_blocks);
  }
}

void Loop::run(BodyFn body, void* body_ctx, HookFn init, void* init_ctx, HookFn term,
               void* term_ctx) const {
  impl_->get().run(body, body_ctx, ThreadHook{init, init_ctx}, ThreadHook{term, term_ctx});
}

int Loop::get_loop_par_type(char loop, const int* ind) const {
  return static_cast<int>(impl_->get().get_loop_par_type(loop, ind));
}

int Loop::get_loop_parallel_degree(char loop, const int* ind) const {
  return impl_->get().get_loop_parallel_degree(loop, ind);
}

int Loop::get_tid_in_parallel_dim(char loop, const int* ind) const {
  return impl_->get().get_tid_in_parallel_dim(loop, ind);
}


}  // namespace weft::parlooper::compat
