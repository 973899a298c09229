// bfloat16 values (binary32's upper 16 bits) and the conversions every weft path uses, generated
// code and references alike, so that a bf16 result has the same bits whichever ISA computed it:
//
//   weft::jit::bfloat16 h = weft::jit::to_bfloat16(1.00390625f);  // 0x3f80: the tie rounds to even
//   float f = weft::jit::to_float(h);                             // 1.0f, exact
//
// to_bfloat16 is AVX512_BF16's VCVTNEPS2BF16, bit for bit (checked against it on Zen 4 by
// tests/jit/bfloat16_test.cpp): round to nearest, ties to even; a NaN stays a NaN, made quiet
// (bit 6 of the result set), sign and upper payload kept; a denormal input gives a zero of its sign
// (the instruction treats denormals as zero whatever MXCSR says), and a finite value that rounds
// past the largest bf16 gives infinity. to_float is exact (bf16 is a prefix of binary32).
#pragma once

#include <bit>
#include <cstdint>

namespace weft::jit {

struct bfloat16 {
  std::uint16_t bits = 0;
  friend constexpr bool operator==(bfloat16, bfloat16) = default;
};

constexpr float to_float(bfloat16 h) { return std::bit_cast<float>(static_cast<std::uint32_t>(h.bits) << 16); }

constexpr bfloat16 to_bfloat16(float x) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  const std::uint32_t exponent = u & 0x7f800000u, mantissa = u & 0x007fffffu;
  if (exponent == 0x7f800000u && mantissa != 0) return {static_cast<std::uint16_t>((u >> 16) | 0x0040u)};
  if (exponent == 0) return {static_cast<std::uint16_t>((u >> 16) & 0x8000u)};  // zero or denormal
  const std::uint32_t rounded = u + 0x7fffu + ((u >> 16) & 1u);  // carries into the exponent: up to inf
  return {static_cast<std::uint16_t>(rounded >> 16)};
}

}  // namespace weft::jit
