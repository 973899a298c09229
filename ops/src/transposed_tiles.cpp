#include <weft/ops/transposed_tiles.hpp>

#include <omp.h>

#include <string>

#include <weft/jit/bfloat16.hpp>
#include <weft/jit/error.hpp>  // bytes_needed, add_bytes

namespace weft::ops {
namespace {

void require_even(const char* what, std::int64_t value) {
  if (value % 2 != 0)
    throw Error(std::string("VNNI-2 tiles pair their ") + what + ", so they need an even number of them, got " +
                std::to_string(value));
}

jit::DataType checked(jit::DataType type, TileTransform transform, std::int64_t rows, std::int64_t cols) {
  if (type != jit::DataType::f32 && type != jit::DataType::bf16 && type != jit::DataType::f64)
    throw Error("TransposedTiles: tiles of f32, bf16 or f64, not " + std::string(jit::to_string(type)));
  if (type != jit::DataType::bf16 && transform != TileTransform::transpose)
    throw Error("TransposedTiles: VNNI-2 tiles exist in bf16 only, not in " + std::string(jit::to_string(type)));
  if (transform != TileTransform::transpose) require_even("columns", cols);
  if (transform == TileTransform::vnni2_transpose) require_even("rows", rows);
  return type;
}

std::optional<TileTranspose> transposer(jit::DataType type, TileTransform transform, std::int64_t rows,
                                        std::int64_t cols, PassCode code, std::int64_t source_ld) {
  if (transform == TileTransform::vnni2_pack) return std::nullopt;
  return TileTranspose(rows, cols, type, transform == TileTransform::vnni2_transpose, code, source_ld);
}

std::optional<tpp::Unary> packer(TileTransform transform, std::int64_t rows, std::int64_t cols, PassCode code,
                                 std::int64_t source_ld) {
  if (transform != TileTransform::vnni2_pack) return std::nullopt;
  return make_kernel<tpp::Unary>({.op = tpp::UnaryOp::vnni2_pack, .m = rows, .n = cols,
                                  .ld_in = source_ld != 0 ? source_ld : rows, .ld_out = rows,
                                  .types = {.in = jit::DataType::bf16, .out = jit::DataType::bf16}},
                                 code);
}

}  // namespace

TransposedTiles::TransposedTiles(std::int64_t rows, std::int64_t cols, std::int64_t outer, std::int64_t inner,
                                 bool swap, bool per_thread, jit::DataType type, TileTransform transform,
                                 PassCode code, std::int64_t source_ld)
    : rows_(rows),
      cols_(cols),
      outer_(outer),
      inner_(inner),
      tile_(rows * cols),
      source_ld_(source_ld),
      swap_(swap),
      per_thread_(per_thread),
      element_bytes_(jit::size_of(type)),
      transform_(transform),
      transpose_(transposer(checked(type, transform, rows, cols), transform, rows, cols, code, source_ld)),
      pack_(packer(transform, rows, cols, code, source_ld)),
      all_tiles_(make_loop<2>(
          {parlooper::LoopSpecs{0L, static_cast<long>(outer)}, parlooper::LoopSpecs{0L, static_cast<long>(inner)}}, "AB",
          code)) {}

void TransposedTiles::transform(std::int64_t o, std::int64_t i, std::byte* copy) const {
  const std::int64_t at = source_ld_ != 0 ? o * cols_ * source_ld_ + i * rows_ : (o * inner_ + i) * tile_;
  const std::byte* in = source_ + static_cast<std::size_t>(at) * element_bytes_;
  std::byte* out = copy + static_cast<std::size_t>(offset(o, i)) * element_bytes_;
  if (pack_) {
    (*pack_)(tpp::UnaryArgs{.in = in, .out = out});
  } else {
    (*transpose_)(in, out, scratch_.empty() ? nullptr : scratch_[static_cast<std::size_t>(omp_get_thread_num())].data());
  }
}

void TransposedTiles::start(const void* source) const {
  source_ = static_cast<const std::byte*>(source);
  if (transpose_ && transpose_->scratch_bytes() > 0) {  // a tile per thread, kept from run to run
    scratch_.resize(static_cast<std::size_t>(omp_get_max_threads()));
    for (auto& s : scratch_) s.resize(static_cast<std::size_t>(transpose_->scratch_bytes()));
  }
  const auto bytes = static_cast<std::size_t>(outer_ * inner_ * tile_) * element_bytes_;
  if (!per_thread_) {
    shared_.resize(bytes);
    (*all_tiles_)([&](int* ind) { transform(ind[0], ind[1], shared_.data()); });
    return;
  }
  const auto threads = static_cast<std::size_t>(omp_get_max_threads());
  copies_.resize(threads);
  done_.resize(threads);
  for (std::size_t t = 0; t < threads; ++t) {
    copies_[t].resize(bytes);
    done_[t].assign(static_cast<std::size_t>(outer_ * inner_), 0);
  }
}

void TransposedTiles::transform_once(int tid, std::int64_t o, std::int64_t i) const {
  char& done = done_[static_cast<std::size_t>(tid)][static_cast<std::size_t>(o * inner_ + i)];
  if (done != 0) return;
  done = 1;
  transform(o, i, copies_[static_cast<std::size_t>(tid)].data());
}

std::uint64_t TransposedTiles::memory_bytes(int threads) const {
  const std::uint64_t copy = bytes_needed({outer_, inner_, tile_}, element_bytes_);
  const std::uint64_t scratch =
      transpose_ ? bytes_needed({threads, transpose_->scratch_bytes()}, 1) : 0;
  if (!per_thread_) return add_bytes(copy, scratch);
  return add_bytes(add_bytes(bytes_needed({threads}, copy), bytes_needed({threads, outer_, inner_}, 1)), scratch);
}

}  // namespace weft::ops
