#include <weft/ops/tile_transpose.hpp>

#include <string>

#include <weft/jit/error.hpp>

namespace weft::ops {
namespace {

jit::DataType checked(std::int64_t rows, std::int64_t cols, jit::DataType type, bool vnni2, std::int64_t ld_in) {
  if (ld_in != 0 && (vnni2 || ld_in < rows))
    throw Error("TileTranspose: a source stride (" + std::to_string(ld_in) + ") needs a plain tile of at most that many rows, got " +
                std::to_string(rows) + (vnni2 ? " in VNNI-2" : ""));
  if (type != jit::DataType::f32 && type != jit::DataType::bf16 && type != jit::DataType::f64)
    throw Error("TileTranspose: tiles of f32, bf16 or f64, not " + std::string(jit::to_string(type)));
  if (vnni2 && type != jit::DataType::bf16) throw Error("TileTranspose: VNNI-2 tiles exist in bf16 only");
  if (vnni2 && (rows % 2 != 0 || cols % 2 != 0))
    throw Error("TileTranspose: a VNNI-2 tile and its transpose pair columns and rows, so both need even counts, got " +
                std::to_string(rows) + " x " + std::to_string(cols));
  return type;
}

// f64 tiles are moved by f64 kernels (compute f64 too: the unary TPPs pair f64 with f64 only).
tpp::UnaryDesc unary(tpp::UnaryOp op, std::int64_t m, std::int64_t n, std::int64_t ld_out, jit::DataType type,
                     std::int64_t ld_in = 0) {
  const jit::DataType compute = type == jit::DataType::f64 ? jit::DataType::f64 : jit::DataType::f32;
  return {.op = op, .m = m, .n = n, .ld_in = ld_in != 0 ? ld_in : m, .ld_out = ld_out,
          .types = {.in = type, .out = type, .compute = compute}};
}

// The transpose, or with vnni2 the transpose of the column pairs as floats.
tpp::UnaryDesc first(std::int64_t rows, std::int64_t cols, jit::DataType type, bool vnni2, std::int64_t ld_in) {
  if (vnni2) return unary(tpp::UnaryOp::transpose, rows, cols / 2, cols / 2, jit::DataType::f32);
  return unary(tpp::UnaryOp::transpose, rows, cols, cols, type, ld_in);
}

}  // namespace

TileTranspose::TileTranspose(std::int64_t rows, std::int64_t cols, jit::DataType type, bool vnni2, PassCode code,
                             std::int64_t ld_in)
    : transpose_(make_kernel<tpp::Unary>(first(rows, cols, checked(rows, cols, type, vnni2, ld_in), vnni2, ld_in), code)),
      scratch_bytes_(rows * cols * static_cast<std::int64_t>(jit::size_of(type))),
      vnni2_(vnni2) {
  if (vnni2) pack_ = make_kernel<tpp::Unary>(unary(tpp::UnaryOp::vnni2_pack, cols, rows, cols, jit::DataType::bf16), code);
}

void TileTranspose::operator()(const void* in, void* out, void* scratch) const {
  if (!pack_) {
    (*transpose_)(tpp::UnaryArgs{.in = in, .out = out});
    return;
  }
  (*transpose_)(tpp::UnaryArgs{.in = in, .out = scratch});
  (*pack_)(tpp::UnaryArgs{.in = scratch, .out = out});
}

}  // namespace weft::ops
