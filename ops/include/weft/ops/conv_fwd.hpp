// The forward convolution of PARLOOPER's conv_model_fwd.cpp, built the way a weft user builds it:
// a ThreadedLoop<7> over PARLOOPER's logical loops whose body calls BRGEMM kernels on blocked
// activations and filters (conv_layout.hpp).
//
//   ConvFwdConfig cfg;
//   cfg.loop_string = "Afgbdced";
//   cfg.shape = {.N = 1, .H = 56, .W = 56, .C = 64, .K = 64, .R = 3, .S = 3, .pad_h = 1, .pad_w = 1};
//   ConvFwd::check(cfg);                       // optional: throws what the constructor would, generates nothing
//   const ConvFwd conv(cfg);                   // validates, generates kernels and the loop nest
//   conv.run(input, filter, bias, output);     // conv.input_layout(), filter_layout(), output_layout()
//
// Loops: a = images, b = C blocks (step Cb / c_block: one batch-reduce chunk), c = K blocks
// (blocked by k_block), d = output rows (step h_in_gemm, blocked by h_block), e = output columns
// (step ofw / w_block), f = R, g = S. One body call computes a bk x (columns) output block:
//
// - Batch-reduce mode (physical padding, or no padding at all, or logical padding with
//   input_padding_copy): f and g step by R and S, so one call reduces over the chunk's C blocks and
//   every tap: strided over C blocks for 1x1 filters, over an offsets table of (C block, r, s)
//   otherwise. With h_in_gemm 1, an output row or column whose window reaches into the input's
//   rims reduces over the taps that read the image only (PARLOOPER's avoid_rim_fmas), so the rims
//   are never read: a row drops filter rows from its offset table; an edge column drops filter
//   columns and is computed down the image, one GEMM over the rows that drop the same filter
//   rows. With h_in_gemm > 1 the taps in the padding read the rims' zeros.
// - Per-tap mode (logical padding with padding and without input_padding_copy): the layouts have no
//   rims, f and g step by 1, and a call reduces one tap over the chunk's C blocks, with the output
//   columns clipped to those whose input pixel lies in the image and the rows outside it skipped.
//   An output block whose first (or last) tap is clipped gets a count = 0 call that writes zero (or
//   applies the bias / ReLU epilogue in place), so every output element is written exactly as the
//   reference defines it, for any R, S, stride and padding.
//
// In bf16 (ConvLoops::dtype) the tensors hold bf16 (the filter in VNNI-2 tiles, conv_layout.hpp)
// and the BRGEMMs accumulate in fp32 and round the output to bf16 on store: with c_block > 1 each
// chunk after the first reads the rounded output back, so an output is rounded once per chunk.
//
// The first chunk of an output block (b, f, g all at 0) uses beta = 0 (its first touch), the last
// one carries the fused bias and ReLU; the reduction loops must therefore run sequentially, in
// order, on the thread that owns the block (the constructor refuses loop strings that would not).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <weft/ops/conv_layout.hpp>
#include <weft/ops/element_type.hpp>
#include <weft/ops/conv_loops.hpp>
#include <weft/ops/pass_code.hpp>
#include <weft/parlooper/threaded_loop.hpp>
#include <weft/tpp/brgemm.hpp>
#include <weft/tpp/unary.hpp>

