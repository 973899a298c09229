// Sums of a blocked activation gradient over its batch (and pixels): the bias gradient, computed
// from the blocked copy the backward passes read, in one pass over it (no plain copy).
//
//   row_sums(dy_blocked, bwd.layout().right, db);   // a GEMM's dY (M x N): db[m] = sum over n
//   channel_sums(dy_blocked, upd.grad_output_layout(), db);   // a convolution's: db[k] over images, pixels
//
// Elements float, bfloat16 (summed in float) or double (summed in double, row_sums only: the
// convolutions have no f64). In parallel over row / channel blocks; padding and rims add nothing.
#pragma once

#include <cstdint>

#include <weft/jit/bfloat16.hpp>
#include <weft/ops/conv_layout.hpp>
#include <weft/ops/gemm_layout.hpp>

namespace weft::ops {

// out[r] = sum over the columns c of the matrix of (r, c), r < m.rows.size. Column-major tiles only
// (an activation's; throws weft::Error for VNNI-2 tiles, as for null buffers).
void row_sums(const float* blocked, const PassMatrix& m, float* out);
void row_sums(const jit::bfloat16* blocked, const PassMatrix& m, float* out);
void row_sums(const double* blocked, const PassMatrix& m, double* out);

// out[c] = sum over images and pixels (rims excluded) of channel c, c < l.channels.size.
void channel_sums(const float* blocked, const ActivationLayout& l, float* out);
void channel_sums(const jit::bfloat16* blocked, const ActivationLayout& l, float* out);

}  // namespace weft::ops
