#include <weft/ops/upd_operands.hpp>

#include <algorithm>
#include <string>

#include <weft/jit/error.hpp>

#include "vnni2_f32.hpp"

namespace weft::ops {
namespace {

constexpr tpp::DataTypes kBf16{.in = jit::DataType::bf16, .out = jit::DataType::bf16, .compute = jit::DataType::f32};

std::size_t index(std::int64_t i) { return static_cast<std::size_t>(i); }

// Pixels of a padded row of width `w` in phase p of `stride`: x = p, p + stride, ... < w.
std::int64_t phase_pixels(std::int64_t w, std::int64_t stride, std::int64_t p) { return (w - p + stride - 1) / stride; }

std::optional<parlooper::ThreadedLoop<3>> rows_loop(std::int64_t images, std::int64_t blocks, std::int64_t rows,
                                                    PassCode code) {
  return make_loop<3>({parlooper::LoopSpecs{0L, static_cast<long>(images)},
                       parlooper::LoopSpecs{0L, static_cast<long>(blocks)},
                       parlooper::LoopSpecs{0L, static_cast<long>(rows)}},
                      "ABC", code);
}

}  // namespace

UpdOperands::UpdOperands(const ConvShape& shape, const ActivationLayout& input, const ActivationLayout& grad_output,
                         const FilterLayout& filter, PassCode code)
    : shape_(shape),
      input_(input),
      grad_output_(grad_output),
      filter_(filter),
      pixels_((shape.ofw() + 1) / 2 * 2),
      // Room for every phase's pixels and for the last tap's reach past the even pixel count.
      wq_(std::max(phase_pixels(input.padded_w(), shape.stride_w, 0), pixels_ + (shape.S - 1) / shape.stride_w)),
      input_row_(shape.stride_w * input.channels.block * wq_),
      rows_read_(std::min(input.padded_h(), (shape.ofh() - 1) * shape.stride_h + shape.R)),
      round_tile_(make_kernel<tpp::Unary>(
          {.op = tpp::UnaryOp::vnni2_pack, .m = filter.k.block, .n = filter.c.block, .ld_in = filter.k.block,
           .ld_out = filter.k.block,
           .types = {.in = jit::DataType::f32, .out = jit::DataType::bf16, .compute = jit::DataType::f32}},
          code)),
      input_rows_(rows_loop(input.images, input.channels.blocks(), rows_read_, code)),
      output_rows_(rows_loop(grad_output.images, grad_output.channels.blocks(), grad_output.h, code)),
      tiles_(make_loop<1>({parlooper::LoopSpecs{0L, static_cast<long>(filter.size() / (filter.c.block * filter.k.block))}},
                          "A", code)) {
  const std::int64_t bc = input.channels.block, bk = grad_output.channels.block;
  std::vector<tpp::UnaryDesc> phases;
  for (std::int64_t p = 0; p < shape.stride_w; ++p) {
    phases.push_back(tpp::UnaryDesc{.op = tpp::UnaryOp::transpose, .m = bc,
                                    .n = phase_pixels(input.padded_w(), shape.stride_w, p),
                                    .ld_in = shape.stride_w * bc, .ld_out = wq_, .types = kBf16});
  }
  transpose_phase_ = make_kernels<tpp::Unary>(phases, code);
  const std::int64_t even = shape.ofw() / 2 * 2;
  if (even > 0)
    pack_ = make_kernel<tpp::Unary>({.op = tpp::UnaryOp::vnni2_pack, .m = bk, .n = even, .ld_in = bk, .ld_out = bk,
                                     .types = kBf16},
                                    code);
}

void UpdOperands::prepare(const void* input, const void* grad_output) const {
  // Zero-filled once: the columns past a phase's pixels and the extra pixel of an odd ofw are never
  // written again.
  if (transposed_.empty()) {
    transposed_.resize(index(input_.images * input_.channels.blocks() * input_.padded_h() * input_row_));
    packed_.resize(index(grad_output_.images * grad_output_.channels.blocks() * grad_output_.h * a_row()));
    accumulator_.resize(index(filter_.size()));
  }
  const auto* in = static_cast<const jit::bfloat16*>(input);
  const std::int64_t bc = input_.channels.block, phase_size = bc * wq_;
  (*input_rows_)([&](int* ind) {
    const std::int64_t n = ind[0], cb = ind[1], y = ind[2];
    const jit::bfloat16* row = in + input_.offset(n, cb, y, 0);
    jit::bfloat16* out = transposed_.data() + ((n * input_.channels.blocks() + cb) * input_.padded_h() + y) * input_row_;
    for (std::int64_t p = 0; p < shape_.stride_w; ++p)
      transpose_phase_[index(p)](tpp::UnaryArgs{.in = row + p * bc, .out = out + p * phase_size});
  });

  const auto* dy = static_cast<const jit::bfloat16*>(grad_output);
  const std::int64_t bk = grad_output_.channels.block, ofw = grad_output_.w;
  (*output_rows_)([&](int* ind) {
    const std::int64_t n = ind[0], kb = ind[1], y = ind[2];
    const jit::bfloat16* row = dy + grad_output_.offset(n, kb, y + grad_output_.pad_h, grad_output_.pad_w);
    jit::bfloat16* out = packed_.data() + ((n * grad_output_.channels.blocks() + kb) * grad_output_.h + y) * a_row();
    if (pack_) (*pack_)(tpp::UnaryArgs{.in = row, .out = out});
    // An odd ofw: the last pixel pairs with the zero extra one; bk elements, too few for a kernel.
    if (ofw % 2 != 0) {
      const jit::bfloat16* last = row + (ofw - 1) * bk;
      jit::bfloat16* pair = out + (ofw - 1) * bk;
      for (std::int64_t k = 0; k < bk; ++k) pair[2 * k] = last[k];
    }
  });
}

void UpdOperands::finish(void* grad_filter) const {
  const std::int64_t tile = filter_.c.block * filter_.k.block;
  auto* out = static_cast<jit::bfloat16*>(grad_filter);
  (*tiles_)([&](int* ind) {
    const std::int64_t t = ind[0];
    (*round_tile_)(tpp::UnaryArgs{.in = accumulator_.data() + t * tile, .out = out + t * tile});
  });
}

void UpdOperands::finish_f32(float* grad_filter) const {
  const std::int64_t bk = filter_.k.block, bc = filter_.c.block, tile = bk * bc;
  (*tiles_)([&](int* ind) {
    const std::int64_t t = ind[0];
    detail::vnni2_order_f32(accumulator_.data() + t * tile, bk, bc, grad_filter + t * tile);
  });
}

std::uint64_t UpdOperands::memory_bytes() const {
  return add_bytes(add_bytes(bytes_needed({input_.images, input_.channels.blocks(), input_.padded_h(), input_row_}, 2),
                             bytes_needed({grad_output_.images, grad_output_.channels.blocks(), grad_output_.h,
                                           a_row()},
                                          2)),
                   bytes_needed({filter_.size()}, sizeof(float)));
}

}  // namespace weft::ops
