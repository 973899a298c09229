#include "transposed_tiles.hpp"

#include <omp.h>

#include <weft/jit/error.hpp>  // bytes_needed, add_bytes

namespace weft::samples {
namespace {

tpp::UnaryDesc transpose_desc(std::int64_t rows, std::int64_t cols) {
  tpp::UnaryDesc d;
  d.op = tpp::UnaryOp::transpose;
  d.m = rows;
  d.n = cols;
  d.ld_in = rows;
  d.ld_out = cols;
  return d;
}

}  // namespace

TransposedTiles::TransposedTiles(std::int64_t rows, std::int64_t cols, std::int64_t outer, std::int64_t inner,
                                 bool swap, bool per_thread)
    : outer_(outer),
      inner_(inner),
      tile_(rows * cols),
      swap_(swap),
      per_thread_(per_thread),
      transpose_(transpose_desc(rows, cols)),
      all_tiles_({parlooper::LoopSpecs{0L, static_cast<long>(outer)}, parlooper::LoopSpecs{0L, static_cast<long>(inner)}},
                 "AB") {}

void TransposedTiles::start(const float* source) const {
  source_ = source;
  const auto floats = static_cast<std::size_t>(outer_ * inner_ * tile_);
  if (!per_thread_) {
    shared_.resize(floats);
    float* copy = shared_.data();
    all_tiles_([&](int* ind) {
      transpose_(source + (ind[0] * inner_ + ind[1]) * tile_, copy + offset(ind[0], ind[1]));
    });
    return;
  }
  const auto threads = static_cast<std::size_t>(omp_get_max_threads());
  copies_.resize(threads);
  done_.resize(threads);
  for (std::size_t t = 0; t < threads; ++t) {
    copies_[t].resize(floats);
    done_[t].assign(static_cast<std::size_t>(outer_ * inner_), 0);
  }
}

void TransposedTiles::transpose_once(int tid, std::int64_t o, std::int64_t i) const {
  char& done = done_[static_cast<std::size_t>(tid)][static_cast<std::size_t>(o * inner_ + i)];
  if (done != 0) return;
  done = 1;
  transpose_(source_ + (o * inner_ + i) * tile_, copies_[static_cast<std::size_t>(tid)].data() + offset(o, i));
}

std::uint64_t TransposedTiles::memory_bytes(int threads) const {
  const std::uint64_t copy = bytes_needed({outer_, inner_, tile_}, sizeof(float));
  if (!per_thread_) return copy;
  return add_bytes(bytes_needed({threads}, copy), bytes_needed({threads, outer_, inner_}, 1));
}

}  // namespace weft::samples
