#include <weft/ops/partial_sums.hpp>

#include <algorithm>
#include <string>

#include <weft/jit/error.hpp>

namespace weft::ops {
namespace {

// Stamps of different copies are written by different threads: keep them a cache line apart.
constexpr std::int64_t kStampsPerLine = 64 / sizeof(std::uint32_t);

std::int64_t validated_tile(std::int64_t tile_floats, std::int64_t tiles, std::int64_t copies) {
  if (tile_floats < 1 || tile_floats > (std::int64_t{1} << 28) || tiles < 1 || copies < 0 || copies > (1 << 20)) {
    throw Error("PartialSums: tiles of 1 .. 2^28 floats, at least one tile and 0 .. 2^20 copies, got tiles of " +
                std::to_string(tile_floats) + " floats, " + std::to_string(tiles) + " tiles, " +
                std::to_string(copies) + " copies");
  }
  return tile_floats;
}

tpp::UnaryDesc unary(tpp::UnaryOp op, std::int64_t floats) {
  tpp::UnaryDesc d;
  d.op = op;
  d.m = floats;
  d.n = 1;
  d.ld_in = floats;
  d.ld_out = floats;
  return d;
}

}  // namespace

PartialSums::PartialSums(std::int64_t tile_floats, std::int64_t tiles, std::int64_t copies, PassCode code)
    : tile_floats_(validated_tile(tile_floats, tiles, copies)),
      copies_(copies),
      size_(tile_floats * tiles),
      stamp_stride_((tiles + kStampsPerLine - 1) / kStampsPerLine * kStampsPerLine),
      zero_(make_kernel<tpp::Unary>(unary(tpp::UnaryOp::zero, tile_floats), code)),
      copy_(make_kernel<tpp::Unary>(unary(tpp::UnaryOp::copy, tile_floats), code)),
      add_(make_kernel<tpp::Binary>(tpp::BinaryDesc{.op = tpp::BinaryOp::add, .m = tile_floats, .n = 1,
                                                    .ld_in0 = tile_floats, .ld_in1 = tile_floats, .ld_out = tile_floats},
                                    code)),
      reduce_loop_(make_loop<1>({parlooper::LoopSpecs{0L, static_cast<long>(tiles)}}, "A", code)) {}

void PartialSums::start(float* out) const {
  out_ = out;
  stamps_.resize(static_cast<std::size_t>(copies_ * stamp_stride_));
  data_.resize(static_cast<std::size_t>(std::max<std::int64_t>(0, copies_ - 1) * size_));
  if (++run_ == 0) {  // the stamps wrapped around: no stale stamp may equal a new run's
    std::fill(stamps_.begin(), stamps_.end(), 0u);
    run_ = 1;
  }
}

void PartialSums::reduce() const {
  (*reduce_loop_)([&](int* ind) {
    const std::int64_t t = ind[0];
    float* out = out_ + t * tile_floats_;
    bool written = stamps_[static_cast<std::size_t>(t)] == run_;
    for (std::int64_t c = 1; c < copies_; ++c) {
      if (stamps_[static_cast<std::size_t>(c * stamp_stride_ + t)] != run_) continue;
      const float* part = data_.data() + (c - 1) * size_ + t * tile_floats_;
      if (written) {
        (*add_)(out, part, out);
      } else {
        (*copy_)(part, out);
        written = true;
      }
    }
    if (!written) (*zero_)(nullptr, out);
  });
}

std::uint64_t PartialSums::memory_bytes() const {
  return add_bytes(bytes_needed({std::max<std::int64_t>(0, copies_ - 1), size_}, sizeof(float)),
                   bytes_needed({copies_, stamp_stride_}, sizeof(std::uint32_t)));
}

}  // namespace weft::ops
