// The transcendentals' (exp, sigmoid, tanh, gelu) results as bits, the same on every ISA: each
// activation emitter evaluates the same polynomials (tpp/src/activation_coefficients.hpp) with the
// same sequence of FMAs and roundings, so the x86 kernels (avx2, avx512) and the Neon emitter give
// the same floats (NaN payloads aside: a NaN counts as one value here). The suites hash each op's
// outputs over one sample of inputs and compare with the hashes recorded below:
// tests/tpp/activation_bits_test.cpp for the unary kernels of every ISA the host runs, and
// tests/tpp/arch/aarch64/neon_activation_test.cpp for the Neon emitter. A change of an algorithm
// changes the hash on every ISA at once; the tests print the new one, to record once all agree.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "weft/tpp/unary.hpp"

namespace weft::test {

// Every 2053rd float bit pattern (both signs, all exponents, denormals, infinities, NaNs), 65536
// fixed-seed random patterns, and the edges of the formulas with their neighbours.
inline std::vector<float> activation_whole_range() {
  std::vector<float> xs;
  xs.reserve((std::uint64_t{1} << 32) / 2053 + 65536 + 128);
  for (std::uint64_t b = 0; b < (std::uint64_t{1} << 32); b += 2053)
    xs.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(b)));
  std::mt19937 rng(20240527);
  for (int i = 0; i < 65536; ++i) xs.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(rng())));
  const float inf = std::numeric_limits<float>::infinity();
  const float edges[] = {0.0f, -0.0f, 1e-45f, -1e-45f, 1e-40f, -1e-40f, 1.17549435e-38f, -1.17549435e-38f,
                         3.40282347e38f, -3.40282347e38f, inf, -inf, 88.7228f, 88.72284f, 88.7229f, -87.33655f,
                         -103.97f, -104.0f, -104.5f, 0.55f, -0.55f, 0.5499999f, 0.8f, -0.8f, 0.7999999f, -15.0f,
                         -14.1f, 15.0f, 9.01f, -9.01f, 1e-8f, -1e-8f, 0.3465736f, -0.3465736f, 89.0f, -100.0f,
                         -110.0f, 17.0f, 20.0f, -30.0f, 1e30f, -1e30f};
  for (float e : edges) {
    xs.push_back(e);
    xs.push_back(std::nextafter(e, 0.0f));
    xs.push_back(std::nextafter(e, inf));
  }
  return xs;
}

// `count` evenly spaced points of [lo, hi] (from integers: the same floats on every host).
inline std::vector<float> activation_dense(float lo, float hi, int count) {
  std::vector<float> xs(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i)
    xs[static_cast<std::size_t>(i)] =
        static_cast<float>(static_cast<double>(lo) + (static_cast<double>(hi) - lo) * i / (count - 1));
  return xs;
}

// The sample the recorded hashes are of: the whole range, then 400001 points of [-20, 20].
inline std::vector<float> activation_bits_sample() {
  std::vector<float> xs = activation_whole_range();
  const std::vector<float> core = activation_dense(-20.0f, 20.0f, 400001);
  xs.insert(xs.end(), core.begin(), core.end());
  return xs;
}

// FNV-1a over the results' bits, every NaN as 0x7fc00000.
inline std::uint64_t activation_bits_hash(std::span<const float> out) {
  std::uint64_t h = 1469598103934665603ull;
  for (float f : out) {
    const std::uint32_t bits = std::isnan(f) ? 0x7fc00000u : std::bit_cast<std::uint32_t>(f);
    for (int shift = 0; shift < 32; shift += 8) h = (h ^ ((bits >> shift) & 0xffu)) * 1099511628211ull;
  }
  return h;
}

// The hashes of exp, sigmoid, tanh and gelu over activation_bits_sample() (avx2, avx512 and Neon
// alike); 0 for other ops.
inline std::uint64_t recorded_activation_hash(weft::tpp::UnaryOp op) {
  switch (op) {
    case weft::tpp::UnaryOp::exp: return 0xca6091940a934f31ull;
    case weft::tpp::UnaryOp::sigmoid: return 0x0ad6e6333999c7a4ull;
    case weft::tpp::UnaryOp::tanh: return 0xfec3e0928ae23954ull;
    case weft::tpp::UnaryOp::gelu: return 0x4718827abed1caccull;
    default: return 0;
  }
}

}  // namespace weft::test
