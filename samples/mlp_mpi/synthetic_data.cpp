#include "synthetic_data.hpp"

#include <cmath>
#include <cstddef>

namespace weft::samples {

namespace {

// SplitMix64's finalizer: a bijection that spreads every input bit over the output, so neighbouring
// indices give independent-looking values.
std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

float synthetic_value(std::uint64_t seed, DataStream stream, std::uint64_t layer, std::uint64_t index) {
  const std::uint64_t h = mix(mix(mix(seed) ^ static_cast<std::uint64_t>(stream)) ^ layer) ^ index;
  // The top 24 bits: a float in [0, 1) exactly, then [-1, 1).
  return static_cast<float>(mix(h) >> 40) * 0x1p-24f * 2.0f - 1.0f;
}

std::vector<float> synthetic_columns(std::uint64_t seed, DataStream stream, std::int64_t rows, std::int64_t first,
                                     std::int64_t count) {
  std::vector<float> m(static_cast<std::size_t>(rows * count));
  for (std::int64_t j = 0; j < count; ++j) {
    for (std::int64_t i = 0; i < rows; ++i) {
      const float v =
          synthetic_value(seed, stream, 0, static_cast<std::uint64_t>((first + j) * rows + i));
      m[static_cast<std::size_t>(j * rows + i)] = stream == DataStream::target ? 0.5f * (v + 1.0f) : v;
    }
  }
  return m;
}

std::vector<float> synthetic_weights(std::uint64_t seed, int layer, std::int64_t width) {
  const float scale = std::sqrt(6.0f / static_cast<float>(width));
  std::vector<float> w(static_cast<std::size_t>(width * width));
  for (std::size_t i = 0; i < w.size(); ++i)
    w[i] = scale * synthetic_value(seed, DataStream::weight, static_cast<std::uint64_t>(layer), i);
  return w;
}

std::vector<float> synthetic_biases(std::uint64_t seed, int layer, std::int64_t width) {
  std::vector<float> b(static_cast<std::size_t>(width));
  for (std::size_t i = 0; i < b.size(); ++i)
    b[i] = 0.1f * synthetic_value(seed, DataStream::bias, static_cast<std::uint64_t>(layer), i);
  return b;
}

}  // namespace weft::samples
