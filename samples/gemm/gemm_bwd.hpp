// Backward by data of the forward GEMM: dX = W^T x dY, on ThreadedLoop + BRGEMM, with loops
// a = K blocks, b = M blocks (the reduction, stepping by batch-reduce chunks), c = N blocks.
//
//   GemmBwdConfig cfg{.loop_string = "aBC", .M = 512, .N = 512, .K = 512};
//   GemmBwd bwd(cfg);
//   bwd.run(weight, grad_out, grad_in);
//
// Layouts (blocked_layout.hpp): W [Mb][Kb][bk][bm] (the forward's A), dY [Nb][Mb][bn][bm] (the
// forward's C), dX [Nb][Kb][bn][bk] (the forward's B). BRGEMM needs W^T tiles: either transposed
// up front by a parallel loop into one shared [Kb][Mb][bm][bk] buffer, or (private_trans) by each
// thread on first use into its own copy, which needs no barrier between the two phases but costs
// a copy of W per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <weft/parlooper/threaded_loop.hpp>
#include <weft/tpp/unary.hpp>

#include "blocked_layout.hpp"
#include "brgemm_table.hpp"
#include "private_tiles.hpp"

namespace weft::samples {

struct GemmBwdConfig {
  std::string loop_string = "aBC";
  std::int64_t M = 0, N = 0, K = 0;
  std::int64_t bm = 32, bn = 32, bk = 32;
  std::int64_t mbf = 1;        // the M (reduction) loop is split into mbf batch-reduce chunks
  bool private_trans = false;  // transpose W per thread on first use instead of up front
  std::vector<long> k_blocks, m_blocks, n_blocks;  // as in GemmFwdConfig
};

class GemmBwd {
 public:
  explicit GemmBwd(GemmBwdConfig config);  // throws weft::Error

  void run(const float* weight, const float* grad_out, float* grad_in) const;

  const GemmBwdConfig& config() const { return config_; }
  Blocking m_blocking() const { return {config_.M, config_.bm}; }
  Blocking n_blocking() const { return {config_.N, config_.bn}; }
  Blocking k_blocking() const { return {config_.K, config_.bk}; }
  double flops() const;
  // PARLOOPER's tag: "<loop_string>_<M>_<N>_<K>_<bm>_<bn>_<bk>_bf<mbf>_threads<T>_private_wt_trans<0|1>".
  std::string measure_tag(int threads) const;
  // Bytes run() allocates itself (W^T tiles: one shared copy, or one per thread), for a team of
  // `threads`.
  std::uint64_t run_memory_bytes(int threads) const;

 private:
  GemmBwdConfig config_;
  std::int64_t m_step_;
  tpp::Unary transpose_;  // one W tile (bm x bk) -> its transpose (bk x bm)
  BrgemmTable kernels_;
  parlooper::ThreadedLoop<2> transpose_loop_;  // (Mb, Kb), "AB"
  parlooper::ThreadedLoop<3> loop_;
  // Up-front transposes; or, with private_trans, one copy per thread plus a per-thread record of
  // which K block columns it has transposed in the current run.
  mutable std::vector<float> shared_transposed_;
  mutable PrivateTiles private_;
};

}  // namespace weft::samples
