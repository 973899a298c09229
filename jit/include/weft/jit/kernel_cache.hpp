// A thread-safe cache of generated things (kernels, loop nests), keyed by a canonical descriptor.
// Entries live as long as the cache; references to them stay valid.
//
//   static weft::jit::KernelCache<Key, Entry, KeyHash> cache;   // Entry: what is generated for a Key
//   const Entry& e = cache.get_or_create(key, [&] { return std::make_unique<Entry>(key); });
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <utility>

namespace weft::jit {

// Mixes `value`'s hash into `seed` (boost's recipe), for descriptor hash functions.
template <class T>
void hash_combine(std::size_t& seed, const T& value) {
  seed ^= std::hash<T>{}(value) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
}

template <class Key, class Value, class Hash = std::hash<Key>, class Equal = std::equal_to<Key>>
class KernelCache {
 public:
  // Returns the entry for `key`, calling make() (which returns a Value or a std::unique_ptr<Value>)
  // when there is none. make() runs outside the lock, so a slow generation does not stall lookups
  // of other keys; when two threads race on one key, one result is kept and the other discarded.
  // An exception from make() propagates and caches nothing.
  template <class Make>
  const Value& get_or_create(const Key& key, Make&& make) {
    {
      std::shared_lock lock(mutex_);
      if (auto it = map_.find(key); it != map_.end()) return *it->second;
    }
    std::unique_ptr<Value> fresh = to_unique(make());
    std::unique_lock lock(mutex_);
    auto [it, inserted] = map_.try_emplace(key, std::move(fresh));
    return *it->second;
  }

  // The entry for `key`, or nullptr.
  const Value* find(const Key& key) const {
    std::shared_lock lock(mutex_);
    auto it = map_.find(key);
    return it == map_.end() ? nullptr : it->second.get();
  }

  std::size_t size() const {
    std::shared_lock lock(mutex_);
    return map_.size();
  }

 private:
  static std::unique_ptr<Value> to_unique(std::unique_ptr<Value> p) { return p; }
  static std::unique_ptr<Value> to_unique(Value&& v) { return std::make_unique<Value>(std::move(v)); }

  mutable std::shared_mutex mutex_;
  std::unordered_map<Key, std::unique_ptr<Value>, Hash, Equal> map_;
};

}  // namespace weft::jit
