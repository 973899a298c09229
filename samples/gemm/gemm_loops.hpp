// What the GEMM samples (forward, backward by data, backward by weights) have in common: the
// configuration of their loops a = K blocks, b = M blocks, c = N blocks, and the accessors every
// pass offers on it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <weft/parlooper/threaded_loop.hpp>

#include "blocked_layout.hpp"

namespace weft::samples {

// The base of every GEMM sample's configuration.
struct GemmLoops {
  std::string loop_string = "aBC";
  std::int64_t M = 0, N = 0, K = 0;
  std::int64_t bm = 32, bn = 32, bk = 32;
  // Block sizes of the loops' outer occurrences in the loop_string, in units of blocks, outermost
  // first. Empty: PARLOOPER's rule (products of the first prime factors of the trip counts).
  std::vector<long> k_blocks, m_blocks, n_blocks;

  Blocking m_blocking() const { return {M, bm}; }
  Blocking n_blocking() const { return {N, bn}; }
  Blocking k_blocking() const { return {K, bk}; }
  double flops() const;  // 2 M N K

  // Throws weft::Error unless the sizes, the tiles and `chunks` (the sample's name for the number
  // of batch-reduce chunks of its reduction, e.g. "kbf") are positive. Returns the step of the
  // reduction loop over `reduction`: blocks per chunk.
  std::int64_t validated_step(const char* chunks_name, std::int64_t chunks, const Blocking& reduction) const;
  // The ThreadedLoop<3> over (K, M, N) blocks with these steps.
  parlooper::ThreadedLoop<3> make_loop(const std::array<std::int64_t, 3>& steps) const;
  // "<loop_string>_<M>_<N>_<K>_<bm>_<bn>_<bk>_bf<chunks>_threads<T>", PARLOOPER's MEASURE tag.
  std::string measure_tag(std::int64_t chunks, int threads) const;
};

// What every GEMM pass offers on its configuration.
template <class Config>
class GemmPass {
 public:
  const Config& config() const { return config_; }
  Blocking m_blocking() const { return config_.m_blocking(); }
  Blocking n_blocking() const { return config_.n_blocking(); }
  Blocking k_blocking() const { return config_.k_blocking(); }

 protected:
  explicit GemmPass(Config config) : config_(std::move(config)) {}
  Config config_;
};

}  // namespace weft::samples
