// A forward-GEMM configuration that measures well without tuning (AVX2, Zen 3: 0.99-1.03x OpenBLAS
// at 2048^3 on 1 and 2 threads; docs/gemm_sample.md), for benchmarks, the main job and the
// tuner's fallback when its database knows nothing better:
// - 32 x 48 x 64 tiles (bm x bn x bk); an MLP keeps bm == bk = 64;
// - batch reduces over 4 K blocks: the 32 x 256 A chunk a register tile streams stays in L1;
// - "aBcb" with M blocks grouped by up to 8 around the N loop: an A panel of 8 blocks stays in L2
//   while N sweeps, and the groups are shared among the threads ("abcb" on one thread).
// In bf16 (problem.dtype) the tiles are 64 x 128 x 64, the rest the same: a bf16 call does its
// multiply-adds in half the time of an FP32 one, so reading and rounding its output costs twice as
// much per FLOP, and larger tiles pay for it; the 64 x 256 bf16 A chunk still fits L1. Measured on
// Zen 4 (AVX512_BF16), 2048^3, 1 and 2 threads: 0.98-1.02x oneDNN's bf16 matmul, where 32 x 48 x 64
// gave 0.94-0.99x (docs/gemm_sample.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gemm_fwd.hpp"

namespace weft::samples {

// `problem` gives M, N, K, n_layers and the epilogue (kept); the rest is replaced.
GemmFwdConfig recommended_gemm_config(const GemmFwdConfig& problem, int threads);

// Parts of a configuration given by hand over a chosen one (the benchmarks' --loop= --bm= ...
// flags): an empty string or a 0 keeps the chosen value; a loop string brings its own block lists
// (empty: PARLOOPER's defaults), since the chosen ones belong to the chosen string.
struct GemmConfigOverride {
  std::string loop_string;
  std::int64_t bm = 0, bn = 0, bk = 0, kbf = 0;
  std::vector<long> k_blocks, m_blocks, n_blocks;

  void apply(GemmFwdConfig& config) const;
};

}  // namespace weft::samples
