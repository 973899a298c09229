#include "weft/parlooper/nest_trace.hpp"

#include <omp.h>

#include <atomic>
#include <cstdint>
#include <new>
#include <string>

#include "weft/jit/error.hpp"

namespace weft::parlooper {

namespace {

struct Recording {
  NestTrace* trace;
  std::atomic<bool> out_of_memory{false};
};

// Called from generated code inside a parallel region: nothing may be thrown out of it.
void record(void* ctx, int* ind) noexcept {
  auto& recording = *static_cast<Recording*>(ctx);
  if (recording.out_of_memory.load(std::memory_order_relaxed)) return;
  auto& out = recording.trace->per_thread[static_cast<std::size_t>(DynamicThreadedLoop::get_tid(ind))];
  try {
    out.insert(out.end(), ind, ind + recording.trace->loops);
  } catch (const std::bad_alloc&) {
    recording.out_of_memory.store(true, std::memory_order_relaxed);
  }
}

// Bytes the recorded indices of a trace take at least: every index tuple of the loops' ranges once.
std::uint64_t trace_bytes(std::span<const LoopSpecs> specs) {
  std::uint64_t bytes = bytes_needed({static_cast<std::int64_t>(specs.size())}, sizeof(int));
  for (const LoopSpecs& s : specs) {
    const std::int64_t trips = s.end > s.start ? (static_cast<std::int64_t>(s.end) - s.start + s.step - 1) / s.step : 0;
    bytes = bytes_needed({trips}, bytes);
  }
  return bytes;
}

// Sets the calling thread's OpenMP thread count for one scope.
class ThreadCountScope {
 public:
  explicit ThreadCountScope(int threads) : previous_(omp_get_max_threads()) {
    if (threads > 0) omp_set_num_threads(threads);
  }
  ~ThreadCountScope() { omp_set_num_threads(previous_); }
  ThreadCountScope(const ThreadCountScope&) = delete;
  ThreadCountScope& operator=(const ThreadCountScope&) = delete;

 private:
  int previous_;
};

}  // namespace

NestTrace trace_nest(const DynamicThreadedLoop& loop, std::span<const LoopSpecs> specs, int threads) {
  const std::uint64_t bytes = trace_bytes(specs);
  const std::string what = "the trace (one line per body call, " + std::to_string(specs.size()) + " indices each)";
  require_memory(what, bytes);
  const ThreadCountScope scope(threads);
  NestTrace trace;
  trace.loops = loop.num_loops();
  trace.per_thread.resize(static_cast<std::size_t>(omp_get_max_threads()));
  Recording recording{&trace};
  loop.run(&record, &recording);
  if (recording.out_of_memory) throw MemoryError(what, bytes, MemoryError::Reason::allocation_failed);
  return trace;
}

}  // namespace weft::parlooper
