// The bf16 update's BRGEMM operands (ConvUpd in bf16), made from the pass's blocked bf16 tensors at
// the start of every run, and its fp32 accumulator of grad_filter, rounded into the forward pass's
// VNNI-2 tiles at the end.
//
// Why new layouts: the fp32 update multiplies grad_output rows (bk x ofw, A) by input pixels read
// as a transposed B (ofw x bc, B(x, c) = in[x stride_w bc + c]). The bf16 BRGEMM has neither a
// transposed B nor a way to pair pixels of a row otherwise: its A must hold pairs along the
// reduction (pixels) side by side (VNNI-2), and its B must hold pixels contiguously per channel.
//
//   grad_output  [N][K/bk][ofh][k/2][bk][2]   VNNI-2 along pixels; k = ofw rounded up to even, the
//                                             extra pixel zero (an odd ofw: 7 in ResNet-50)
//   input        [N][C/bc][padded_h][stride_w][bc][wq]
//                                             each padded row transposed, its pixels split by phase
//                                             x % stride_w: pixel x of phase p is column x / stride_w
//
// Tap s of an output row reads B(x, c) = input pixel x stride_w + s = column x + s / stride_w of
// phase s % stride_w: unit stride along the reduction for every stride. wq leaves room for the
// extra pixel (k + (S - 1) / stride_w columns); columns past a phase's pixels stay zero, so the
// extra pixel multiplies zeros by zeros.
//
//   UpdOperands operands(shape, input_layout, grad_output_layout, filter_layout);
//   operands.prepare(input, grad_output);            // every run, outside parallel regions
//   ... BRGEMMs: A = grad_output_row(n, kb, y), B = input_tap(n, cb, y, s), C in accumulator() ...
//   operands.finish(grad_filter);                    // fp32 tiles -> bf16 VNNI-2 tiles
//
// The shape and layouts are the ones the BRGEMMs see: ConvUpd gives a 1x1 convolution of stride 1
// without padding as one row of H x W pixels per image where that saves work (conv_upd.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include <weft/jit/bfloat16.hpp>
#include <weft/ops/conv_layout.hpp>
#include <weft/ops/conv_shape.hpp>
#include <weft/ops/pass_code.hpp>
#include <weft/parlooper/threaded_loop.hpp>
#include <weft/tpp/unary.hpp>

namespace weft::ops {

class UpdOperands {
 public:
  // Needs an even bc (the filter's VNNI-2 pairs run along C; ConvLoops::validate checks it, and the
  // rounding TPP refuses an odd one too). With PassCode::check the kernels and loops are planned
  // only (pass_code.hpp): the sizes below hold, prepare() and finish() must not be called.
  UpdOperands(const ConvShape& shape, const ActivationLayout& input, const ActivationLayout& grad_output,
              const FilterLayout& filter, PassCode code = PassCode::build);

  // Transposes the input's rows the update reads and packs grad_output's rows (both blocked, bf16);
  // allocates the buffers on the first call. Opens its own parallel regions.
  void prepare(const void* input, const void* grad_output) const;
  // fp32 accumulator tiles -> grad_filter (bf16, VNNI-2 tiles as filter_to_vnni2), in parallel.
  void finish(void* grad_filter) const;
  // The same tiles unrounded: grad_filter in f32, each value where the bf16 one would be.
  void finish_f32(float* grad_filter) const;

  // The BRGEMM's reduction length (pixels per output row, even) and leading dimensions / strides in
  // elements: A (grad_output rows) lda = bk, one output row apart by a_row(); B ldb = wq(), the
  // input rows of consecutive output rows b_rows() apart.
  std::int64_t pixels() const { return pixels_; }
  std::int64_t wq() const { return wq_; }
  std::int64_t a_row() const { return pixels_ * grad_output_.channels.block; }
  std::int64_t b_rows() const { return shape_.stride_h * input_row_; }
  // Output rows in the BRGEMM batch that starts at row y, of `rows` (fewer at the last rows).
  std::int64_t batch(std::int64_t y, std::int64_t rows) const { return std::min(rows, grad_output_.h - y); }
  const jit::bfloat16* grad_output_row(std::int64_t n, std::int64_t kb, std::int64_t y) const {
    return packed_.data() + ((n * grad_output_.channels.blocks() + kb) * grad_output_.h + y) * a_row();
  }
  // B of tap (r, s) for output row y: input row y stride_h + r, phase s % stride_w, column s / stride_w.
  const jit::bfloat16* input_tap(std::int64_t n, std::int64_t cb, std::int64_t y, std::int64_t r,
                                 std::int64_t s) const {
    const std::int64_t row = (n * input_.channels.blocks() + cb) * input_.padded_h() + y * shape_.stride_h + r;
    return transposed_.data() + row * input_row_ + (s % shape_.stride_w) * input_.channels.block * wq_ +
           s / shape_.stride_w;
  }
  float* accumulator() const { return accumulator_.data(); }

  // Bytes prepare() allocates.
  std::uint64_t memory_bytes() const;

 private:
  ConvShape shape_;
  ActivationLayout input_, grad_output_;
  FilterLayout filter_;
  std::int64_t pixels_, wq_, input_row_, rows_read_;
  // The kernels and loops: none in check mode.
  std::vector<tpp::Unary> transpose_phase_;  // per phase: bc x (its pixels) -> (its pixels) x bc
  std::optional<tpp::Unary> pack_;           // a grad_output row's even part into VNNI-2 (none when ofw = 1)
  std::optional<tpp::Unary> round_tile_;     // an fp32 bk x bc tile -> bf16 VNNI-2 along C
  std::optional<parlooper::ThreadedLoop<3>> input_rows_, output_rows_;  // (n, channel block, row) in parallel
  std::optional<parlooper::ThreadedLoop<1>> tiles_;
  mutable std::vector<jit::bfloat16> transposed_, packed_;
  mutable std::vector<float> accumulator_;
};

}  // namespace weft::ops
