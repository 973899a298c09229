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
};

struct GemmPassLayout {
  PassMatrix left, right, out;
  jit::DataType dtype = jit::DataType::f32;  // every operand's element type
  // Terms of each output sum: the columns of op(left).
  std::int64_t reduction() const { return left.transposed ? left.rows.size : left.cols.size; }
};

}  // namespace weft::ops
