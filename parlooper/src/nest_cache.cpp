// The nest cache. Two levels: the string as the user wrote it finds its entry without parsing
// (the cached construction path), and the canonical string shares one entry, and one set of
// engines, between spellings of the same nest. Both levels are LRU lists with a bound, so a
// process that makes strings from shapes (an autotuner, a server) keeps its memory and mappings
// bounded. Entries are shared_ptrs: dropping one from the cache frees its code only once the last
// loop using it is gone.
#include "weft/parlooper/nest_cache.hpp"

#include <chrono>
#include <list>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "weft/jit/cache_capacity.hpp"
#include "weft/jit/emitting.hpp"
#include "weft/jit/kernel_cache.hpp"
#include "weft/jit/log.hpp"
#include "weft/parlooper/loop_string.hpp"

namespace weft::parlooper {
namespace {

using NestKey = std::pair<std::string, int>;

struct NestKeyHash {
  std::size_t operator()(const NestKey& key) const {
    std::size_t seed = std::hash<std::string>{}(key.first);
    jit::hash_combine(seed, key.second);
    return seed;
  }
};

constexpr std::size_t kDefaultCapacity = 4096;
// Spellings cost a string each and no code; a few per nest (clause spellings, whitespace) keep
// every spelling of the cached nests on the fast path.
constexpr std::size_t kSpellingsPerNest = 4;

std::size_t capacity_from_env() {
  return jit::cache_capacity_from_env("WEFT_NEST_CACHE_SIZE", "loop nests", kDefaultCapacity);
}

class NestCache {
 public:
  using Nest = std::shared_ptr<const CachedNest>;

  std::shared_ptr<const CachedNest> find(const NestKey& spelling) {
    std::vector<Nest> dropped;  // destroyed after the lock is released: that frees code
    const std::lock_guard lock(mutex_);
    const auto it = spelling_index_.find(spelling);
    if (it == spelling_index_.end()) return nullptr;
    Nest nest = it->second->nest.lock();
    if (!nest) {
      // Dropped from the canonical level and no longer used by anyone.
      spellings_.erase(it->second);
      spelling_index_.erase(it);
      return nullptr;
    }
    spellings_.splice(spellings_.begin(), spellings_, it->second);
    keep(nest, dropped);
    return nest;
  }

  // The entry for `spelling`, whose parse gave `nest`: the cached one of the same canonical key
  // when there is one (another spelling, or another thread that got there first).
  std::shared_ptr<const CachedNest> insert(const NestKey& spelling, LoopNest nest) {
    NestKey canonical{nest.canonical, nest.num_loops};
    // Not make_shared: spellings hold weak_ptrs, which would keep a dropped nest's memory.
    Nest fresh(new CachedNest(std::move(nest)));
    std::vector<Nest> dropped;
    const std::lock_guard lock(mutex_);
    Nest entry;
    if (const auto it = canonical_index_.find(canonical); it != canonical_index_.end()) {
      entry = it->second->nest;
    } else {
      entry = std::move(fresh);
    }
    keep(entry, dropped);
    if (const auto it = spelling_index_.find(spelling); it != spelling_index_.end()) {
      it->second->nest = entry;
      spellings_.splice(spellings_.begin(), spellings_, it->second);
    } else {
      spellings_.push_front(Spelling{spelling, entry});
      spelling_index_.emplace(spelling, spellings_.begin());
    }
    trim(dropped);
    return entry;
  }

  std::size_t size() const {
    const std::lock_guard lock(mutex_);
    return nests_.size();
  }

  std::size_t capacity() {
    const std::lock_guard lock(mutex_);
    return capacity_locked();
  }

  void set_capacity(std::size_t nests) {
    std::vector<Nest> dropped;
    const std::lock_guard lock(mutex_);
    capacity_ = nests;
    trim(dropped);
  }

 private:
  struct Canonical {
    NestKey key;
    Nest nest;
  };
  struct Spelling {
    NestKey key;
    std::weak_ptr<const CachedNest> nest;
  };

