// What the convolution sample tests share: square shapes in one line, and random tensors from a
// fixed seed.
#pragma once

#include <cstdint>
#include <vector>

#include "conv_shape.hpp"
#include "verification.hpp"

namespace weft::samples::test {

// N images of hw x hw pixels, C -> K channels, an rs x rs filter, one stride and one padding.
inline ConvShape square_shape(std::int64_t n, std::int64_t hw, std::int64_t c, std::int64_t k, std::int64_t rs,
                              std::int64_t stride, std::int64_t pad) {
  return {.N = n, .H = hw, .W = hw, .C = c, .K = k, .R = rs, .S = rs, .stride_h = stride, .stride_w = stride,
          .pad_h = pad, .pad_w = pad};
}

inline std::vector<float> random_floats(std::int64_t count, std::uint64_t seed) {
  std::vector<float> v(static_cast<std::size_t>(count));
  fill_random(v.data(), count, seed);
  return v;
}

}  // namespace weft::samples::test
