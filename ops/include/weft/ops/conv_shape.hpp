// The shape of a 2-D convolution as PARLOOPER's convolution samples take it: N images of C channels
// of H x W pixels, K filters of C x R x S, strides and symmetric zero padding. Output rows and
// columns follow from it: ofh = (H + 2 pad_h - R) / stride_h + 1 (likewise ofw).
#pragma once

#include <cstdint>
#include <string>

namespace weft::ops {

struct ConvShape {
  std::int64_t N = 0, H = 0, W = 0, C = 0, K = 0, R = 1, S = 1;
  std::int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;

  std::int64_t ofh() const { return (H + 2 * pad_h - R) / stride_h + 1; }
  std::int64_t ofw() const { return (W + 2 * pad_w - S) / stride_w + 1; }
  // 2 N C K R S ofh ofw: every pass (forward, backward by data, by weights) computes as many.
  double flops() const;

  // Throws weft::Error naming the first field out of range: sizes and strides must be positive,
  // paddings non-negative, the padded image at least as large as the filter, every size at most
  // kMaxExtent and each tensor (with its channel blocks and rims) at most kMaxElements elements (so
  // that index arithmetic in int64 and the kernels' int32 fields cannot overflow).
  void validate() const;

  // "N 1 H 56 W 56 C 64 K 64 R 3 S 3 stride 1 1 pad 1 1"
  std::string to_string() const;
};

inline constexpr std::int64_t kMaxExtent = 1 << 20;
inline constexpr std::int64_t kMaxElements = std::int64_t{1} << 48;

}  // namespace weft::ops