namespace weft::ops {

// PARLOOPER's forward arguments after bk, with its defaults.
struct ConvFwdConfig : ConvLoops {
  std::int64_t h_block = 1;    // block size of loop d (output rows) at its outer occurrence
  std::int64_t w_block = 1;    // the output columns are split into w_block GEMMs (step ceil(ofw / w_block))
  std::int64_t c_block = 1;    // the C blocks are split into c_block batch-reduce chunks
  std::int64_t k_block = 1;    // block size of loop c (K blocks) at its outer occurrence
  std::int64_t h_in_gemm = 1;  // output rows per GEMM (over the output's padded row pitch)
  bool pack_input = false;     // strided 1x1: gather the pixels read into a dense copy first
  bool logical_padding = false;
  bool input_padding_copy = false;  // logical padding: copy the input into a padded scratch per run
  // PARLOOPER's pad_h_in pad_w_in pad_h_out pad_w_out, the rims the blocked input and output hold.
  // They follow from logical_padding (physical: pad_h / pad_w; logical: 0): kFollowPadding takes
  // that, and a value that contradicts it is refused (as PARLOOPER does).
  static constexpr std::int64_t kFollowPadding = -1;
  std::int64_t pad_h_in = kFollowPadding, pad_w_in = kFollowPadding;
  std::int64_t pad_h_out = kFollowPadding, pad_w_out = kFollowPadding;
  bool zero_output_rims = false;  // the run also writes zeros into the output's rims
  // The output in plain N x K x P x Q (PyTorch's NCHW) instead of blocked: each call's GEMMs write
  // into a per-thread scratch of its output rows, which a transpose moves into the plain output
  // while it is in cache (a separate blocked_to_nchw reads and writes the whole output once more).
  // Needs the batch-reduce mode and c_block 1 (one call writes an output block whole: the
  // transpose comes after the last chunk), and no zero_output_rims (a plain output has no rims);
  // plain_output_pays() says whether a configuration gains by it. Edge columns are then computed
  // along their rows with every tap (reading the rims' zeros), not down the image.
  bool plain_output = false;
  bool with_bias = false;
  bool with_relu = false;
};

class ConvFwd {
 public:
  // Throws weft::Error (LoopStringError for the loop_string) naming what is wrong.
  explicit ConvFwd(ConvFwdConfig config) : ConvFwd(std::move(config), PassCode::build) {}

  // Throws the weft::Error the constructor throws for `config`, if any, and generates no code: the
  // constructor's own steps with the kernels planned instead of emitted and the loop nests parsed
  // instead of built (pass_code.hpp). Used to try tuned configurations (best_conv_config).
  static void check(const ConvFwdConfig& config);
  // Whether plain_output is worth setting on `config`: a 1x1 filter, and it may be set (batch-reduce
  // mode, c_block 1, no zero_output_rims). Measured inside weft.torch training steps (Intel Xeon
  // family 6 model 207, fp32, 2 threads, ResNet-50 layers at batch 2): the 1x1 64 -> 256 layer's
  // forward took 1.29-1.48 ms with it against 1.40-1.57 ms blocked plus blocked_to_nchw; the 3x3
  // 64 -> 64 layer's 1.89-2.03 against 1.62-2.00 ms (its output is half as large and its GEMMs
  // longer: the transposes cost what the conversion did, and disturb the GEMMs' cache). With edge
  // columns (computed along the rows with every tap) a 14 x 14 3x3 layer took 0.74-0.76x.
  static bool plain_output_pays(const ConvFwdConfig& config);

  // output = relu?(conv(input, filter) + bias?). input: input_layout() (its rims zero when it has
  // any), filter: filter_layout(), bias: K rounded up to whole bk blocks (blocked_bias), read only
  // with with_bias; output: output_layout(), whose rims (when it has any) are written with zeros
  // with zero_output_rims and left unspecified without. Every buffer holds elements of
  // config().dtype (floats, or bf16 with the filter in VNNI-2 tiles: filter_to_vnni2). Callable
  // many times; not by two threads at once on one ConvFwd when it uses a scratch buffer
  // (scratch_bytes() > 0).
  void run(const void* input, const void* filter, const void* bias, void* output) const;
  // The same on typed buffers (float for f32, jit::bfloat16 for bf16), which also checks that T is
  // config().dtype (the untyped form cannot see it). The bias may be nullptr.
  template <class T>
  void run(const T* input, const T* filter, const std::type_identity_t<T>* bias, T* output) const {
    require_buffers_of<T>(config_.dtype, "ConvFwd::run");
    run(static_cast<const void*>(input), static_cast<const void*>(filter), static_cast<const void*>(bias),
        static_cast<void*>(output));
  }

