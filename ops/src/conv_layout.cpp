#include <weft/ops/conv_layout.hpp>

#include <algorithm>
#include <cstddef>

namespace weft::ops {
namespace {

std::size_t index(std::int64_t i) { return static_cast<std::size_t>(i); }

}  // namespace

std::vector<float> nchw_to_blocked(const float* nchw, const ActivationLayout& l) {
  std::vector<float> blocked(index(l.size()));
  nchw_to_blocked(nchw, l, blocked.data());
  return blocked;
}

void nchw_to_blocked(const float* nchw, const ActivationLayout& l, float* blocked) {
  std::fill(blocked, blocked + l.size(), 0.0f);
  const std::int64_t C = l.channels.size, bc = l.channels.block;
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t n = 0; n < l.images; ++n) {
    for (std::int64_t c = 0; c < C; ++c) {
      const float* plane = nchw + (n * C + c) * l.h * l.w;
      for (std::int64_t y = 0; y < l.h; ++y) {
        float* row = blocked + l.offset(n, c / bc, y + l.pad_h, l.pad_w) + c % bc;
        for (std::int64_t x = 0; x < l.w; ++x) row[x * bc] = plane[y * l.w + x];
      }
    }
  }
}

void blocked_to_nchw(const float* blocked, float* nchw, const ActivationLayout& l) {
  const std::int64_t C = l.channels.size, bc = l.channels.block;
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t n = 0; n < l.images; ++n) {
    for (std::int64_t c = 0; c < C; ++c) {
      float* plane = nchw + (n * C + c) * l.h * l.w;
      for (std::int64_t y = 0; y < l.h; ++y) {
        const float* row = blocked + l.offset(n, c / bc, y + l.pad_h, l.pad_w) + c % bc;
        for (std::int64_t x = 0; x < l.w; ++x) plane[y * l.w + x] = row[x * bc];
      }
    }
  }
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

// Block by block, in parallel: a (K block, C block) pair's R x S tiles (bc x bk each) are written
// from bk x bc contiguous runs of R x S taps of the plain filter, within one block's footprint
// (bc bk R S floats: in L2) instead of strided across the whole filter.
void kcrs_to_blocked(const float* kcrs, const FilterLayout& l, float* blocked) {
  const std::int64_t C = l.c.size, bk = l.k.block, bc = l.c.block, taps = l.r * l.s, tile = bc * bk;
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t kb = 0; kb < l.k.blocks(); ++kb) {
    for (std::int64_t cb = 0; cb < l.c.blocks(); ++cb) {
      float* tiles = blocked + l.offset(kb, cb, 0, 0);  // tap t = r S + s at tiles + t * tile
      const std::int64_t k_extent = l.k.extent(kb), c_extent = l.c.extent(cb);
      if (k_extent < bk || c_extent < bc) std::fill(tiles, tiles + taps * tile, 0.0f);  // padding channels
      for (std::int64_t ik = 0; ik < k_extent; ++ik) {
        for (std::int64_t ic = 0; ic < c_extent; ++ic) {
          const float* plain_taps = kcrs + ((kb * bk + ik) * C + cb * bc + ic) * taps;
          for (std::int64_t t = 0; t < taps; ++t) tiles[t * tile + ic * bk + ik] = plain_taps[t];
        }
      }
    }
  }
}

void blocked_to_kcrs(const float* blocked, float* kcrs, const FilterLayout& l) {
  const std::int64_t K = l.k.size, C = l.c.size, bk = l.k.block, bc = l.c.block;
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t k = 0; k < K; ++k) {
    for (std::int64_t c = 0; c < C; ++c) {
      for (std::int64_t r = 0; r < l.r; ++r) {
        for (std::int64_t s = 0; s < l.s; ++s) {
          kcrs[((k * C + c) * l.r + r) * l.s + s] = blocked[l.offset(k / bk, c / bc, r, s) + (c % bc) * bk + k % bk];
        }
      }
    }
  }
}

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
