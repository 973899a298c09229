// fp32 values in the VNNI-2 order of bf16 weights: the weight gradient of fp32 master weights that
// training keeps in a bf16 operator's blocked layout (gemm_upd.cpp, upd_operands.cpp). The
// vnni2_pack TPP writes bf16 only; this moves a tile's f32 sums, unrounded, to the same places.
// Internal to ops/: not installed.
#pragma once

#include <cstdint>

namespace weft::ops::detail {

// A tile of m x n f32 values (column-major, ld m) into VNNI-2 order along its columns, in f32:
// out[(j / 2) * 2 * m + 2 * i + j % 2] = in[i + j * m] (tpp::UnaryOp::vnni2_pack's order). n is
// even; in and out do not overlap.
inline void vnni2_order_f32(const float* in, std::int64_t m, std::int64_t n, float* out) {
  for (std::int64_t j = 0; j < n; j += 2) {
    const float* even = in + j * m;
    const float* odd = even + m;
    float* pair = out + j * m;
    for (std::int64_t i = 0; i < m; ++i) {
      pair[2 * i] = even[i];
      pair[2 * i + 1] = odd[i];
    }
  }
}

}  // namespace weft::ops::detail
