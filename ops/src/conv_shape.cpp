#include <weft/ops/conv_shape.hpp>

#include <cmath>
#include <initializer_list>
#include <utility>

#include <weft/jit/error.hpp>

namespace weft::ops {
namespace {

void require_range(std::initializer_list<std::pair<const char*, std::int64_t>> values, std::int64_t min) {
  for (const auto& [name, value] : values) {
    if (value < min || value > kMaxExtent) {
      throw Error(std::string("convolution shape: ") + name + " must be in [" + std::to_string(min) + ", " +
                  std::to_string(kMaxExtent) + "], got " + std::to_string(value));
    }
  }
}

}  // namespace

double ConvShape::flops() const {
  return 2.0 * static_cast<double>(N) * static_cast<double>(C) * static_cast<double>(K) *
         static_cast<double>(R) * static_cast<double>(S) * static_cast<double>(ofh()) *
         static_cast<double>(ofw());
}

void ConvShape::validate() const {
  require_range({{"N", N}, {"H", H}, {"W", W}, {"C", C}, {"K", K}, {"R", R}, {"S", S},
                 {"stride_h", stride_h}, {"stride_w", stride_w}}, 1);
  require_range({{"pad_h", pad_h}, {"pad_w", pad_w}}, 0);
  if (H + 2 * pad_h < R) {
    throw Error("convolution shape: the filter is taller than the padded image (R = " + std::to_string(R) +
                " > H + 2 pad_h = " + std::to_string(H + 2 * pad_h) + "): there is no output row");
  }
  if (W + 2 * pad_w < S) {
    throw Error("convolution shape: the filter is wider than the padded image (S = " + std::to_string(S) +
                " > W + 2 pad_w = " + std::to_string(W + 2 * pad_w) + "): there is no output column");
  }
  // Each extent is bounded, their products are not: a tensor beyond kMaxElements (far beyond any
  // memory) would wrap the 64-bit offsets of its blocked layout (channels padded to a block of up
  // to 4096, rims) and address the wrong memory. Counted in double: exact far past the bound.
  const auto d = [](std::int64_t v) { return static_cast<double>(v); };
  const struct {
    const char* name;
    double elements;
  } tensors[] = {{"input", d(N) * (d(C) + 4096) * (d(H) + 2 * d(pad_h)) * (d(W) + 2 * d(pad_w))},
                 {"output", d(N) * (d(K) + 4096) * (d(ofh()) + 2 * d(pad_h)) * (d(ofw()) + 2 * d(pad_w))},
                 {"filter", (d(K) + 4096) * (d(C) + 4096) * d(R) * d(S)}};
  for (const auto& t : tensors) {
    if (t.elements > d(kMaxElements)) {
      throw Error(std::string("convolution shape: the ") + t.name + " would hold about 2^" +
                  std::to_string(static_cast<int>(std::log2(t.elements))) +
                  " elements with its channel blocks and rims, more than weft addresses (2^48): " + to_string());
    }
  }
}

std::string ConvShape::to_string() const {
  auto s = [](std::int64_t v) { return std::to_string(v); };
  return "N " + s(N) + " H " + s(H) + " W " + s(W) + " C " + s(C) + " K " + s(K) + " R " + s(R) + " S " + s(S) +
         " stride " + s(stride_h) + " " + s(stride_w) + " pad " + s(pad_h) + " " + s(pad_w);
}

}  // namespace weft::ops
