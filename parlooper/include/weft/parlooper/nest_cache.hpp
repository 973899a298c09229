// The process-wide cache of parsed loop nests, keyed by (canonical loop_string, number of loops).
// Engines are built on first use, once per kind. Safe to use from many threads at once.
//
//   std::shared_ptr<const CachedNest> cached = find_or_build_nest("bcaBCb", 3);  // parses on a miss
//   const Engine& engine = cached->engine(EngineKind::reference);
//
// The cache is bounded: it keeps the nest_cache_capacity() most recently used nests
// (WEFT_NEST_CACHE_SIZE, default 4096) and four times as many spellings, dropping the least
// recently used beyond that. A dropped nest lives on, generated code included, as long as
// someone holds its shared_ptr (every ThreadedLoop does), so code is never freed under a thread
// running it; it is rebuilt if asked for again.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string_view>

#include "weft/parlooper/engine.hpp"
#include "weft/parlooper/loop_nest.hpp"

namespace weft::parlooper {

// How one logical loop is parallelized: by its outermost parallel occurrence, if any.
struct LoopParallelism {
  ParKind par = ParKind::none;
  int ways = 1;  // grid ways; 1 unless par is rows/cols/layers
};

class CachedNest {
 public:
  explicit CachedNest(LoopNest nest);
  CachedNest(const CachedNest&) = delete;
  CachedNest& operator=(const CachedNest&) = delete;

  const LoopNest& nest() const { return nest_; }
  // Builds the engine on first use; throws what the engine's factory throws (nothing is kept then),
  // weft::Error for a failure to generate code.
  const Engine& engine(EngineKind kind) const;
  const LoopParallelism& parallelism(int loop) const {
    return parallelism_[static_cast<std::size_t>(loop)];
  }
  bool has_barrier() const { return has_barrier_; }

 private:
  LoopNest nest_;
  std::array<LoopParallelism, kMaxLoops> parallelism_{};
  bool has_barrier_ = false;
  mutable std::once_flag built_[2];
  mutable std::unique_ptr<Engine> engines_[2];
};

// Throws LoopStringError for an invalid string (nothing is cached then).
std::shared_ptr<const CachedNest> find_or_build_nest(std::string_view loop_string, int num_loops);

// Distinct canonical nests currently cached (at most nest_cache_capacity()).
std::size_t cached_nest_count();

// The bound on cached canonical nests: WEFT_NEST_CACHE_SIZE (a count; 0 caches nothing) when set,
// else 4096, unless changed by set_nest_cache_capacity(). Throws weft::Error when
// WEFT_NEST_CACHE_SIZE is not a number.
std::size_t nest_cache_capacity();

// Changes the bound, dropping the least recently used nests beyond it at once (for tools that know
// their working set, and for tests).
void set_nest_cache_capacity(std::size_t nests);

}  // namespace weft::parlooper
