#include <weft/ops/conv_model.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include <weft/jit/cpu.hpp>
#include <weft/jit/data_type.hpp>
#include <weft/jit/isa_traits.hpp>

namespace weft::ops {

namespace {

// Channel blocks: 64 where the channels allow it, else all of them (conv1's C = 3 in a block of 32
// would multiply 29 padding channels; 10 instead of 115 GFLOPS on Zen 4, 2026-11-23). 64 is
// PARLOOPER's block; on the Xeon below (AVX2 code) the 7x7 1x1 layers ran 0.98-0.99x oneDNN with it
// and h_in_gemm 7, 0.86-0.87x with the samples' old default of 32 and one row per GEMM. Backward by
// data, 64 / 64 with the C chunks below against the list's 32 / 32 (2026-11-27, same machine and
// method): 3x3 on 14x14 256 -> 256 0.81x -> 0.97x, 3x3 on 7x7 512 -> 512 0.79x -> 0.92x, 7x7
// 512 -> 2048 0.85x -> 0.92x; the 14x14 1x1 layers 0.90-0.91x -> 0.87-0.88x (within the noise).
constexpr std::int64_t kChannelBlock = 64;

// The block along the GEMM's rows (forward: K, backward by data: C) is one register row panel of
// the BRGEMM (ConvMachine::gemm_rows, channel_block's bound there): 64 with AVX-512, 32 with AVX2, whose 16 ymm registers hold
// a 4 x 3 tile (32 rows). A 64-row block there runs as two panels, each streaming the whole
// activation chunk through the tile again. Measured on AMD EPYC family 26 (Zen 5), WEFT_ISA=avx2
// against oneDNN jit:avx2 / jit_1x1:avx2, one thread, weft-bench-conv --clock=cpu, 2026-11-28, the
// model's choices with the rows' block 32 instead of 64 (the reduction's block 64 kept), same
// run: geometric means forward 0.957 -> 1.013, backward by data 0.975 -> 1.007; forward 56x56
// 256 -> 128 0.957 -> 0.974, backward 14x14 1024 -> 256 0.915 -> 0.993. Both blocks 32 gained less
// (0.922 -> 0.985, 0.935 -> 0.957 in a noisier run).

// Columns of one GEMM along the output rows: several rows of a small image in one GEMM (h_in_gemm)
// until about this many. Measured, Intel Xeon family 6 model 207, WEFT_ISA=avx2 against oneDNN
// jit_1x1:avx2, one thread, 2026-11-27: layer 7x7 2048 -> 512, h_in_gemm 7 (49 columns) 0.94x,
// h_in_gemm 1 (7 columns) 0.87x with the same blocks: the register tiles' 4-6 columns fill, the
// per-call overhead and the filter's trips through L1 fall by 7. A strided 1x1 filter gets there by
// packing its input (pack_input: the pixels it reads, gathered densely): 14x14 1024 -> 2048 with
// stride 2 (7x7 outputs) ran 0.84x unpacked with one row per GEMM, 0.92x packed with 7 (AVX2 code;
// AVX-512: 0.87x, 0.91x); at 28 and 14 output columns packing changed nothing beyond the noise.
constexpr std::int64_t kGemmColumns = 64;

// The share of L2 one GEMM's operands may take: the filter chunk is read once per column tile and
// the activation chunk once per row panel of the filter, so both should stay in L2 for the whole
// call, with room left for the output and what the hardware prefetchers bring in. Past it, a chunk
// streams from L3 on every tile: layer 7x7 2048 -> 512 in one chunk is 912 KB at 64 x 64 blocks,
// past the 512 KiB L2 of a Zen 3, where it ran 0.56x oneDNN (list settings, 2026-11-27). On the
// Xeon (2 MiB L2, AVX2 code, one thread, 2026-11-27) the same cause at 4x the channels: 7x7
// 8192 -> 512 ran 0.43x oneDNN in one chunk, 0.80x in 4, 0.85x in 16; 14x14 4096 -> 256 0.82x,
// 1.00x, 0.97x; 3x3 on 7x7 2048 -> 512 0.33x, 0.78x, 0.89x. A quarter of the L2 picks 8, 4 and 11
// chunks there; half of it picked 4, 2 and 6.
constexpr std::size_t kL2Share = 4;

// Backward by data at a stride, 1x1 filter: several grad_output rows per GEMM (the packed scatter:
// a dense scratch, stored or added into grad_input's strided pixels after each K chunk) where its
// rows are shorter than this. A 7-pixel row alone leaves the register tiles' columns half used
// (3 + 3 + 1 on AVX2); at 14 and 28 pixels the rows fill them, and the scatter's extra pass over
// grad_input per chunk costs more than it saves. Measured, AMD EPYC family 26 (Zen 5), one
// thread, weft-bench-conv --clock=cpu --min-time=1, 2026-11-28, the model's choice with one row
// per GEMM against packed rows, same run, weft / oneDNN: 14x14 1024 -> 2048 (7x7 outputs) 0.875x
// -> 0.926x with AVX2 code, 0.926x -> 0.938x AVX-512; 28x28 512 -> 1024 (14x14) 0.983x -> 0.949x,
// 0.974x -> 0.939x; 56x56 256 -> 512 (28x28) 1.024x -> 0.989x, 0.994x -> 0.941x.
constexpr std::int64_t kPackedScatterColumns = 8;

// Backward by weights on a team: images in parallel give each thread a partial filter, added up at
// the end, which costs about threads x the filter per image against images x pixels x the filter
// of multiply-adds; the C and K blocks in parallel need none, but split the GEMMs' outputs. Images
// win from 28x28 output pixels up. Measured, Intel Xeon family 6 model 207, 2 threads, N = 2,
// weft-bench-conv --clock=cpu, 2026-11-27, weft / oneDNN with images against C and K blocks in
// parallel: 7x7 layers 0.75-0.77x against 0.92-0.95x (AVX-512), 0.83-0.85x against 0.95-0.97x
// (AVX2 code); stride-2 layers with 7x7 outputs 0.74-1.08x against 0.91-1.40x; 14x14 0.90-0.92x
// against 0.93-0.99x (AVX-512), even with AVX2 code; 56x56 1x1 layers 0.88-0.94x against
// 0.80-0.90x.
constexpr std::int64_t kImagePixelsForImageParallel = 28 * 28;

// The update pass's channel blocks: the samples' default (PARLOOPER's list runs 32 as well).
constexpr std::int64_t kUpdateChannelBlock = 32;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::int64_t channel_block(std::int64_t channels, bool vnni_pairs, std::int64_t most = kChannelBlock) {
  const std::int64_t block = std::min(channels, most);
  return vnni_pairs ? block + block % 2 : block;
}

// A 1x1 filter without padding: each output pixel reads one input pixel.
bool pointwise(const ConvShape& s) { return s.R == 1 && s.S == 1 && s.pad_h == 0 && s.pad_w == 0; }

// Rows per GEMM for output rows of `columns` pixels, `rows` of them.
std::int64_t rows_for_columns(std::int64_t columns, std::int64_t rows) {
  return std::clamp<std::int64_t>(kGemmColumns / columns, 1, rows);
}

// Batch-reduce chunks over `blocks` reduction blocks: the fewest whose operands, `block_bytes` per
// reduction block, fit the L2 share.
std::int64_t reduction_chunks(std::int64_t blocks, std::int64_t block_bytes, const ConvMachine& machine) {
  const std::int64_t budget = static_cast<std::int64_t>(machine.l2_bytes / kL2Share);
  const std::int64_t step = std::clamp<std::int64_t>(budget / block_bytes, 1, blocks);
  return ceil_div(blocks, step);
}

// Of the (loop letter, trip count) options, the loop to run in parallel: the first whose count the
// team divides, else the one that leaves the threads least idle (a count of 0: not an option).
// One thread: the first.
char parallel_loop(const std::array<std::pair<char, std::int64_t>, 3>& options, int threads) {
  char best = options.front().first;
  if (threads <= 1) return best;
  double best_busy = 0;
  for (const auto& [letter, count] : options) {
    if (count <= 0) continue;  // not an option here
    // Busy share of the team: count / (rounds x threads).
    const double busy = static_cast<double>(count) / static_cast<double>(ceil_div(count, threads) * threads);
    if (busy > best_busy + 1e-9) best = letter, best_busy = busy;
  }
  return best;
}

// `order` (lower case, the sequential nest) with `parallel` upper-cased.
std::string with_parallel(std::string order, char parallel) {
  for (char& letter : order)
    if (letter == parallel - 'A' + 'a') letter = parallel;
  return order;
}

}  // namespace

ConvMachine ConvMachine::current() {
  ConvMachine m;
  const jit::CpuFeatures& cpu = jit::cpu_features();
  if (cpu.l2_bytes) m.l2_bytes = cpu.l2_bytes;
  // Four vectors of FP32 rows, as the BRGEMM's panels (BrgemmIsaDefaults::panel_vectors); 32 at the
  // least (Neon's 16 rows, SVE at 128 and 256 bits: the AVX2 entry, as the GEMM rule table does)
  // and 64 at the most (the measured blocks).
  const jit::IsaTraits& isa = jit::isa_traits(jit::selected_isa());
  m.gemm_rows = std::clamp<std::int64_t>(std::int64_t{isa.brgemm.panel_vectors} * isa.lanes(4), 32, 64);
  return m;
}

ConvFwdConfig model_conv_fwd_config(const ConvFwdConfig& problem, int threads, const ConvMachine& machine) {
  ConvFwdConfig c = problem;
  const ConvShape& s = c.shape;
  const bool bf16 = c.dtype == jit::DataType::bf16;
  c.bc = channel_block(s.C, bf16);  // bf16: the filter's VNNI-2 pairs run along C
  c.bk = channel_block(s.K, false, machine.gemm_rows);
  c.w_block = 1;
  c.k_block = 1;
  c.h_block = 1;
  c.pack_input = false;
  c.h_in_gemm = 1;
  // Several rows per GEMM compute the same products only where there are no padding taps (with
  // padding they would multiply the rims' zeros that one row per GEMM leaves out), and where one
  // output row steps the input by exactly one input row: stride 1, or a packed input.
  if (pointwise(s)) {
    const std::int64_t rows = rows_for_columns(s.ofw(), s.ofh());
    const bool strided = s.stride_h != 1 || s.stride_w != 1;
    if (!strided || (rows > 1 && !c.input_padding_copy)) c.h_in_gemm = rows, c.pack_input = strided;
  }

  // C chunks: as few as keep one GEMM's filter and input chunks within the L2 share.
  const std::int64_t element = static_cast<std::int64_t>(jit::size_of(c.dtype));
  const std::int64_t row_step = c.pack_input ? 1 : s.stride_h, col_step = c.pack_input ? 1 : s.stride_w;
  const std::int64_t rows_read = (c.h_in_gemm - 1) * row_step + s.R;
  const std::int64_t cols_read = (s.ofw() - 1) * col_step + s.S;
  const std::int64_t per_c_block = (c.bk * s.R * s.S + rows_read * cols_read) * c.bc * element;
  c.c_block = reduction_chunks(c.c_blocking().blocks(), per_c_block, machine);

  // Loops: the C chunks (b) outside the K blocks (c), rows and columns, so that each chunk's filter
  // serves every row before the next chunk's; images, K blocks or rows in parallel.
  const char parallel = parallel_loop(
      {{{'A', s.N}, {'C', c.k_blocking().blocks()}, {'D', ceil_div(s.ofh(), c.h_in_gemm)}}}, threads);
  c.loop_string = with_parallel("abcdefg", parallel);
  return c;
}

ConvBwdConfig model_conv_bwd_config(const ConvBwdConfig& problem, int threads, const ConvMachine& machine) {
  ConvBwdConfig c = problem;
  const ConvShape& s = c.shape;
  const bool bf16 = c.dtype == jit::DataType::bf16;
  c.bc = channel_block(s.C, bf16, machine.gemm_rows);
  c.bk = channel_block(s.K, bf16);  // bf16: the backward filter's VNNI-2 pairs run along K
  c.w_block = 1;
  c.c_block = 1;
  c.h_block = 1;
  c.h_in_gemm = 1;
  // Rows per GEMM as forward: grad_input rows at stride 1; at a larger stride grad_output rows
  // shorter than kPackedScatterColumns, whose GEMM writes a dense scratch that is then scattered
  // (the packed scatter, as the forward pass's pack_input).
  const bool stride_1 = s.stride_h == 1 && s.stride_w == 1;
  if (pointwise(s) && stride_1) c.h_in_gemm = rows_for_columns(s.W, s.H);
  if (pointwise(s) && !stride_1 && s.ofw() < kPackedScatterColumns) c.h_in_gemm = rows_for_columns(s.ofw(), s.ofh());

  // K chunks: as few as keep one GEMM's filter and grad_output chunks within the L2 share.
  const std::int64_t element = static_cast<std::int64_t>(jit::size_of(c.dtype));
  const std::int64_t rows_read = c.h_in_gemm + s.R - 1, cols_read = (stride_1 ? s.W : s.ofw()) + s.S - 1;
  const std::int64_t per_k_block = (c.bc * s.R * s.S + rows_read * cols_read) * c.bk * element;
  c.k_block = reduction_chunks(c.k_blocking().blocks(), per_k_block, machine);

  // Loops: the K chunks (c) outside the C blocks (b), rows and columns; images, C blocks or rows in
  // parallel. Rows: the GEMMs' (grad_input's at stride 1, grad_output's else), and only where two
  // of them never add into one grad_input row (a filter taller than the stride scatters
  // neighbouring rows' taps onto the same rows: the sample refuses that race), else no option (0).
  const std::int64_t rows = stride_1 ? s.H : s.R <= s.stride_h ? s.ofh() : 0;
  const char parallel =
      parallel_loop({{{'A', s.N}, {'B', c.c_blocking().blocks()}, {'D', ceil_div(rows, c.h_in_gemm)}}}, threads);
  c.loop_string = with_parallel("acbdefg", parallel);
  return c;
}

ConvUpdConfig model_conv_upd_config(const ConvUpdConfig& problem, int threads, const ConvMachine& machine) {
  ConvUpdConfig c = problem;
  const ConvShape& s = c.shape;
  c.bc = channel_block(s.C, c.dtype == jit::DataType::bf16, kUpdateChannelBlock);  // bf16: pairs along C
  c.bk = channel_block(s.K, false, kUpdateChannelBlock);
  // Output rows per batch reduce: as many as keep one GEMM's operands (per row, ofw pixels of a
  // bc-channel input block and of a bk-channel grad_output block) within the L2 share. All rows
  // of a 56x56 image (800 KB at 32 + 32 channels) stream from L3 on every tile. Measured, AMD EPYC
  // family 26 (Zen 5, 1 MiB L2: 18 rows), one thread, weft-conv-upd interleaved, 2026-11-28, 56
  // rows against 18: the four 56x56 1x1 layers 73-84 -> 84-94 GFLOPS with AVX2 code, 164-172 ->
  // 178-185 with AVX-512; conv1 (112 output rows, 16 per GEMM) 79-81 -> 95-96 and 91-95 ->
  // 117-119; 28x28 128 -> 512 (all 28 rows fit) 18 rows changed nothing.
  const std::int64_t element = static_cast<std::int64_t>(jit::size_of(c.dtype));
  const std::int64_t per_row = (c.bc + c.bk) * s.ofw() * element;
  c.h_in_gemm = std::clamp<std::int64_t>(static_cast<std::int64_t>(machine.l2_bytes / kL2Share) / per_row, 1, s.ofh());
  const std::int64_t channel_blocks = c.c_blocking().blocks() * c.k_blocking().blocks();
  const bool small_images = s.ofh() * s.ofw() < kImagePixelsForImageParallel;
  c.loop_string = threads > 1 && small_images && channel_blocks >= threads ? "aBCdefg" : "Abcdefg";
  return c;
}

}  // namespace weft::ops
