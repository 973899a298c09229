// A column-major matrix with its column pairs interleaved (VNNI-2, the order bf16 BRGEMM reads its
// A in) and back, in parallel: an fp32 weight in a layout of column-major tiles given to bf16
// passes that read the same tiles in VNNI-2 (weft.torch's fp32 layers under torch.autocast), and
// their f32 weight gradient, written in VNNI-2 order, moved back.
//
//   // rows x cols column-major (ld rows), cols even: out[(j / 2) * 2 * rows + 2 * i + j % 2] = in[i + j * rows]
//   weft::ops::pack_vnni2(fp32_weight, rows, cols, bf16_copy);    // rounded to nearest even
//   weft::ops::unpack_vnni2(f32_gradient_in_pairs, rows, cols, fp32_gradient);
//
// A matrix of several tiles with rows rows each, their columns (the reduced dimension) back to
// back, is one such matrix when every tile has an even column count: no pair straddles two tiles.
#pragma once

#include <cstdint>

#include <weft/jit/bfloat16.hpp>

namespace weft::ops {

// Throws weft::Error for null buffers, rows < 1, cols < 0 or odd.
void pack_vnni2(const float* in, std::int64_t rows, std::int64_t cols, jit::bfloat16* out);
// The inverse order in f32 (no rounding): in holds the pairs, out the column-major matrix.
void unpack_vnni2(const float* in, std::int64_t rows, std::int64_t cols, float* out);

}  // namespace weft::ops
