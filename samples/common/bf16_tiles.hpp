// The per-tile reformatting the bf16 GEMM passes do inside their timed region, in plain C++: the
// unary TPPs that should do it (UnaryOp::vnni2_pack, a bf16 transpose) are being written on
// another branch. Each function is a permutation of one tile (a conversion too for the f32 source),
// walked in kSubTile x kSubTile sub-blocks so that a large tile's source and destination rows stay
// in L1; the parallelism is the caller's (one tile per loop iteration, TransposedTiles).
//
// Layouts (blocked_layout.hpp): column-major, element (r, c) of a `rows x cols` tile at
// c * rows + r; VNNI-2, pairs of columns interleaved row by row, (r, c) at
// (c / 2) * 2 * rows + 2 * r + c % 2.
//
//   vnni2_pack_tile(dy_tile, packed, bm, bn);  // BRGEMM's A operand: pairs along its reduction
#pragma once

#include <cstdint>

#include <weft/jit/bfloat16.hpp>

namespace weft::samples {

inline constexpr std::int64_t kSubTile = 32;

// dst (cols x rows, column-major) = transpose of src (rows x cols, column-major).
// To be replaced by the transpose TPP in bf16 (UnaryOp::transpose, types in/out bf16).
void transpose_tile(const jit::bfloat16* src, jit::bfloat16* dst, std::int64_t rows, std::int64_t cols);

// dst (rows x cols, VNNI-2) = src (rows x cols, column-major); cols even. The float source is
// rounded to nearest even (jit::to_bfloat16).
// To be replaced by UnaryOp::vnni2_pack (types in bf16 or f32, out bf16).
void vnni2_pack_tile(const jit::bfloat16* src, jit::bfloat16* dst, std::int64_t rows, std::int64_t cols);
void vnni2_pack_tile(const float* src, jit::bfloat16* dst, std::int64_t rows, std::int64_t cols);

// The same, in place (the tile's storage is rows * cols elements either way).
void vnni2_pack_tile_in_place(jit::bfloat16* tile, std::int64_t rows, std::int64_t cols);

// dst (cols x rows, VNNI-2: pairs of rows of src) = transpose of src (rows x cols, VNNI-2: pairs of
// columns); rows and cols even. The backward pass by data's W^T from the forward's W, what
// libxsmm calls TRANSFORM_VNNI2_TO_VNNI2T.
// To be replaced by a TPP (UnaryOp::vnni2_unpack, the bf16 transpose and
// UnaryOp::vnni2_pack fused, or one op for it).
void vnni2_transpose_tile(const jit::bfloat16* src, jit::bfloat16* dst, std::int64_t rows, std::int64_t cols);

}  // namespace weft::samples
