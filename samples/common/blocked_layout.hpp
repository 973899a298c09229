// Blocked layouts of plain matrices, as the samples (and PARLOOPER's) keep their operands: a plain
// column-major `rows x cols` matrix becomes a grid of column-major tiles, each contiguous, e.g. for
// the GEMM samples' C = A x B:
//
//   A [Mb][Kb][bk][bm]   block (im, ik) is a bm x bk tile    (rows M, cols K, row-block-major)
//   B [Nb][Kb][bn][bk]   block (in, ik) is a bk x bn tile    (rows K, cols N)
//   C [Nb][Mb][bn][bm]   block (in, im) is a bm x bn tile    (rows M, cols N)
//
// Why: every BRGEMM operand is a small contiguous tile, and the tiles a batch reduce walks over
// (A blocks of one block row, B blocks of one block column) sit at a constant stride.
//
// Sizes need not be multiples of the blocks: Mb = ceil(M / bm) etc. Storage always holds full
// blocks, and the padding is zero: kernels of the remainder size never touch it, and a zero-padded
// reduction dimension adds nothing, so a batch reduce keeps one length per block.
#pragma once

#include <cstdint>
#include <vector>

namespace weft::samples {

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

// Plain column-major `rows x cols` (ld = rows) -> tiles of `rows_b.block x cols_b.block`, zero
// padded. `row_block_major`: true gives [row blocks][col blocks][bc][br] (A's layout above), false
// gives [col blocks][row blocks][bc][br] (B's and C's).
std::vector<float> to_blocked(const float* plain, const Blocking& rows_b, const Blocking& cols_b,
                              bool row_block_major);

// The inverse of to_blocked: writes the real elements back into a plain column-major matrix.
void from_blocked(const float* blocked, float* plain, const Blocking& rows_b,
                  const Blocking& cols_b, bool row_block_major);

}  // namespace weft::samples
