// The blocked layouts of PARLOOPER's convolution samples, and their conversions from and to the
// plain NCHW / KCRS tensors users hold:
//
//   activations  [N][C / bc][H + 2 pad_h][W + 2 pad_w][bc]   (K / bk and bk for outputs)
//   filters      [K / bk][C / bc][R][S][bc][bk]
//
// Why: a channel block of one pixel is a contiguous vector, so a row of output pixels of one block
// is a column-major bk x ofw matrix (ldc = bk), the input pixels it reads are a bc x ofw matrix
// (ldb = bc * stride_w), and a filter tap is a bk x bc matrix (lda = bk): one BRGEMM per output
// row (or several rows), reducing over channel blocks and taps.
//
// Physical padding: the rims (pad_h rows above and below, pad_w columns left and right) are stored
// and hold zeros, so taps that fall outside the image read zeros instead of branching. With logical
// padding the layout has no rims (pad 0) and the kernels skip those taps.
//
// Channel counts need not be multiples of the blocks: storage holds whole blocks and the padding
// channels are zero (as in blocked_layout.hpp), so a zero channel adds nothing to a reduction.
#pragma once

#include <cstdint>
#include <vector>

#include <weft/jit/bfloat16.hpp>
#include <weft/ops/blocked_layout.hpp>

namespace weft::ops {

struct ActivationLayout {
  std::int64_t images = 0;
  Blocking channels;                  // C and bc (or K and bk)
  std::int64_t h = 0, w = 0;          // the image, without rims
  std::int64_t pad_h = 0, pad_w = 0;  // the rims stored around it

  std::int64_t padded_h() const { return h + 2 * pad_h; }
  std::int64_t padded_w() const { return w + 2 * pad_w; }
  std::int64_t size() const { return images * channels.blocks() * padded_h() * padded_w() * channels.block; }
  // Offset of pixel (y, x) of channel block cb of image n; y and x count from the rims' top left
  // corner (y in [0, padded_h), x in [0, padded_w)).
  std::int64_t offset(std::int64_t n, std::int64_t cb, std::int64_t y, std::int64_t x) const {
    return (((n * channels.blocks() + cb) * padded_h() + y) * padded_w() + x) * channels.block;
  }
};

// Plain N x C x h x w (no rims) -> blocked, rims and padding channels zero.
std::vector<float> nchw_to_blocked(const float* nchw, const ActivationLayout& layout);
// The same into `blocked` (layout.size() elements), for a caller that keeps the buffer.
void nchw_to_blocked(const float* nchw, const ActivationLayout& layout, float* blocked);
// Blocked -> plain N x C x h x w: the image's pixels of the real channels (rims are dropped).
void blocked_to_nchw(const float* blocked, float* nchw, const ActivationLayout& layout);
// The same in bf16 (the values move unchanged).
void nchw_to_blocked(const jit::bfloat16* nchw, const ActivationLayout& layout, jit::bfloat16* blocked);
void blocked_to_nchw(const jit::bfloat16* blocked, jit::bfloat16* nchw, const ActivationLayout& layout);
// nchw_to_blocked() of a gradient through a ReLU, in one pass: grad where forward_out (the ReLU's
// output, N x C x h x w as grad) passed it (> 0, or NaN), +0 elsewhere.
void nchw_to_blocked_relu_backward(const float* grad, const float* forward_out, const ActivationLayout& layout,
                                   float* blocked);
void nchw_to_blocked_relu_backward(const jit::bfloat16* grad, const jit::bfloat16* forward_out,
                                   const ActivationLayout& layout, jit::bfloat16* blocked);
// How many rim elements (of real and padding channels) are not zero.
std::int64_t nonzero_rim_elements(const float* blocked, const ActivationLayout& layout);

struct FilterLayout {
  Blocking k;  // K and bk
  Blocking c;  // C and bc
  std::int64_t r = 1, s = 1;

  std::int64_t size() const { return k.blocks() * c.blocks() * r * s * c.block * k.block; }
  // Offset of the bc x bk tile of tap (ir, is) of blocks (kb, cb); element (ic, ik) of the tile is
  // at + ic * bk + ik (a column-major bk x bc matrix, lda = bk).
  std::int64_t offset(std::int64_t kb, std::int64_t cb, std::int64_t ir, std::int64_t is) const {
    return (((kb * c.blocks() + cb) * r + ir) * s + is) * c.block * k.block;
  }
};

// Plain K x C x R x S -> blocked, padding channels zero.
std::vector<float> kcrs_to_blocked(const float* kcrs, const FilterLayout& layout);
// The same into `blocked` (layout.size() elements), for a caller that keeps the buffer.
void kcrs_to_blocked(const float* kcrs, const FilterLayout& layout, float* blocked);
// Blocked -> plain K x C x R x S (the real channels).
void blocked_to_kcrs(const float* blocked, float* kcrs, const FilterLayout& layout);

// Bias of K channels -> K rounded up to whole blocks, padding zero.
std::vector<float> blocked_bias(const float* bias, const Blocking& k);

// bf16 (USE_BF16). Activations and the bias keep their blocked layouts with bf16 elements; a
// filter's bc x bk tiles go into VNNI-2, the layout of the bf16 BRGEMM's A (brgemm.hpp): pairs of
// input channels side by side, element (ic, ik) of a tile at (ic / 2) * 2 * bk + 2 * ik + ic % 2.
// Tiles keep their places (FilterLayout::offset), so tap and block offsets are the same as in f32.
//
// Each element rounded to nearest even (jit::to_bfloat16).
std::vector<jit::bfloat16> to_bf16(const std::vector<float>& values);
// A blocked filter (kcrs_to_blocked) in bf16 with VNNI-2 tiles; needs an even bc.
std::vector<jit::bfloat16> filter_to_vnni2(const std::vector<float>& blocked, const FilterLayout& layout);
// Plain bf16 K x C x R x S -> blocked with VNNI-2 tiles (what filter_to_vnni2 makes of
// kcrs_to_blocked), in one pass; padding channels zero. Needs an even bc.
void kcrs_to_vnni2(const jit::bfloat16* kcrs, const FilterLayout& layout, jit::bfloat16* tiles);
// The inverse: VNNI-2 tiles -> plain bf16 K x C x R x S (the real channels).
void vnni2_to_kcrs(const jit::bfloat16* tiles, jit::bfloat16* kcrs, const FilterLayout& layout);
// The inverse of filter_to_vnni2: a filter of VNNI-2 bf16 tiles (the bf16 update's grad_filter) -> blocked floats, exactly.
std::vector<float> vnni2_to_filter(const jit::bfloat16* tiles, const FilterLayout& layout);
// Each value rounded to the nearest bf16 (kept as a float): inputs that bf16 holds exactly, so that a
// reference computed from them sees what the bf16 run sees.
void round_to_bf16(std::vector<float>& values);
// bf16 -> float, exactly.
std::vector<float> to_floats(const jit::bfloat16* values, std::int64_t count);

}  // namespace weft::ops
