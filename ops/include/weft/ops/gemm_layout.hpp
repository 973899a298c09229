// The operands of a GEMM pass (out = op(left) x op(right)): each a plain column-major matrix that
// the pass reads or writes in a blocked layout (blocked_layout.hpp). A pass's layout() says, per
// operand, how to convert between the two (to_blocked / from_blocked), and the references and
// checks read it to compute op(left) x op(right) on the plain matrices.
//
//   const GemmPassLayout l = GemmBwd(config).layout();   // left = W (read transposed), right = dY, out = dX
//   std::vector<float> w(blocked_size(l.left));          // matrix_packing.hpp
//   pack(w_plain, MatrixOrder::column_major, l.left, w.data());
//   std::int64_t terms = l.reduction();                  // M: the sums behind each dX element
#pragma once

#include <cstdint>

#include <weft/jit/data_type.hpp>
#include <weft/ops/blocked_layout.hpp>

namespace weft::ops {

// A plain column-major `rows.size x cols.size` matrix and its blocked copy's layout.
struct PassMatrix {
  Blocking rows, cols;
  bool row_block_major = false;  // to_blocked's order
  bool transposed = false;       // the product reads its transpose
  TileOrder order = TileOrder::column_major;  // inside each tile (vnni2: a bf16 weight or weight gradient)
  // One column-major tile of the whole matrix: the blocked copy is the plain matrix itself (an
  // activation a pass reads or writes in place, ActivationTiles below).
  bool plain() const {
    return rows.block == rows.size && cols.block == cols.size && order == TileOrder::column_major;
  }
};

// The largest divisor of `size` at most size / (4 threads): a plain matrix's rows or columns in
// chunks that share out among `threads` without a remainder.
inline std::int64_t parallel_chunk(std::int64_t size, int threads) {
  std::int64_t chunk = size / (4 * static_cast<std::int64_t>(threads));
  if (chunk < 1) chunk = 1;
  while (size % chunk != 0) --chunk;
  return chunk;
}

struct GemmPassLayout {
  PassMatrix left, right, out;
  jit::DataType dtype = jit::DataType::f32;  // every operand's element type
  // Terms of each output sum: the columns of op(left).
  std::int64_t reduction() const { return left.transposed ? left.rows.size : left.cols.size; }
};

// An activation of a pass (x, y, dy, dx: `rows` = its features, `cols` = the batch) as the BRGEMM
// calls walk it: tile (ir, ic), rows.block x cols.block, is either a contiguous tile of the blocked
// layout [cols blocks][rows blocks][bc][br], or (plain) a window of the plain column-major matrix,
// which is PyTorch's row-major (batch, features) tensor itself: nothing to convert, no padding (the
// kernels of the remainder blocks touch only real elements).
struct ActivationTiles {
  Blocking rows, cols;
  bool plain = false;

  std::int64_t offset(std::int64_t ir, std::int64_t ic) const {
    return plain ? ic * cols.block * rows.size + ir * rows.block : (ic * rows.blocks() + ir) * cols.block * rows.block;
  }
  std::int64_t ld() const { return plain ? rows.size : rows.block; }
  // From tile (ir, ic) to tile (ir + 1, ic): a batch reduce's stride along the features.
  std::int64_t row_tile_stride() const { return plain ? rows.block : cols.block * rows.block; }
  // From tile (ir, ic) to tile (ir, ic + 1): a batch reduce's stride along the batch.
  std::int64_t col_tile_stride() const { return plain ? cols.block * rows.size : rows.blocks() * cols.block * rows.block; }
  // The layout's operand: plain is one tile of the whole matrix.
  PassMatrix matrix() const {
    return plain ? PassMatrix{{rows.size, rows.size}, {cols.size, cols.size}} : PassMatrix{rows, cols};
  }
};

}  // namespace weft::ops
