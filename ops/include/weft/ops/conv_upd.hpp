// Backward by weights of a convolution (PARLOOPER's conv_model_upd, FP32 or bf16): grad_filter from the
// input and grad_output, on ThreadedLoop<7> + BRGEMM.
//
//   ConvUpdConfig cfg;
//   cfg.loop_string = "Abcdefg";
//   cfg.shape = {.N = 2, .H = 56, .W = 56, .C = 64, .K = 64, .R = 3, .S = 3, .pad_h = 1, .pad_w = 1};
//   cfg.bc = cfg.bk = 32;
//   ConvUpd upd(cfg);                       // validates, generates the kernels, builds the loops
//   upd.run(input, grad_output, grad_filter);
//
// Layouts (conv_layout.hpp): input [N][C/bc][H + 2 pad_h][W + 2 pad_w][bc] with zero rims,
// grad_output [N][K/bk][ofh + 2 pad_h_out][ofw + 2 pad_w_out][bk] (no rims by default; the rims
// are read from nowhere: with the backward-by-data pass's, one blocked dy serves both passes),
// grad_filter [K/bk][C/bc][R][S][bc][bk].
//
// Loops (PARLOOPER's): a = N, b = C blocks, c = K blocks, d = output rows (step rows_per_gemm()),
// e = output columns (one step of ofw), f = R, g = S; a, d and e are the reduction. One body call
//
//   grad_filter tile (kb, cb, r, s) (bk x bc, ldc = bk)
//     += sum over its rows y of grad_output row y of (n, kb) (bk x ofw, lda = bk)
//                               x input pixels of (n, cb) read by tap (r, s) from row y, transposed
//
// is one BRGEMM with B transposed (B(x, c) = in[x stride_w bc + c]: ldb = stride_w bc) batched
// over the rows (stride_a one grad_output row, stride_b stride_h input rows).
//
// In bf16 (ConvLoops::dtype) input and grad_output hold bf16 and grad_filter comes out in bf16 as the
// forward pass takes it (tiles in VNNI-2 along C, filter_to_vnni2); bc must be even. Each run
// first lays the inputs out for the bf16 BRGEMM (upd_operands.hpp: input rows transposed, grad_output
// rows in VNNI-2 along pixels), sums in an fp32 grad_filter, and rounds it to bf16 once at the end
// (or, for fp32 master weights, writes those sums in f32 where the bf16 values would be).
//
// Accumulation: a tile is written by one thread, in loop order, when no reduction loop is split
// among threads and each thread keeps its tiles from one entry of the parallel loops to the next
// (a static schedule); then the first touch (n = 0, first rows) has beta = 0 and the others beta = 1.
// Otherwise (a parallel a, d or e, in collapse or grid mode; or a dynamic schedule inside a
// reduction loop) threads would add into the same tiles: with use_mb_par_f32 (PARLOOPER's
// default) each thread accumulates into its own copy of grad_filter (thread 0 into grad_filter
// itself; partial_sums.hpp), and a parallel reduction adds the copies into grad_filter, inside
// run(); without it the string is refused.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include <weft/jit/error.hpp>
#include <weft/ops/conv_layout.hpp>
#include <weft/ops/element_type.hpp>
#include <weft/ops/conv_loops.hpp>
#include <weft/ops/partial_sums.hpp>
#include <weft/ops/upd_operands.hpp>
#include <weft/parlooper/threaded_loop.hpp>
#include <weft/tpp/brgemm.hpp>

namespace weft::ops {

struct ConvUpdConfig : ConvLoops {
  // PARLOOPER's argument 16: 1 lets a loop string split the reduction among threads, with partial
  // filters; 0 accumulates into grad_filter directly and refuses such strings.
  bool use_mb_par_f32 = true;
  // Output rows per BRGEMM (its batch), the step of loop d: 0 picks all ofh rows, or 1 when the
  // loop string parallelizes d (which needs several iterations to share).
  std::int64_t h_in_gemm = 0;
  // PARLOOPER's pad_h_out / pad_w_out: the rims around each grad_output image in its blocked layout
  // (0..4096; their contents are never read). A layer gives the backward-by-data pass's
  // (ConvBwd::grad_output_layout()) so that one blocked copy of dy serves both passes.
  std::int64_t pad_h_out = 0, pad_w_out = 0;
};

class ConvUpd {
 public:
  // Throws weft::Error naming the argument (shape, blocks, h_in_gemm, the loop string, a string that
  // would race). The team is omp_get_max_threads() now: run() refuses a larger one.
  explicit ConvUpd(ConvUpdConfig config) : ConvUpd(std::move(config), PassCode::build) {}

