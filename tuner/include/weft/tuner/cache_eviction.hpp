// Cold caches before a timed run. A layer of a network, or a kernel in a benchmark that interleaves
// implementations (weft-bench-conv), starts with other data in the caches: its weights (and often
// its inputs) come from memory. A tuner that times back-to-back runs sees them cached and prefers
// what only wins so. Measured on Zen 4 (1 thread, backward by weights, 7x7 512 -> 2048 1x1): back
// to back every candidate ran 110-113 GFLOPS and the default ranked third; after 64 MiB of other
// writes 95-102, the default last, and the winner ran as fast as in weft-bench-conv next to oneDNN.
// Evicting the L2s alone changed nothing there: the L3 is what the other work takes.
//
//   CacheEvictor evict(threads, l2_bytes, l3_bytes);
//   evict();          // every thread of the team writes its own buffer
//   time(run);
#pragma once

#include <cstddef>
#include <vector>

namespace weft::tuner {

class CacheEvictor {
 public:
  // Up to 64 MiB of L3 is evicted: operating systems under a hypervisor often report the host's
  // whole L3 (320 MiB on the Zen 4 VM above) while a core shares 32 MiB with its complex.
  static constexpr std::size_t kMaxSharedBytes = std::size_t{32} << 20;

  // `threads` team threads (the OpenMP team the measured runs use); each writes twice its private
  // `l2_bytes` (0: 1 MiB) plus its share of twice min(`l3_bytes`, kMaxSharedBytes) (0: that cap).
  // Buffers are first touched by their threads.
  CacheEvictor(int threads, std::size_t l2_bytes, std::size_t l3_bytes);
  ~CacheEvictor();
  CacheEvictor(const CacheEvictor&) = delete;
  CacheEvictor& operator=(const CacheEvictor&) = delete;

  void operator()();
  std::size_t bytes_per_thread() const { return floats_per_thread_ * sizeof(float); }

 private:
  int threads_;
  std::size_t floats_per_thread_;
  std::vector<float*> buffers_;
  float pass_ = 0;  // changes every call, so every store changes its line
};

}  // namespace weft::tuner
