// Private copies of an output that threads accumulate into where they would otherwise add into the
// same output blocks at once (the backward-by-weights samples' partial filters), and the parallel
// reduction that sums the copies into the output:
//
//   PartialSums partial(filter_floats, threads);
//   partial.start();                                   // every run: allocates, zeroes (in parallel)
//   loop([&](int* ind) { args.c = partial.copy(ThreadedLoop<7>::get_tid(ind)) + tile_offset; ... });
//   partial.reduce_into(grad_filter);                  // grad_filter = sum of the copies (in parallel)
//
// Why zeroed copies and beta = 1 rather than a first touch with beta = 0: which thread touches a
// block first depends on the loop string and the team, and a copy's untouched blocks must still
// add zero.
#pragma once

#include <cstdint>
#include <vector>

#include <weft/parlooper/threaded_loop.hpp>
#include <weft/tpp/unary.hpp>

namespace weft::samples {

class PartialSums {
 public:
  // `copies` copies of `size` floats. copies == 0: none (start() and reduce_into() must not be
  // called). Throws weft::Error when copies > 0 and a copy is larger than the reduction TPP's
  // stride between copies allows (kMaxCopyFloats).
  PartialSums(std::int64_t size, std::int64_t copies);

  std::int64_t copies() const { return copies_; }
  // Before every run: all copies zero.
  void start() const;
  float* copy(std::int64_t i) const { return data_.data() + i * size_; }
  // out[0, size) = sum over the copies.
  void reduce_into(float* out) const;
  // Bytes start() allocates.
  std::uint64_t memory_bytes() const;

  static constexpr std::int64_t kMaxCopyFloats = std::int64_t{1} << 28;

 private:
  std::int64_t size_, copies_, chunk_;
  tpp::Unary zero_chunk_, reduce_full_, reduce_tail_;
  parlooper::ThreadedLoop<2> zero_loop_;    // (copies, chunks), "AB"
  parlooper::ThreadedLoop<1> reduce_loop_;  // (chunks), "A"
  mutable std::vector<float> data_;
};

}  // namespace weft::samples
