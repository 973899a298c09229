#include "weft/tuner/cache_eviction.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <new>

#include <weft/jit/error.hpp>

namespace weft::tuner {

namespace {

std::size_t floats_per_thread(int threads, std::size_t l2_bytes, std::size_t l3_bytes) {
  const std::size_t l2 = l2_bytes ? l2_bytes : std::size_t{1} << 20;
  const std::size_t l3 = l3_bytes ? std::min(l3_bytes, CacheEvictor::kMaxSharedBytes) : CacheEvictor::kMaxSharedBytes;
  const std::size_t bytes = 2 * l2 + 2 * l3 / static_cast<std::size_t>(threads);
  return (bytes + 63) / 64 * 16;  // whole 64-byte lines
}

}  // namespace

CacheEvictor::CacheEvictor(int threads, std::size_t l2_bytes, std::size_t l3_bytes) : threads_(threads) {
  if (threads < 1) throw Error("CacheEvictor: threads must be >= 1, not " + std::to_string(threads));
  floats_per_thread_ = floats_per_thread(threads, l2_bytes, l3_bytes);
  buffers_.assign(static_cast<std::size_t>(threads), nullptr);
  const std::size_t bytes = floats_per_thread_ * sizeof(float);
  bool failed = false;
#pragma omp parallel num_threads(threads_) reduction(|| : failed)
  {
    // Each thread allocates and touches its own buffer, so its pages are local to it.
    const int t = omp_get_thread_num();
    auto* p = static_cast<float*>(std::aligned_alloc(64, bytes));
    if (p == nullptr) {
      failed = true;
    } else {
      for (std::size_t i = 0; i < floats_per_thread_; ++i) p[i] = 0.0f;
      buffers_[static_cast<std::size_t>(t)] = p;
    }
  }
  if (failed) {
    for (float* p : buffers_) std::free(p);
    throw std::bad_alloc();
  }
}

CacheEvictor::~CacheEvictor() {
  for (float* p : buffers_) std::free(p);
}

void CacheEvictor::operator()() {
  pass_ += 1.0f;
  const float value = pass_;
#pragma omp parallel num_threads(threads_)
  {
    float* p = buffers_[static_cast<std::size_t>(omp_get_thread_num())];
    for (std::size_t i = 0; i < floats_per_thread_; i += 16) p[i] = value;  // one store per 64-byte line
  }
}

}  // namespace weft::tuner
