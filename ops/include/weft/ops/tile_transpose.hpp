// One tile transposed for a BRGEMM operand: rows x cols column-major -> cols x rows column-major
// (f32, bf16 or f64), or with `vnni2` a bf16 VNNI-2 tile (pairs of columns side by side) -> the VNNI-2
// tile of its transpose (pairs of rows; libxsmm's VNNI2_TO_VNNI2T). The latter is two unary TPPs:
// the tile's 32-bit column pairs transposed as floats (a transpose moves bits), which is the
// column-major transpose, then vnni2_pack of it, through a scratch tile the caller owns.
//
//   TileTranspose t(bk, bc, jit::DataType::bf16, true);     // a forward filter tile -> backward
//   std::vector<std::byte> scratch(t.scratch_bytes());
//   t(tile, transposed, scratch.data());
#pragma once

#include <cstdint>
#include <optional>

#include <weft/jit/data_type.hpp>
#include <weft/ops/pass_code.hpp>
#include <weft/tpp/unary.hpp>

namespace weft::ops {

class TileTranspose {
 public:
  // Throws weft::Error for a type other than f32, bf16 and f64, vnni2 outside bf16, or odd rows or
  // columns with vnni2. With PassCode::check the kernels are planned only (pass_code.hpp), and the
  // transpose must not be called. `ld_in`: the source's column stride in elements, 0 for `rows` (a
  // contiguous tile); a window of a larger column-major matrix otherwise (not with vnni2).
  TileTranspose(std::int64_t rows, std::int64_t cols, jit::DataType type, bool vnni2,
                PassCode code = PassCode::build, std::int64_t ld_in = 0);

  // `scratch`: scratch_bytes() bytes, one thread's at a time (unused without vnni2).
  void operator()(const void* in, void* out, void* scratch) const;
  std::int64_t scratch_bytes() const { return vnni2_ ? scratch_bytes_ : 0; }

 private:
  std::optional<tpp::Unary> transpose_;  // none in check mode
  std::optional<tpp::Unary> pack_;
  std::int64_t scratch_bytes_;
  bool vnni2_;
};

}  // namespace weft::ops
