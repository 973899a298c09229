#include "partial_sums.hpp"

#include <algorithm>

#include <weft/jit/error.hpp>

namespace weft::samples {
namespace {

// Floats per zeroing / reduction task: large enough to amortize a call, small enough to balance.
constexpr std::int64_t kChunk = 4096;

tpp::UnaryDesc desc(tpp::UnaryOp op, std::int64_t m, std::int64_t n, std::int64_t ld_in, std::int64_t ld_out) {
  tpp::UnaryDesc d;
  d.op = op;
  d.m = m;
  d.n = n;
  d.ld_in = ld_in;
  d.ld_out = ld_out;
  return d;
}

std::int64_t validated_size(std::int64_t size, std::int64_t copies) {
  if (size < 1 || copies < 0) {
    throw Error("PartialSums: size must be positive and copies >= 0, got " + std::to_string(size) + " and " +
                std::to_string(copies));
  }
  if (copies > 0 && size > PartialSums::kMaxCopyFloats) {
    throw Error("partial sums of " + std::to_string(size) +
                " floats per copy: the reduction TPP that adds the copies reads them at most 2^28 floats apart");
  }
  return size;
}

long chunks_of(std::int64_t size) { return static_cast<long>((size + kChunk - 1) / kChunk); }

}  // namespace

PartialSums::PartialSums(std::int64_t size, std::int64_t copies)
    : size_(validated_size(size, copies)),
      copies_(copies),
      chunk_(std::min(kChunk, size)),
      zero_chunk_(desc(tpp::UnaryOp::zero, chunk_, 1, chunk_, chunk_)),
      // A chunk of the output = the sum along the rows of a (chunk x copies) matrix whose columns are
      // the copies, size_ apart. Without copies these kernels never run; their stride only has to be valid.
      reduce_full_(desc(tpp::UnaryOp::reduce_rows_sum, chunk_, std::max<std::int64_t>(1, copies),
                        copies > 0 ? size : chunk_, 0)),
      reduce_tail_(desc(tpp::UnaryOp::reduce_rows_sum, size % chunk_ == 0 ? chunk_ : size % chunk_,
                        std::max<std::int64_t>(1, copies), copies > 0 ? size : chunk_, 0)),
      zero_loop_({parlooper::LoopSpecs{0L, std::max(1L, static_cast<long>(copies))},
                  parlooper::LoopSpecs{0L, chunks_of(size)}},
                 "AB"),
      reduce_loop_({parlooper::LoopSpecs{0L, chunks_of(size)}}, "A") {}

void PartialSums::start() const {
  data_.resize(static_cast<std::size_t>(copies_ * size_));
  float* copies = data_.data();
  zero_loop_([&](int* ind) {
    const std::int64_t begin = ind[1] * chunk_;
    const std::int64_t count = std::min(chunk_, size_ - begin);
    float* out = copies + ind[0] * size_ + begin;
    if (count == chunk_) {
      zero_chunk_(nullptr, out);
    } else {
      std::fill(out, out + count, 0.0f);  // one short tail per copy
    }
  });
}

void PartialSums::reduce_into(float* out) const {
  const float* copies = data_.data();
  reduce_loop_([&](int* ind) {
    const std::int64_t begin = ind[0] * chunk_;
    (begin + chunk_ > size_ ? reduce_tail_ : reduce_full_)(copies + begin, out + begin);
  });
}

std::uint64_t PartialSums::memory_bytes() const { return bytes_needed({copies_, size_}, sizeof(float)); }

}  // namespace weft::samples
