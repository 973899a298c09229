#include <weft/ops/conv_layout.hpp>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <type_traits>
#include <vector>

#include <weft/ops/element_type.hpp>
#include <weft/ops/matrix_packing.hpp>
#include <weft/tpp/unary.hpp>

#include "plain_transposes.hpp"

namespace weft::ops {
namespace {

std::size_t index(std::int64_t i) { return static_cast<std::size_t>(i); }

// The conversions are transpositions: channels move from the slowest plain dimension to the
// fastest blocked one. They go through the JIT transpose TPP (vector shuffles), 2x faster than
// element loops walked in cache-sized patches: activations row by row (an image row of a channel
// block is a matrix with a leading dimension on each side), 1x1 filters tile by tile, other f32
// filters input channel by input channel. bf16 filter tiles of several taps are VNNI-2 (pairs of
// input channels interleaved), which a transpose does not write: they walk `patch` x `patch`
// squares of (ic, ik), whose cache lines stay in L1
// until all their elements are used (element by element, one side of the copy touched a new line
// for every element: 5x slower on 3x3 filters of 512 x 512 channels).
constexpr std::int64_t patch = 16;

using detail::BlockTransposes;

// B (n x m, ld_out) = A^T for A (m x n, column-major, ld_in).
template <class T>
tpp::Unary transpose_kernel(std::int64_t m, std::int64_t n, std::int64_t ld_in, std::int64_t ld_out) {
  return detail::plain_transpose(data_type_of<T>(), m, n, ld_in, ld_out);
}

// Plain -> blocked, every element written once (rims and padding channels zero), in parallel by
// image, channel block and padded row. Row y of channel block cb: channel c of pixel x is at
// c * plane + x in the plain image (A: w x channels, ld plane) and at x * bc + c in the blocked row
// (B: channels x w, ld bc).
//
// With relu_forward_out (a ReLU's backward fused in): each plain row goes through the relu_bwd
// kernel into the thread's scratch row (w x channels, ld w), and is transposed from there.
template <class T>
void activations_to_blocked(const T* nchw, const ActivationLayout& l, T* blocked, const T* relu_forward_out = nullptr) {
  const std::int64_t C = l.channels.size, bc = l.channels.block, plane = l.h * l.w;
  const bool masked = relu_forward_out != nullptr;
  const BlockTransposes rows(l.channels, [&](std::int64_t channels) {
    return transpose_kernel<T>(l.w, channels, masked ? l.w : plane, bc);
  });
  std::optional<BlockTransposes> masks;
  if (masked) {
    masks.emplace(l.channels, [&](std::int64_t channels) {
      return detail::relu_backward(data_type_of<T>(), l.w, channels, plane, l.w);
    });
  }
#pragma omp parallel for collapse(3) schedule(static)
  for (std::int64_t n = 0; n < l.images; ++n) {
    for (std::int64_t cb = 0; cb < l.channels.blocks(); ++cb) {
      for (std::int64_t y = 0; y < l.padded_h(); ++y) {
        T* row = blocked + l.offset(n, cb, y, 0);
        const std::int64_t channels = l.channels.extent(cb);
        const bool rim_row = y < l.pad_h || y >= l.pad_h + l.h;
        if (rim_row || channels < bc) {
          std::fill(row, row + l.padded_w() * bc, T{});
        } else {
          std::fill(row, row + l.pad_w * bc, T{});
          std::fill(row + (l.pad_w + l.w) * bc, row + l.padded_w() * bc, T{});
        }
        if (rim_row) continue;
        const std::int64_t source = (n * C + cb * bc) * plane + (y - l.pad_h) * l.w;
        const T* in = nchw + source;
        if (masked) {
          thread_local std::vector<T> passed;
          passed.resize(index(l.w * bc));
          masks->of(channels)(tpp::UnaryArgs{.in = in, .out = passed.data(), .aux = relu_forward_out + source});
          in = passed.data();
        }
        rows.of(channels)(tpp::UnaryArgs{.in = in, .out = row + l.pad_w * bc});
      }
    }
  }
}

// Blocked -> plain: the blocked row is A (channels x w, ld bc), the plain image B (w x channels,
// ld plane).
template <class T>
void activations_to_plain(const T* blocked, T* nchw, const ActivationLayout& l) {
  const std::int64_t C = l.channels.size, bc = l.channels.block, plane = l.h * l.w;
  const BlockTransposes rows(l.channels, [&](std::int64_t channels) { return transpose_kernel<T>(channels, l.w, bc, plane); });
#pragma omp parallel for collapse(3) schedule(static)
  for (std::int64_t n = 0; n < l.images; ++n) {
    for (std::int64_t cb = 0; cb < l.channels.blocks(); ++cb) {
      for (std::int64_t y = 0; y < l.h; ++y) {
        rows.of(l.channels.extent(cb))(tpp::UnaryArgs{
            .in = blocked + l.offset(n, cb, y + l.pad_h, l.pad_w), .out = nchw + (n * C + cb * bc) * plane + y * l.w});
      }
    }
  }
}

// Where element (ic, ik) of a filter tile goes: a column-major bk x bc matrix in f32, VNNI-2 (pairs
// of input channels side by side) in bf16.
template <class T>
std::int64_t tile_position(std::int64_t ic, std::int64_t ik, std::int64_t bk) {
  if constexpr (std::is_same_v<T, jit::bfloat16>) return (ic / 2) * 2 * bk + 2 * ik + ic % 2;
  return ic * bk + ik;
}

// Calls copy(plain, tiled) with the offsets of each real filter element in the plain K x C x R x S
// filter and in the blocked one. In parallel by (K block, C block); within a block patch by patch of
// (ic, ik) with the taps inside, so that a patch's plain rows (16 x 16 x R x S values) are read from
// L1 for every tap. `clear(tiles, count)` is called first on the blocks that have padding channels.
template <class T, class Copy, class Clear>
void for_each_filter_element(const FilterLayout& l, Copy copy, Clear clear) {
  const std::int64_t C = l.c.size, bk = l.k.block, bc = l.c.block, taps = l.r * l.s, tile = bc * bk;
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t kb = 0; kb < l.k.blocks(); ++kb) {
    for (std::int64_t cb = 0; cb < l.c.blocks(); ++cb) {
      const std::int64_t tiles = l.offset(kb, cb, 0, 0);  // tap t = r S + s at tiles + t * tile
      const std::int64_t block = (kb * bk * C + cb * bc) * taps;  // (ik, ic, t) at block + (ik C + ic) taps + t
      const std::int64_t k_extent = l.k.extent(kb), c_extent = l.c.extent(cb);
      if (k_extent < bk || c_extent < bc) clear(tiles, taps * tile);
      for (std::int64_t ic0 = 0; ic0 < c_extent; ic0 += patch) {
        const std::int64_t ic1 = std::min(c_extent, ic0 + patch);
        for (std::int64_t ik0 = 0; ik0 < k_extent; ik0 += patch) {
          const std::int64_t ik1 = std::min(k_extent, ik0 + patch);
          for (std::int64_t t = 0; t < taps; ++t)
            for (std::int64_t ic = ic0; ic < ic1; ++ic)
              for (std::int64_t ik = ik0; ik < ik1; ++ik)
                copy(block + (ik * C + ic) * taps + t, tiles + t * tile + tile_position<T>(ic, ik, bk));
        }
      }
    }
  }
}

// f32 filters of several taps go by the JIT transpose as well, one input channel of a block pair
// at a time: its taps for the block's output channels are, on the plain side, a taps x bk matrix
// (A: the taps contiguous, ld C taps) and, in the tiles, its transpose (B: bk contiguous per tap,
// ld bc bk, the tile size): 2.3x the patches on 3x3 filters. bf16 tiles of several taps are VNNI-2
// (pairs of input channels interleaved) while the pair's two values lie `taps` apart on the plain
// side, which a transpose does not write: they keep the patches.
template <bool to_plain>
void f32_filter_by_channel(const FilterLayout& l, const float* from, float* to) {
  const std::int64_t C = l.c.size, bk = l.k.block, bc = l.c.block, taps = l.r * l.s, tile = bc * bk;
  const BlockTransposes kernels(l.k, [&](std::int64_t k_extent) {
    return to_plain ? transpose_kernel<float>(k_extent, taps, tile, C * taps)
                    : transpose_kernel<float>(taps, k_extent, C * taps, tile);
  });
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t kb = 0; kb < l.k.blocks(); ++kb) {
    for (std::int64_t cb = 0; cb < l.c.blocks(); ++cb) {
      const std::int64_t tiles = l.offset(kb, cb, 0, 0);
      const std::int64_t block = (kb * bk * C + cb * bc) * taps;
      const std::int64_t k_extent = l.k.extent(kb), c_extent = l.c.extent(cb);
      if (!to_plain && (k_extent < bk || c_extent < bc)) std::fill(to + tiles, to + tiles + taps * tile, 0.0f);
      const tpp::Unary& move = kernels.of(k_extent);
      for (std::int64_t ic = 0; ic < c_extent; ++ic) {
        const std::int64_t plain = block + ic * taps, tiled = tiles + ic * bk;
        move(tpp::UnaryArgs{.in = from + (to_plain ? tiled : plain), .out = to + (to_plain ? plain : tiled)});
      }
    }
  }
}

