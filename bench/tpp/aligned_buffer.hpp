// std::vector storage aligned to 64 bytes (a cache line), for the TPP benchmarks: a malloc'ed
// buffer is only 16-byte aligned, and where it lands decides whether half of the 32-byte loads of
// a kernel cross a cache line (measured: 75 vs 43 GFLOPS for the same 32 x 1 x 128 BRGEMM), which
// would make results depend on the heap's history rather than on the kernels.
//
//   weft::bench::AlignedVector<float> a(1024);   // a.data() % 64 == 0
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace weft::bench {

template <class T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{64};
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlignment)); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, kAlignment); }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const noexcept {
    return true;
  }
};

template <class T>
using AlignedVector = std::vector<T, CacheLineAllocator<T>>;

}  // namespace weft::bench
