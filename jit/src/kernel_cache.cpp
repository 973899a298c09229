// The process-wide bound of the kernel caches, and the caches that follow it.
#include "weft/jit/kernel_cache.hpp"

#include <algorithm>
#include <atomic>

#include "weft/jit/cache_capacity.hpp"

namespace weft::jit {
namespace {

// Per cache. A small cached TPP kernel costs about 4.7 KB of resident memory (its code, plan and
// descriptor, and the emitter object that owns the code), so a full cache holds about 19 MB: modest
// next to any process that generates code, and far above the working set of an operator, a network
// or a tuning run (tens to a few hundred distinct kernels), so that only a process making kernels
// from unbounded shapes ever evicts. The nest cache has the same default.
constexpr std::size_t kDefaultCapacity = 4096;

std::size_t capacity_from_env() {
  return cache_capacity_from_env("WEFT_KERNEL_CACHE_SIZE", "kernels", kDefaultCapacity);
}

struct Capacity {
  std::mutex mutex;  // serializes reading the environment and changes
  std::atomic<bool> known{false};
  std::atomic<std::size_t> value{0};
};

struct Followers {
  std::mutex mutex;
  std::vector<detail::FollowsKernelCacheCapacity*> caches;
};

// Never destroyed: caches may be made, trimmed and destroyed during static destruction.
Capacity& capacity_state() {
  static auto* const state = new Capacity;
  return *state;
}

Followers& followers() {
  static auto* const state = new Followers;
  return *state;
}

}  // namespace

std::size_t kernel_cache_capacity() {
  Capacity& c = capacity_state();
  if (c.known.load(std::memory_order_acquire)) return c.value.load(std::memory_order_relaxed);
  const std::lock_guard lock(c.mutex);
  if (!c.known.load(std::memory_order_relaxed)) {
    c.value.store(capacity_from_env(), std::memory_order_relaxed);  // a throw leaves it unknown
    c.known.store(true, std::memory_order_release);
  }
  return c.value.load(std::memory_order_relaxed);
}

void set_kernel_cache_capacity(std::size_t entries) {
  {
    Capacity& c = capacity_state();
    const std::lock_guard lock(c.mutex);
    c.value.store(entries, std::memory_order_relaxed);
    c.known.store(true, std::memory_order_release);
  }
  Followers& f = followers();
  const std::lock_guard lock(f.mutex);
  for (detail::FollowsKernelCacheCapacity* cache : f.caches) cache->trim_to_capacity();
}

namespace detail {

void FollowsKernelCacheCapacity::start_following() {
  Followers& f = followers();
  const std::lock_guard lock(f.mutex);
  f.caches.push_back(this);
}

void FollowsKernelCacheCapacity::stop_following() {
  Followers& f = followers();
  const std::lock_guard lock(f.mutex);
  f.caches.erase(std::remove(f.caches.begin(), f.caches.end(), this), f.caches.end());
}

}  // namespace detail
}  // namespace weft::jit