// A 1x1 filter is a K x C row-major matrix whose tiles are those of a GEMM's weights: (ic, ik) at
// tile_offset(ik, ic, bk) in a column-major or (bf16) VNNI-2 bk x bc tile, K blocks outermost. So it
// moves as matrix_packing.hpp's pack / unpack move row-major weights (tile by tile, through the
// transpose TPP): 2.5-4x the patches on 1x1 filters of a million values.
template <class T>
PassMatrix pointwise_filter_matrix(const FilterLayout& l) {
  return {.rows = l.k, .cols = l.c, .row_block_major = true,
          .order = std::is_same_v<T, float> ? TileOrder::column_major : TileOrder::vnni2};
}

template <class T>
void filter_to_blocked(const T* kcrs, const FilterLayout& l, T* blocked) {
  if (l.r * l.s == 1) return pack(kcrs, MatrixOrder::row_major, pointwise_filter_matrix<T>(l), blocked);
  if constexpr (std::is_same_v<T, float>) {
    if (l.r * l.s > 1) return f32_filter_by_channel<false>(l, kcrs, blocked);
  }
  for_each_filter_element<T>(
      l, [&](std::int64_t plain, std::int64_t tiled) { blocked[tiled] = kcrs[plain]; },
      [&](std::int64_t tiles, std::int64_t count) { std::fill(blocked + tiles, blocked + tiles + count, T{}); });
}

