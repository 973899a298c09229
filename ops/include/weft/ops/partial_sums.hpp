// Partial sums of a tiled output that several threads add into (the backward-by-weights passes'
// partial filters): copy 0 is the output itself, copies 1 .. P-1 are private buffers; each copy is
// written by one thread at a time, and a parallel reduction adds the copies into the output.
//
//   PartialSums partial(bc * bk, tiles, threads);
//   partial.start(grad_filter);                             // every run, before the loop
//   loop([&](int* ind) {
//     bool first;
//     args.c = partial.tile(ThreadedLoop<7>::get_tid(ind), tile, first);
//     (first ? beta0 : beta1)(args);                        // first touch of this tile in this copy
//   });
//   partial.reduce();                                       // grad_filter = sum of the copies
//
// Why first touches rather than zeroed copies: zeroing P copies up front writes P times the
// output before any work starts; a copy's first touch of a tile can write it with beta = 0
// instead, and the reduction skips the tiles a copy never touched. Why the output as copy 0: its
// tiles need no copy and no reduction when no other copy touched them (a thread that owns whole
// tiles), and the reduction reads one buffer fewer.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <weft/ops/pass_code.hpp>
#include <weft/parlooper/threaded_loop.hpp>
#include <weft/tpp/binary.hpp>
#include <weft/tpp/unary.hpp>

namespace weft::ops {

class PartialSums {
 public:
  // An output of `tiles` tiles of `tile_floats` contiguous floats each, summed from `copies`
  // copies (the output and copies - 1 private ones). copies 0 or 1: nothing to sum; start(),
  // tile() and reduce() must not be called. Throws weft::Error for sizes out of range. With
  // PassCode::check the kernels and the reduction's loop are planned only (pass_code.hpp), and
  // reduce() must not be called.
  PartialSums(std::int64_t tile_floats, std::int64_t tiles, std::int64_t copies, PassCode code = PassCode::build);

  std::int64_t copies() const { return copies_; }
  // Before every run: forgets the previous run's touches; `out` is the output (copy 0).
  void start(float* out) const;
  // Tile `tile` of copy `copy`; `first` tells whether this is the copy's first touch of it in this
  // run (write it then, do not add to it). One thread at a time per copy.
  float* tile(std::int64_t copy, std::int64_t tile, bool& first) const {
    std::uint32_t& stamp = stamps_[static_cast<std::size_t>(copy * stamp_stride_ + tile)];
    first = stamp != run_;
    stamp = run_;
    return (copy == 0 ? out_ : data_.data() + (copy - 1) * size_) + tile * tile_floats_;
  }
  // After the run (in parallel over the tiles): each output tile = the sum of the copies' touched
  // tiles, zero where no copy touched it.
  void reduce() const;
  // Bytes start() allocates.
  std::uint64_t memory_bytes() const;

 private:
  std::int64_t tile_floats_, copies_, size_, stamp_stride_;
  // None in check mode.
  std::optional<tpp::Unary> zero_, copy_;
  std::optional<tpp::Binary> add_;
  std::optional<parlooper::ThreadedLoop<1>> reduce_loop_;  // (tiles), "A"
  mutable float* out_ = nullptr;
  mutable std::uint32_t run_ = 0;            // the stamp of the current run's touches
  mutable std::vector<std::uint32_t> stamps_;  // [copies][stamp_stride_]: the run that last touched a tile
  mutable std::vector<float> data_;            // copies 1 .. copies - 1
};

}  // namespace weft::ops
