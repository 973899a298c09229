#include "conv_fwd_model.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include <weft/jit/cpu.hpp>

#include <weft/jit/data_type.hpp>

namespace weft::samples {

namespace {

// Channel blocks: 64 where the channels allow it, else all of them (conv1's C = 3 in a block of 32
// would multiply 29 padding channels; 10 instead of 115 GFLOPS on Zen 4, 2026-11-23). 64 is
// PARLOOPER's block; on the Xeon below (AVX2 code) the 7x7 1x1 layers ran 0.98-0.99x oneDNN with it
// and h_in_gemm 7, 0.86-0.87x with the samples' old default of 32 and one row per GEMM.
constexpr std::int64_t kChannelBlock = 64;

// Columns of one GEMM along the output rows: several rows of a small image in one GEMM (h_in_gemm)
// until about this many. Measured, Intel Xeon family 6 model 207, WEFT_ISA=avx2 against oneDNN
// jit_1x1:avx2, one thread, 2026-11-27: layer 7x7 2048 -> 512, h_in_gemm 7 (49 columns) 0.94x,
// h_in_gemm 1 (7 columns) 0.87x with the same blocks: the register tiles' 4-6 columns fill, the
// per-call overhead and the filter's trips through L1 fall by 7.
constexpr std::int64_t kGemmColumns = 64;

// The share of L2 one GEMM's operands may take: the filter chunk is read once per column tile and
// the input chunk once per row panel of the filter, so both should stay in L2 for the whole call,
// with room left for the output and what the hardware prefetchers bring in. Past it, a chunk
// streams from L3 on every tile: layer 7x7 2048 -> 512 in one chunk is 912 KB at 64 x 64 blocks,
// past the 512 KiB L2 of a Zen 3, where it ran 0.56x oneDNN (list settings, 2026-11-27). On the
// Xeon (2 MiB L2, AVX2 code, one thread, 2026-11-27) the same cause at 4x the channels: 7x7
// 8192 -> 512 ran 0.43x oneDNN in one chunk, 0.80x in 4, 0.85x in 16; 14x14 4096 -> 256 0.82x,
// 1.00x, 0.97x; 3x3 on 7x7 2048 -> 512 0.33x, 0.78x, 0.89x. A quarter of the L2 picks 8, 4 and 11
// chunks there; half of it picked 4, 2 and 6.
constexpr std::size_t kL2Share = 4;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

bool takes_rows_per_gemm(const ConvFwdConfig& c) {
  // Several rows per GEMM compute the same products only where there are no padding taps (with
  // padding they would multiply the rims' zeros that one row per GEMM leaves out), and where one
  // output row steps the input by exactly one input row (stride 1, equal pitches).
  const ConvShape& s = c.shape;
  return s.R == 1 && s.S == 1 && s.stride_h == 1 && s.stride_w == 1 && s.pad_h == 0 && s.pad_w == 0;
}

// The loop to run in parallel: images (A), K blocks (C) or output rows (D), the
// first whose count the team divides, else the one that leaves the threads least idle.
char parallel_loop(const ConvFwdConfig& c, int threads, std::int64_t row_steps) {
  const std::array<std::pair<char, std::int64_t>, 3> options{
      {{'A', c.shape.N}, {'C', c.k_blocking().blocks()}, {'D', row_steps}}};
  if (threads <= 1) return 'A';
  char best = 'A';
  double best_busy = 0;
  for (const auto& [letter, count] : options) {
    // Busy share of the team: count / (rounds x threads).
    const double busy = static_cast<double>(count) / static_cast<double>(ceil_div(count, threads) * threads);
    if (busy > best_busy + 1e-9) best = letter, best_busy = busy;
  }
  return best;
}

}  // namespace

ConvMachine ConvMachine::current() {
  ConvMachine m;
  const jit::CpuFeatures& cpu = jit::cpu_features();
  if (cpu.l2_bytes) m.l2_bytes = cpu.l2_bytes;
  return m;
}

ConvFwdConfig model_conv_fwd_config(const ConvFwdConfig& problem, int threads, const ConvMachine& machine) {
  ConvFwdConfig c = problem;
  const ConvShape& s = c.shape;
  c.bc = std::min(s.C, kChannelBlock);
  c.bk = std::min(s.K, kChannelBlock);
  // bf16: the filter's VNNI-2 pairs run along C.
  if (c.dtype == jit::DataType::bf16) c.bc += c.bc % 2;
  c.w_block = 1;
  c.k_block = 1;
  c.h_block = 1;
  c.pack_input = false;
  c.h_in_gemm = 1;
  if (takes_rows_per_gemm(c)) c.h_in_gemm = std::clamp<std::int64_t>(kGemmColumns / s.ofw(), 1, s.ofh());

  // C chunks: as few as keep one GEMM's filter and input chunks within the L2 share.
  const std::int64_t element = static_cast<std::int64_t>(jit::size_of(c.dtype));
  const std::int64_t rows_read = (c.h_in_gemm - 1) * s.stride_h + s.R;
  const std::int64_t cols_read = (s.ofw() - 1) * s.stride_w + s.S;
  const std::int64_t per_c_block = (c.bk * s.R * s.S + rows_read * cols_read) * c.bc * element;
  const std::int64_t budget = static_cast<std::int64_t>(machine.l2_bytes / kL2Share);
  const std::int64_t c_blocks = c.c_blocking().blocks();
  const std::int64_t c_step = std::clamp<std::int64_t>(budget / per_c_block, 1, c_blocks);
  c.c_block = ceil_div(c_blocks, c_step);

  // Loops: the C chunks outside the K blocks, rows and columns (each chunk's filter is used for
  // every row before the next chunk's), one parallel loop that keeps the team busy.
  const char parallel = parallel_loop(c, threads, ceil_div(s.ofh(), c.h_in_gemm));
  c.loop_string = parallel == 'A' ? "Abcdefg" : parallel == 'C' ? "abCdefg" : "abcDefg";
  return c;
}

}  // namespace weft::samples