template <class T>
void filter_to_plain(const T* blocked, T* kcrs, const FilterLayout& l) {
  if (l.r * l.s == 1) return unpack(blocked, pointwise_filter_matrix<T>(l), kcrs, MatrixOrder::row_major);
  if constexpr (std::is_same_v<T, float>) {
    if (l.r * l.s > 1) return f32_filter_by_channel<true>(l, blocked, kcrs);
  }
  for_each_filter_element<T>(
      l, [&](std::int64_t plain, std::int64_t tiled) { kcrs[plain] = blocked[tiled]; }, [](std::int64_t, std::int64_t) {});
}

}  // namespace

std::vector<float> nchw_to_blocked(const float* nchw, const ActivationLayout& l) {
  std::vector<float> blocked(index(l.size()));
  nchw_to_blocked(nchw, l, blocked.data());
  return blocked;
}

void nchw_to_blocked(const float* nchw, const ActivationLayout& l, float* blocked) { activations_to_blocked(nchw, l, blocked); }
void nchw_to_blocked(const jit::bfloat16* nchw, const ActivationLayout& l, jit::bfloat16* blocked) {
  activations_to_blocked(nchw, l, blocked);
}
void nchw_to_blocked_relu_backward(const float* grad, const float* forward_out, const ActivationLayout& l,
                                   float* blocked) {
  require_buffers("nchw_to_blocked_relu_backward", {{"grad", grad}, {"forward_out", forward_out}, {"blocked", blocked}});
  activations_to_blocked(grad, l, blocked, forward_out);
}
void nchw_to_blocked_relu_backward(const jit::bfloat16* grad, const jit::bfloat16* forward_out,
                                   const ActivationLayout& l, jit::bfloat16* blocked) {
  require_buffers("nchw_to_blocked_relu_backward", {{"grad", grad}, {"forward_out", forward_out}, {"blocked", blocked}});
  activations_to_blocked(grad, l, blocked, forward_out);
}
void blocked_to_nchw(const float* blocked, float* nchw, const ActivationLayout& l) { activations_to_plain(blocked, nchw, l); }
void blocked_to_nchw(const jit::bfloat16* blocked, jit::bfloat16* nchw, const ActivationLayout& l) {
  activations_to_plain(blocked, nchw, l);
}