  const ConvFwdConfig& config() const { return config_; }
  const ActivationLayout& input_layout() const { return input_; }
  // With plain_output: N x K x P x Q as a layout of 1-channel blocks without rims (plain NCHW).
  const ActivationLayout& output_layout() const { return config_.plain_output ? plain_output_ : output_; }
  const FilterLayout& filter_layout() const { return filter_; }
  // Bytes of the scratch buffer run() allocates on its first call: the padded copy of the input
  // (input_padding_copy) or the packed input (pack_input), and with plain_output one call's output
  // rows per thread (of omp_get_max_threads(): a run on a larger team allocates anew); 0 without.
  std::uint64_t scratch_bytes() const;

  double flops() const { return config_.shape.flops(); }
  // Products summed per output element (the check's tolerance).
  std::int64_t reduction_terms() const { return config_.shape.C * config_.shape.R * config_.shape.S; }
  // The check's relative L2 tolerance against a double-precision reference on the same inputs: an
  // fp32 sum of reduction_terms() + 1 (bias) terms, and in bf16 the output's rounding to bf16 once
  // per call that writes it (each C chunk, and in the per-tap mode each tap, reads the rounded
  // output back): 2^-8, the spacing of bf16 relative to its value, per rounding (twice the largest
  // error of one, for the sums' cancellations).
  double tolerance() const;
  // "<loop_string>_hb=<h_block>_wb=<w_block>_cb=<c_block>_kb=<k_block>_hg=<h_in_gemm>_pu=<pack_input>
  // _threads<T>": PARLOOPER's tag with our samples' thread suffix.
  std::string measure_tag(int threads) const;
  bool per_tap() const { return per_tap_; }
  std::int64_t c_step() const { return c_step_; }  // C blocks per batch-reduce chunk
  std::int64_t w_step() const { return w_step_; }  // output columns per GEMM
  std::string render_loop() const { return loop_->render(); }

 private:
  ConvFwd(ConvFwdConfig config, PassCode code);
  // The kernel of a slot for the first chunk of an output block (beta = 0) / the last (epilogue).
  const tpp::Brgemm& kernel(std::int64_t slot, bool first, bool last) const {
    return kernels_[static_cast<std::size_t>(slot * 4 + (first ? 2 : 0) + (last ? 1 : 0))];
  }
  std::int64_t width_slot(std::int64_t width) const { return slot_of_width_[static_cast<std::size_t>(width)]; }
  void prepare_per_tap();
  void prepare_batch_reduce();
  // A slot of four kernels of `width` columns: along a row (ldc 0: bk; registered in
  // slot_of_width_ when that is in use, unless the width has one), or down a column (ldc given).
  // Adds their descriptors to kernel_descs_; the constructor makes kernels_ of them at the end.
  void add_kernels(std::int64_t width, tpp::BrgemmBatch batch, std::int64_t ldb, std::int64_t ldc = 0);
  void prepare_scratch(PassCode code);
  void prepare_plain_output(PassCode code);
  // plain_output: the elements of one thread's output rows (a call's, in the blocked geometry of
  // output_), rounded up to whole cache lines; and the transpose of one output row of a call,
  // [K block whole or last][column block whole or last].
  std::int64_t output_rows_elements() const;
  const tpp::Unary& row_transpose(bool last_k_block, bool last_col_block) const {
    return *row_transposes_[(last_k_block ? 2 : 0) + (last_col_block ? 1 : 0)];
  }
  // The passes over elements of type T (float, or jit::bfloat16 in bf16).
  template <class T>
  void run_typed(const T* input, const T* filter, const T* bias, T* output) const;
  template <class T>
  void run_batch_reduce(const T* b, const ActivationLayout& b_layout, const T* filter, const T* bias,
                        T* output) const;
  template <class T>
  void run_per_tap(const T* input, const T* filter, const T* bias, T* output) const;
  template <class T>
  void zero_rims(T* output, std::int64_t n, std::int64_t kb, std::int64_t oh, std::int64_t rows,
                 std::int64_t ow, std::int64_t cols) const;