  // Throws the weft::Error the constructor throws for `config` (with the same team), if any, and
  // generates no code: the constructor's own steps with the kernels planned instead of emitted and
  // the loop nests parsed instead of built (pass_code.hpp). Used to try tuned configurations
  // (best_conv_config).
  static void check(const ConvUpdConfig& config);

  // grad_filter = backward by weights of (input, grad_output); blocked buffers as above in
  // config().dtype, the input's rims and every padding channel zero. Outside any OpenMP parallel region.
  void run(const void* input, const void* grad_output, void* grad_filter) const;
  // The same on typed buffers (float for f32, jit::bfloat16 for bf16), which also checks that T is
  // config().dtype (the untyped form cannot see it).
  template <class T>
  void run(const T* input, const T* grad_output, T* grad_filter) const {
    require_buffers_of<T>(config_.dtype, "ConvUpd::run");
    run(static_cast<const void*>(input), static_cast<const void*>(grad_output), static_cast<void*>(grad_filter));
  }

  // A bf16 pass that writes grad_filter in f32: its fp32 sums unrounded, each where the bf16
  // grad_filter holds it (VNNI-2 tiles), the gradient of fp32 master weights kept in the bf16
  // filter's layout. Throws weft::Error unless the pass is bf16.
  void run(const jit::bfloat16* input, const jit::bfloat16* grad_output, float* grad_filter) const;

  const ConvUpdConfig& config() const { return config_; }
  ActivationLayout input_layout() const;
  ActivationLayout grad_output_layout() const;
  FilterLayout filter_layout() const;
  std::int64_t rows_per_gemm() const { return rows_; }
  // The BRGEMMs' reduction length per batch entry: ofw pixels; in bf16 rounded up to even, and a
  // whole image's (H x W, rounded up) for a 1x1 convolution of stride 1 without padding whose odd
  // rows a BRGEMM takes all at once (upd_operands.hpp).
  std::int64_t pixels_per_gemm_row() const { return first_touch_->desc().k; }
  // Whether run() accumulates into per-thread copies (and reduces them).
  bool uses_partial_filters() const { return partial_filters_.copies() > 1; }
  int team() const { return team_; }
  double flops() const { return config_.shape.flops(); }
  // Terms of each grad_filter sum (images x output pixels): what the check's tolerance scales with.
  std::int64_t reduction_length() const;
  // The check's relative L2 tolerance against a double-precision reference on the same inputs: the
  // fp32 sum's (sum_tolerance), and in bf16 2^-8 for grad_filter's one rounding to bf16.
  double tolerance() const;
  // "<loop_string>_hg=<rows>_mbpar=<0|1>_threads<T>[_bf16]"
  std::string measure_tag(int threads) const;
  // Bytes run() allocates itself (the partial filters; in bf16 the BRGEMMs' operands and the fp32 sums).
  std::uint64_t run_memory_bytes() const {
    return add_bytes(uses_partial_filters() ? partial_filters_.memory_bytes() : 0,
                     operands_ ? operands_->memory_bytes() : 0);
  }

 private:
  ConvUpd(ConvUpdConfig config, PassCode code);
  // grad_filter in config().dtype, or (bf16 passes) in f32.
  enum class FilterType { config, f32 };
  void run_into(const void* input, const void* grad_output, void* grad_filter, FilterType filter_type) const;

  ConvUpdConfig config_;
  int team_;
  std::int64_t rows_;
  std::optional<parlooper::ThreadedLoop<7>> loop_;  // none in check()
  std::optional<UpdOperands> operands_;             // bf16
  std::optional<tpp::Brgemm> first_touch_, accumulate_;  // beta = 0, beta = 1; none in check()
  PartialSums partial_filters_;

  // The BRGEMM loop over operands laid out as Operands says (fp32 in place, or UpdOperands), into
  // an fp32 grad_filter.
  template <class Operands>
  void accumulate(const Operands& operands, float* grad_filter) const;
};

}  // namespace weft::ops
