// Blocked layouts of plain matrices, as the operators (and PARLOOPER's) keep their operands: a plain
// column-major `rows x cols` matrix becomes a grid of tiles, each contiguous, e.g. for the GEMM
// GEMM's C = A x B:
//
//   A [Mb][Kb][bk][bm]   block (im, ik) is a bm x bk tile    (rows M, cols K, row-block-major)
//   B [Nb][Kb][bn][bk]   block (in, ik) is a bk x bn tile    (rows K, cols N)
//   C [Nb][Mb][bn][bm]   block (in, im) is a bm x bn tile    (rows M, cols N)
//
// Why: every BRGEMM operand is a small contiguous tile, and the tiles a batch reduce walks over
// (A blocks of one block row, B blocks of one block column) sit at a constant stride.
//
// Inside a tile the elements are column-major, or (TileOrder::vnni2, bf16 operands that BRGEMM
// reads as A) in VNNI-2: the columns are the reduction, and each pair of columns is interleaved
// row by row, so that the two values a vdpbf16ps lane multiplies are adjacent. A 4 x 4 tile:
//
//   column_major: a00 a10 a20 a30 | a01 a11 a21 a31 | a02 ...        (r, c) at c * br + r
//   vnni2:        a00 a01 a10 a11 a20 a21 a30 a31 | a02 a03 a12 ...  (r, c) at (c / 2) * 2 * br + 2 * r + c % 2
//
// Sizes need not be multiples of the blocks: Mb = ceil(M / bm) etc. Storage always holds full
// blocks, and the padding is zero: kernels of the remainder size never touch it, and a zero-padded
// reduction dimension adds nothing, so a batch reduce keeps one length per block.
//
//   std::vector<float> a_blocked = to_blocked(a.data(), {M, bm}, {K, bk}, true);
//   std::vector<bfloat16> w_blocked = to_blocked<bfloat16>(a.data(), {M, bm}, {K, bk}, true, TileOrder::vnni2);
#pragma once

#include <cstdint>
#include <vector>

#include <weft/jit/bfloat16.hpp>

namespace weft::ops {

struct Blocking {
  std::int64_t size = 0;   // M, N or K
  std::int64_t block = 0;  // bm, bn or bk
  std::int64_t blocks() const { return (size + block - 1) / block; }
  // Elements of block `i` that are real (the last one may be shorter).
  std::int64_t extent(std::int64_t i) const {
    const std::int64_t rest = size - i * block;
    return rest < block ? rest : block;
  }
  // Elements including the last block's padding.
  std::int64_t padded() const { return blocks() * block; }
};

enum class TileOrder { column_major, vnni2 };

// Offset of element (r, c) inside a tile of `rows` rows in `order` (vnni2: the tile has an even
// number of columns).
inline std::int64_t tile_offset(std::int64_t r, std::int64_t c, std::int64_t rows, TileOrder order) {
  return order == TileOrder::vnni2 ? (c / 2) * 2 * rows + 2 * r + c % 2 : c * rows + r;
}

// Offset of element (r, c) of a plain `rows_b.size x cols_b.size` matrix inside its blocked copy
// (the order of the blocks and of the elements inside each tile as to_blocked below).
std::int64_t blocked_offset(std::int64_t r, std::int64_t c, const Blocking& rows_b, const Blocking& cols_b,
                            bool row_block_major, TileOrder order);

// Plain column-major `rows x cols` (ld = rows) -> tiles of `rows_b.block x cols_b.block`, zero
// padded. `row_block_major`: true gives [row blocks][col blocks][bc][br] (A's layout above), false
// gives [col blocks][row blocks][bc][br] (B's and C's). The tiles hold T, float, bfloat16 (the
// values rounded to nearest even, jit::to_bfloat16) or double (exactly); TileOrder::vnni2 needs an even cols_b.block
// (weft::Error otherwise).
template <class T = float>
std::vector<T> to_blocked(const float* plain, const Blocking& rows_b, const Blocking& cols_b, bool row_block_major,
                          TileOrder order = TileOrder::column_major);

// The inverse of to_blocked: writes the real elements back into a plain column-major matrix (bf16
// widened to float, exactly; double rounded to float, for the samples' float checks).
template <class T>
void from_blocked(const T* blocked, float* plain, const Blocking& rows_b, const Blocking& cols_b,
                  bool row_block_major, TileOrder order = TileOrder::column_major);

extern template std::vector<float> to_blocked(const float*, const Blocking&, const Blocking&, bool, TileOrder);
extern template std::vector<jit::bfloat16> to_blocked(const float*, const Blocking&, const Blocking&, bool, TileOrder);
extern template void from_blocked(const float*, float*, const Blocking&, const Blocking&, bool, TileOrder);
extern template void from_blocked(const jit::bfloat16*, float*, const Blocking&, const Blocking&, bool, TileOrder);
extern template std::vector<double> to_blocked(const float*, const Blocking&, const Blocking&, bool, TileOrder);
extern template void from_blocked(const double*, float*, const Blocking&, const Blocking&, bool, TileOrder);

}  // namespace weft::ops
