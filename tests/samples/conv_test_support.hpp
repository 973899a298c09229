// What the convolution sample tests share: square shapes in one line, random tensors from a fixed
// seed, and rims set to a value (NaN: a pass that reads them shows it).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include <weft/ops/verification.hpp>

#include <weft/ops/conv_layout.hpp>
#include <weft/ops/conv_model.hpp>
#include <weft/ops/conv_shape.hpp>
#include "resnet50_layers.hpp"

namespace weft::samples::test {

// N images of hw x hw pixels, C -> K channels, an rs x rs filter, one stride and one padding.
inline ops::ConvShape square_shape(std::int64_t n, std::int64_t hw, std::int64_t c, std::int64_t k, std::int64_t rs,
                                   std::int64_t stride, std::int64_t pad) {
  return {.N = n, .H = hw, .W = hw, .C = c, .K = k, .R = rs, .S = rs, .stride_h = stride, .stride_w = stride,
          .pad_h = pad, .pad_w = pad};
}

inline std::vector<float> random_floats(std::int64_t count, std::uint64_t seed) {
  std::vector<float> v(static_cast<std::size_t>(count));
  ops::fill_random(v.data(), count, seed);
  return v;
}

// Every channel of every rim pixel (rows above and below the image, columns left and right) of a
// blocked activation tensor in layout l.
inline void fill_rims(std::vector<float>& blocked, const ops::ActivationLayout& l, float value) {
  for (std::int64_t n = 0; n < l.images; ++n)
    for (std::int64_t cb = 0; cb < l.channels.blocks(); ++cb)
      for (std::int64_t y = 0; y < l.padded_h(); ++y)
        for (std::int64_t x = 0; x < l.padded_w(); ++x)
          if (y < l.pad_h || y >= l.pad_h + l.h || x < l.pad_w || x >= l.pad_w + l.w)
            std::fill_n(blocked.begin() + l.offset(n, cb, y, x), l.channels.block, value);
}

// The machine model's tests (conv_model.hpp): a Zen 3's L2 and the Xeon's of 2026-11-27, both with
// AVX-512's row panels (64 rows), and a Zen 3 as it is (AVX2: 32 rows).
constexpr ops::ConvMachine kSmallL2{.l2_bytes = std::size_t{512} << 10};
constexpr ops::ConvMachine kLargeL2{.l2_bytes = std::size_t{2} << 20};
constexpr ops::ConvMachine kAvx2Zen3{.l2_bytes = std::size_t{512} << 10, .gemm_rows = 32};

// Every ResNet-50 layer at N = 1 (layers_file: the list), and shapes outside it: odd channels,
// odd images, 5x5, strides, more images than threads, a 1x3 filter.
// Whether `l` is plain N x C x h x w: blocks of one channel, no rims (a pass's plain output).
inline bool is_nchw(const ops::ActivationLayout& l, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
  return l.images == n && l.channels.size == c && l.channels.block == 1 && l.h == h && l.w == w && l.pad_h == 0 &&
         l.pad_w == 0 && l.size() == n * c * h * w;
}

inline std::vector<ops::ConvShape> model_test_shapes(const char* layers_file) {
  std::vector<ops::ConvShape> shapes;
  for (const ConvLayer& l : read_resnet50_layers(layers_file))
    shapes.push_back(square_shape(1, l.H, l.C, l.K, l.R, l.stride, l.pad));
  shapes.push_back(square_shape(1, 13, 96, 40, 5, 1, 2));
  shapes.push_back(square_shape(3, 17, 24, 72, 3, 2, 1));
  shapes.push_back(square_shape(1, 9, 1000, 1000, 1, 1, 0));
  shapes.push_back({.N = 2, .H = 5, .W = 31, .C = 7, .K = 130, .R = 1, .S = 3, .pad_w = 1});
  return shapes;
}

}  // namespace weft::samples::test
