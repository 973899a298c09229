// A thread-safe, bounded cache of generated things (kernels, trampolines), keyed by a canonical
// descriptor. It keeps the kernel_cache_capacity() most recently used entries (WEFT_KERNEL_CACHE_SIZE,
// default 4096) and drops the least recently used beyond that. Entries are handed out as
// shared_ptrs: a dropped entry, and the code it owns, lives until its last holder lets go, so
// eviction never frees code that a functor or another thread still runs.
//
//   static weft::jit::KernelCache<Key, Entry, KeyHash> cache;   // Entry: what is generated for a Key
//   std::shared_ptr<const Entry> e = cache.get_or_create(key, [&] { return std::make_unique<Entry>(key); });
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace weft::jit {

// Mixes `value`'s hash into `seed` (boost's recipe), for descriptor hash functions.
template <class T>
void hash_combine(std::size_t& seed, const T& value) {
  seed ^= std::hash<T>{}(value) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
}

// The bound of every KernelCache made without a capacity of its own, per cache (each TPP family,
// the mini_jit trampolines): WEFT_KERNEL_CACHE_SIZE (a count; 0 keeps nothing beyond live holders)
// when set, else 4096, unless changed by set_kernel_cache_capacity(). The environment is read once;
// throws weft::Error when WEFT_KERNEL_CACHE_SIZE is not a count.
std::size_t kernel_cache_capacity();

// Changes that bound and trims every such cache to it at once (for tools that know their working
// set, and for tests).
void set_kernel_cache_capacity(std::size_t entries);

namespace detail {

// A cache that follows kernel_cache_capacity(): set_kernel_cache_capacity() trims it.
class FollowsKernelCacheCapacity {
 public:
  virtual void trim_to_capacity() = 0;

 protected:
  FollowsKernelCacheCapacity() = default;
  ~FollowsKernelCacheCapacity() = default;
  void start_following();
  void stop_following();
};

}  // namespace detail

template <class Key, class Value, class Hash = std::hash<Key>, class Equal = std::equal_to<Key>>
class KernelCache final : detail::FollowsKernelCacheCapacity {
 public:
  // Bounded by kernel_cache_capacity().
  KernelCache() { start_following(); }
  // Bounded by `capacity` of its own (tests of the cache itself).
  explicit KernelCache(std::size_t capacity) : own_capacity_(capacity) {}
  ~KernelCache() {
    if (!own_capacity_) stop_following();
  }
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // Returns the entry for `key`, calling make() (which returns a Value or a std::unique_ptr<Value>)
  // when there is none, and makes it the most recently used. make() runs outside the lock, so a
  // slow generation does not stall lookups of other keys; when two threads race on one key, one
  // result is kept and the other discarded. An exception from make() propagates and caches nothing.
  template <class Make>
  std::shared_ptr<const Value> get_or_create(const Key& key, Make&& make) {
    if (auto hit = find(key)) return hit;
    const std::size_t bound = capacity();  // before make(): a bad WEFT_KERNEL_CACHE_SIZE generates nothing
    std::shared_ptr<const Value> fresh = to_shared(make());
    std::vector<std::shared_ptr<const Value>> dropped;  // freed after the lock: that frees code
    const std::lock_guard lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      return it->second->value;
    }
    if (bound == 0) return fresh;
    lru_.push_front(Node{key, fresh});
    index_.emplace(key, lru_.begin());
    trim(bound, dropped);
    return fresh;
  }

  // The entry for `key` (now the most recently used), or nullptr.
  std::shared_ptr<const Value> find(const Key& key) {
    const std::lock_guard lock(mutex_);
    const auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->value;
  }

  std::size_t size() const {
    const std::lock_guard lock(mutex_);
    return lru_.size();
  }

  std::size_t capacity() const { return own_capacity_ ? *own_capacity_ : kernel_cache_capacity(); }

  void trim_to_capacity() override {
    const std::size_t bound = capacity();
    std::vector<std::shared_ptr<const Value>> dropped;
    const std::lock_guard lock(mutex_);
    trim(bound, dropped);
  }

 private:
  struct Node {
    Key key;
    std::shared_ptr<const Value> value;
  };

  static std::shared_ptr<const Value> to_shared(std::unique_ptr<Value> p) { return p; }
  static std::shared_ptr<const Value> to_shared(Value&& v) { return std::make_shared<const Value>(std::move(v)); }

  void trim(std::size_t bound, std::vector<std::shared_ptr<const Value>>& dropped) {
    while (lru_.size() > bound) {
      index_.erase(lru_.back().key);
      dropped.push_back(std::move(lru_.back().value));
      lru_.pop_back();
    }
  }

  const std::optional<std::size_t> own_capacity_;
  mutable std::mutex mutex_;
  std::list<Node> lru_;  // most recently used first
  std::unordered_map<Key, typename std::list<Node>::iterator, Hash, Equal> index_;
};

}  // namespace weft::jit