  std::size_t capacity_locked() {
    if (!capacity_) capacity_ = capacity_from_env();
    return *capacity_;
  }

  // Makes `nest` the most recently used canonical entry, adding it when it is not cached (a new
  // nest, or one dropped earlier that a live loop still holds: taking it back avoids a duplicate).
  void keep(const Nest& nest, std::vector<Nest>& dropped) {
    if (const auto it = by_pointer_.find(nest.get()); it != by_pointer_.end()) {
      nests_.splice(nests_.begin(), nests_, it->second);
      return;
    }
    NestKey key{nest->nest().canonical, nest->nest().num_loops};
    nests_.push_front(Canonical{key, nest});
    canonical_index_.emplace(std::move(key), nests_.begin());
    by_pointer_.emplace(nest.get(), nests_.begin());
    trim(dropped);
  }

  void trim(std::vector<Nest>& dropped) {
    const std::size_t nests = capacity_locked();
    while (nests_.size() > nests) {
      Canonical& last = nests_.back();
      canonical_index_.erase(last.key);
      by_pointer_.erase(last.nest.get());
      dropped.push_back(std::move(last.nest));
      nests_.pop_back();
    }
    const std::size_t spellings = nests * kSpellingsPerNest;
    while (spellings_.size() > spellings) {
      spelling_index_.erase(spellings_.back().key);
      spellings_.pop_back();
    }
  }

  mutable std::mutex mutex_;
  std::optional<std::size_t> capacity_;  // read from the environment on first use
  std::list<Canonical> nests_;    // most recently used first
  std::unordered_map<NestKey, std::list<Canonical>::iterator, NestKeyHash> canonical_index_;
  std::unordered_map<const CachedNest*, std::list<Canonical>::iterator> by_pointer_;
  std::list<Spelling> spellings_;  // most recently used first
  std::unordered_map<NestKey, std::list<Spelling>::iterator, NestKeyHash> spelling_index_;
};

// Never destroyed: a loop destroyed during static destruction, or on a thread still running at
// exit, may still look nests up.
NestCache& cache() {
  static auto* const instance = new NestCache;
  return *instance;
}

bool is_grid(ParKind p) { return p == ParKind::rows || p == ParKind::cols || p == ParKind::layers; }

}  // namespace

CachedNest::CachedNest(LoopNest nest) : nest_(std::move(nest)) {
  for (const LoopLevel& level : nest_.levels) {
    has_barrier_ = has_barrier_ || level.barrier_after;
    LoopParallelism& p = parallelism_[static_cast<std::size_t>(level.loop)];
    if (p.par == ParKind::none && level.par != ParKind::none)
      p = LoopParallelism{level.par, is_grid(level.par) ? level.ways : 1};
  }
}

const Engine& CachedNest::engine(EngineKind kind) const {
  const auto k = static_cast<std::size_t>(kind);
  std::call_once(built_[k], [&] {
    const auto begin = std::chrono::steady_clock::now();
    const std::string what =
        "loop nest \"" + nest_.canonical + "\" (" + std::to_string(nest_.num_loops) + " loops)";
    engines_[k] = jit::emitting(what, [&] {
      return kind == EngineKind::jit ? make_jit_engine(nest_) : make_reference_engine(nest_);
    });
    const auto us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - begin);
    weft::log().debug("parlooper: {} engine for \"{}\" ({} loops) built in {:.1f} us",
                      engines_[k]->name(), nest_.canonical, nest_.num_loops, us.count());
  });
  return *engines_[k];
}

std::shared_ptr<const CachedNest> find_or_build_nest(std::string_view loop_string, int num_loops) {
  NestKey spelling{std::string(loop_string), num_loops};
  if (auto hit = cache().find(spelling)) return hit;
  return cache().insert(spelling, parse_loop_string(loop_string, num_loops));
}

std::size_t cached_nest_count() { return cache().size(); }

std::size_t nest_cache_capacity() { return cache().capacity(); }

void set_nest_cache_capacity(std::size_t nests) { cache().set_capacity(nests); }

}  // namespace weft::parlooper
