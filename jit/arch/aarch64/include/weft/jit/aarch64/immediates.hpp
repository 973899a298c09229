// The packed immediates of A64, for the assembler and for emitters that choose between an
// immediate form and a register:
//
//   encode_bitmask(0x00ff00ff00ff00ff, 64)  // N:immr:imms of and/orr/eor/ands/tst #imm, or nullopt
//   encode_fp_imm8(0.5)                     // imm8 of fmov #imm, or nullopt
#pragma once

#include <bit>
#include <cstdint>
#include <optional>

namespace weft::jit::a64 {

// A bitmask immediate is a run of ones, rotated, in an element of 2, 4, ..., 64 bits repeated to
// `width` (32 or 64) bits. Returns N:immr:imms (13 bits); nullopt for 0, all ones and other values.
// For width 32 the value must fit in 32 bits.
constexpr std::optional<std::uint32_t> encode_bitmask(std::uint64_t value, unsigned width) {
  if (width == 32) {
    if (value >> 32 != 0) return std::nullopt;
    value |= value << 32;
  }
  if (value == 0 || value == ~std::uint64_t{0}) return std::nullopt;
  unsigned size = 64;  // the smallest period of the value
  while (size > 2) {
    const unsigned half = size / 2;
    const std::uint64_t mask = (std::uint64_t{1} << half) - 1;
    if ((value & mask) != ((value >> half) & mask)) break;
    size = half;
  }
  const std::uint64_t mask = size == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << size) - 1;
  const std::uint64_t element = value & mask;
  const unsigned ones = static_cast<unsigned>(std::popcount(element));
  const std::uint64_t run = (std::uint64_t{1} << ones) - 1;  // ones < size, so < 64
  for (unsigned r = 0; r < size; ++r) {
    // element rotated right by r, within the element
    const std::uint64_t rotated = r == 0 ? element : ((element >> r) | (element << (size - r))) & mask;
    if (rotated == run) {
      const unsigned immr = (size - r) % size;  // the encoding rotates the run right by immr
      const unsigned imms = ((~(size * 2 - 1)) & 0x3F) | (ones - 1);
      const unsigned n = size == 64 ? 1 : 0;
      return n << 12 | immr << 6 | imms;
    }
  }
  return std::nullopt;
}

// The 8-bit floating-point immediate a:b:cd:efgh stands for (-1)^a * (16 + efgh) / 16 * 2^e, with
// e = cd - 3 when b is 1 and cd + 1 when b is 0 (-3..4). Returns imm8, or nullopt for other values.
constexpr std::optional<std::uint32_t> encode_fp_imm8(double value) {
  for (std::uint32_t imm8 = 0; imm8 < 256; ++imm8) {
    const bool b = (imm8 >> 6) & 1;
    const int cd = static_cast<int>((imm8 >> 4) & 3);
    const int exponent = b ? cd - 3 : cd + 1;
    double magnitude = static_cast<double>(16 + (imm8 & 15)) / 16.0;
    for (int i = 0; i < exponent; ++i) magnitude *= 2.0;
    for (int i = 0; i > exponent; --i) magnitude /= 2.0;
    if (((imm8 >> 7) ? -magnitude : magnitude) == value) return imm8;
  }
  return std::nullopt;
}

}  // namespace weft::jit::a64