  ConvFwdConfig config_;
  bool per_tap_ = false;
  std::int64_t c_blocks_ = 0, c_step_ = 0, w_step_ = 0;
  // output_: the blocked output the GEMMs compute, written by run() unless plain_output, whose
  // scratch rows take its geometry (and rims, which nothing reads); plain_output_: NCHW.
  ActivationLayout input_, output_, plain_output_, scratch_;  // scratch_: the padded or packed input, when used
  FilterLayout filter_;
  std::int64_t b_row_step_ = 1, b_col_step_ = 1;  // input rows / columns per output row / column
  std::vector<tpp::BrgemmDesc> kernel_descs_;
  std::vector<tpp::Brgemm> kernels_;  // of kernel_descs_; none in check()
  // Four kernels per slot ([first][last]). slot_of_width_[GEMM width] (-1: none) for GEMMs along a
  // row, except in the batch-reduce mode with h_in_gemm > 1 (slots 0 and 1, see row_pieces_).
  std::vector<std::int32_t> slot_of_width_;
  // Batch-reduce mode with R x S > 1: offset tables of (C block, r, s) per chunk, one per range of
  // filter rows and range of filter columns, tap_lists_[row range * col_ranges_ + column range];
  // range 0 is every tap. With h_in_gemm 1, output rows and columns whose window reaches into the
  // input's rims get the ranges without the taps that read them (PARLOOPER's avoid_rim_fmas: those
  // products multiply the rims' zeros), so rims are never read.
  struct TapList {
    std::int64_t taps_per_block = 0;  // entries per C block
    std::vector<std::int64_t> offsets_a, offsets_b;
  };
  std::vector<TapList> tap_lists_;
  std::vector<std::int32_t> row_range_of_row_;  // per output row
  std::int32_t col_ranges_ = 1;
  // Batch-reduce mode, column block ow / w_step: its GEMMs along the row, row_pieces_[
  // first_row_piece_[block] .. first_row_piece_[block + 1]) (the whole block, or with edge columns
  // the columns with every filter column; with h_in_gemm > 1 slot 0, and slot 1 for the last,
  // shorter block of rows), and its edge columns, edge_cols_[first_edge_col_[block] ..). Those are
  // GEMMs down the image: output row oh computes them for the edge_rows_[oh] rows up to it (0:
  // none), all rows of one range of filter rows, with the kernels of edge_slot_of_rows_[rows].
  struct Piece {
    std::int64_t col = 0;
    std::int32_t slot = 0, col_range = 0;
  };
  struct EdgeColumn {
    std::int64_t col = 0;
    std::int32_t col_range = 0;
  };
  std::vector<Piece> row_pieces_;
  std::vector<EdgeColumn> edge_cols_;
  std::vector<std::int32_t> first_row_piece_, first_edge_col_, edge_rows_, edge_slot_of_rows_;
  std::vector<std::int64_t> first_col_, end_col_;    // per-tap mode: output columns tap s reads in the image
  std::optional<tpp::Unary> prepare_kernel_;         // the scratch's copy (padding) or gather (packing)
  std::optional<parlooper::ThreadedLoop<3>> prepare_loop_;
  std::optional<parlooper::ThreadedLoop<7>> loop_;  // none in check()
  std::array<std::optional<tpp::Unary>, 4> row_transposes_;  // plain_output (none in check())
  // scratch_bytes(), whatever the element type: the input scratch, then the output rows.
  mutable std::vector<float> scratch_buffer_;
};

}  // namespace weft::ops
