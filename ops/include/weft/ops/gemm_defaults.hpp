// The forward GEMM's untuned configuration: a rule table keyed on the machine's vector width (the
// ISA weft generates code for), each entry with the measurement it comes from; for benchmarks, the
// main job and `auto` when the tuning database knows nothing better:
// - tiles bm x 48 x 64 (bm x bn x bk), bm four vectors of rows: the BRGEMM's row panel, so that one
//   register tile covers a block's rows (AVX2: 32 rows, 4 x 3 tiles of ymm; AVX-512: 64 rows, 4 x 6
//   tiles of zmm); an MLP keeps bm == bk = 64;
// - batch reduces over chunks of K blocks whose A chunk (bm rows) the kernels' tiles stream from
//   the nearest cache that holds it: 4 blocks on AVX2 (32 x 256 floats, 32 KiB: Zen 3's L1), 8 on
//   AVX-512 (64 x 512, 128 KiB of L2);
// - "aBcb" with M blocks grouped by up to 8 around the N loop: an A panel of 8 blocks stays in L2
//   while N sweeps, and the groups are shared among the threads ("abcb" on one thread).
// Measured: AVX2 on Zen 3, 2048^3, 0.99-1.03x OpenBLAS on 1 and 2 threads (2026-11-22); AVX-512 on
// an Intel Xeon (family 6 model 207, 2 cores, 2026-11-27), interleaved with oneDNN's and OpenBLAS's
// sgemm: 64 x 48 x 64 in chunks of 8 blocks against 32 x 48 x 64 in chunks of 4, 1024^3 and 2048^3
// on 1 and 2 threads, 0.98 / 0.96 / 1.00 / 0.94x oneDNN against 0.95 / 0.93 / 0.98 / 0.93x
// (docs/gemm_sample.md). Zen 4 (AVX-512 on 256-bit pipes) ran the AVX2 entry's tiles at 0.91-1.09x
// oneDNN (2026-11-23) and has not run the AVX-512 entry yet.
// In bf16 (problem.dtype) the tiles are 64 x 128 x 64, the rest as AVX2's: a bf16 call does its
// multiply-adds in half the time of an FP32 one, so reading and rounding its output costs twice as
// much per FLOP, and larger tiles pay for it; the 64 x 256 bf16 A chunk still fits L1. Measured on
// Zen 4 (AVX512_BF16), 2048^3, 1 and 2 threads: 0.98-1.02x oneDNN's bf16 matmul, where 32 x 48 x 64
// gave 0.94-0.99x (docs/gemm_sample.md).
// In f64 the tiles are FP32's with half the rows (four vectors of 4 or 8 doubles: 16 x 48 x 64 on
// AVX2, 32 x 48 x 64 on AVX-512), K chunked as in FP32 (the same bytes of A per chunk); an MLP
// keeps bm == bk = 64.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <weft/ops/gemm_fwd.hpp>

namespace weft::ops {

// What the rule table needs to know of the machine.
struct GemmMachine {
  int vector_bytes = 32;  // of the ISA weft generates code for: 64 takes the AVX-512 entry
  // From jit::selected_isa() (WEFT_ISA may choose a narrower one).
  static GemmMachine current();
};

// `problem` gives M, N, K, n_layers, the data type and the epilogue (kept); the rest is replaced.
GemmFwdConfig recommended_gemm_config(const GemmFwdConfig& problem, int threads,
                                      const GemmMachine& machine = GemmMachine::current());

// Parts of a configuration given by hand over a chosen one (the benchmarks' --loop= --bm= ...
// flags): an empty string or a 0 keeps the chosen value; a loop string brings its own block lists
// (empty: PARLOOPER's defaults), since the chosen ones belong to the chosen string.
struct GemmConfigOverride {
  std::string loop_string;
  std::int64_t bm = 0, bn = 0, bk = 0, kbf = 0;
  std::vector<long> k_blocks, m_blocks, n_blocks;

  void apply(GemmFwdConfig& config) const;
};

}  // namespace weft::ops