std::int64_t nonzero_rim_elements(const float* blocked, const ActivationLayout& l) {
  std::int64_t nonzero = 0;
  const std::int64_t bc = l.channels.block;
#pragma omp parallel for collapse(2) schedule(static) reduction(+ : nonzero)
  for (std::int64_t n = 0; n < l.images; ++n) {
    for (std::int64_t cb = 0; cb < l.channels.blocks(); ++cb) {
      for (std::int64_t y = 0; y < l.padded_h(); ++y) {
        const bool rim_row = y < l.pad_h || y >= l.pad_h + l.h;
        for (std::int64_t x = 0; x < l.padded_w(); ++x) {
          if (!rim_row && x >= l.pad_w && x < l.pad_w + l.w) continue;
          const float* pixel = blocked + l.offset(n, cb, y, x);
          nonzero += std::count_if(pixel, pixel + bc, [](float v) { return v != 0.0f; });
        }
      }
    }
  }
  return nonzero;
}

std::vector<float> kcrs_to_blocked(const float* kcrs, const FilterLayout& l) {
  std::vector<float> blocked(index(l.size()));
  kcrs_to_blocked(kcrs, l, blocked.data());
  return blocked;
}

void kcrs_to_blocked(const float* kcrs, const FilterLayout& l, float* blocked) { filter_to_blocked(kcrs, l, blocked); }
void blocked_to_kcrs(const float* blocked, float* kcrs, const FilterLayout& l) { filter_to_plain(blocked, kcrs, l); }
void kcrs_to_vnni2(const jit::bfloat16* kcrs, const FilterLayout& l, jit::bfloat16* tiles) { filter_to_blocked(kcrs, l, tiles); }
void vnni2_to_kcrs(const jit::bfloat16* tiles, jit::bfloat16* kcrs, const FilterLayout& l) { filter_to_plain(tiles, kcrs, l); }

std::vector<float> blocked_bias(const float* bias, const Blocking& k) {
  std::vector<float> blocked(index(k.padded()), 0.0f);
  std::copy(bias, bias + k.size, blocked.begin());
  return blocked;
}

std::vector<jit::bfloat16> to_bf16(const std::vector<float>& values) {
  std::vector<jit::bfloat16> out(values.size());
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = jit::to_bfloat16(values[i]);
  return out;
}

std::vector<jit::bfloat16> filter_to_vnni2(const std::vector<float>& blocked, const FilterLayout& l) {
  const std::int64_t bc = l.c.block, bk = l.k.block, tile = bc * bk;
  std::vector<jit::bfloat16> out(blocked.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t t = 0; t < static_cast<std::int64_t>(blocked.size()) / tile; ++t)
    for (std::int64_t ic = 0; ic < bc; ++ic)
      for (std::int64_t ik = 0; ik < bk; ++ik)
        out[index(t * tile + (ic / 2) * 2 * bk + 2 * ik + ic % 2)] = jit::to_bfloat16(blocked[index(t * tile + ic * bk + ik)]);
  return out;
}

std::vector<float> vnni2_to_filter(const jit::bfloat16* tiles, const FilterLayout& l) {
  const std::int64_t bc = l.c.block, bk = l.k.block, tile = bc * bk;
  std::vector<float> out(index(l.size()));
#pragma omp parallel for schedule(static)
  for (std::int64_t t = 0; t < l.size() / tile; ++t)
    for (std::int64_t ic = 0; ic < bc; ++ic)
      for (std::int64_t ik = 0; ik < bk; ++ik)
        out[index(t * tile + ic * bk + ik)] = jit::to_float(tiles[t * tile + (ic / 2) * 2 * bk + 2 * ik + ic % 2]);
  return out;
}

void round_to_bf16(std::vector<float>& values) {
  for (float& v : values) v = jit::to_float(jit::to_bfloat16(v));
}

std::vector<float> to_floats(const jit::bfloat16* values, std::int64_t count) {
  std::vector<float> out(index(count));
  for (std::int64_t i = 0; i < count; ++i) out[index(i)] = jit::to_float(values[i]);
  return out;
}

}  // namespace weft::ops
