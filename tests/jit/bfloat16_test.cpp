// The bf16 conversions (jit/bfloat16.hpp): rounding, NaN, infinities, denormals, exactness of the
// way back (the agreement with VCVTNEPS2BF16 is in tests/jit/arch/x64/bf16_instruction_test.cpp).
#include <weft/jit/bfloat16.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>
#include <weft/jit/cpu.hpp>

namespace {

using weft::jit::bfloat16;
using weft::jit::to_bfloat16;
using weft::jit::to_float;

float from_bits(std::uint32_t u) { return std::bit_cast<float>(u); }
std::uint16_t bf16_bits(std::uint32_t u) { return to_bfloat16(from_bits(u)).bits; }

TEST(Bfloat16, RoundsToNearestTiesToEven) {
  EXPECT_EQ(bf16_bits(0x3f800000u), 0x3f80);  // 1.0 exact
  EXPECT_EQ(bf16_bits(0x3f808000u), 0x3f80);  // tie, even below
  EXPECT_EQ(bf16_bits(0x3f818000u), 0x3f82);  // tie, odd below: up
  EXPECT_EQ(bf16_bits(0x3f807fffu), 0x3f80);  // below the tie
  EXPECT_EQ(bf16_bits(0x3f808001u), 0x3f81);  // above the tie
  EXPECT_EQ(bf16_bits(0xbf818000u), 0xbf82);  // negative values alike
  EXPECT_EQ(bf16_bits(0x3fffffffu), 0x4000);  // the carry moves into the exponent
}

TEST(Bfloat16, KeepsInfinitiesAndRoundsPastTheLargestToInfinity) {
  EXPECT_EQ(bf16_bits(0x7f800000u), 0x7f80);
  EXPECT_EQ(bf16_bits(0xff800000u), 0xff80);
  EXPECT_EQ(bf16_bits(0x7f7fffffu), 0x7f80);  // FLT_MAX rounds up to inf
  EXPECT_EQ(bf16_bits(0x7f7f7fffu), 0x7f7f);  // the largest bf16
  EXPECT_EQ(bf16_bits(0xff7f8000u), 0xff80);  // tie above the largest (odd): -inf
}

TEST(Bfloat16, NanStaysNanMadeQuiet) {
  EXPECT_EQ(bf16_bits(0x7fc00000u), 0x7fc0);
  EXPECT_EQ(bf16_bits(0x7f800001u), 0x7fc0);  // signaling, payload only in the low bits: still NaN
  EXPECT_EQ(bf16_bits(0xffc00001u), 0xffc0);
  EXPECT_EQ(bf16_bits(0x7fa12345u), 0x7fe1);  // upper payload kept
  EXPECT_TRUE(std::isnan(to_float(to_bfloat16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(Bfloat16, FlushesDenormalsToSignedZero) {
  EXPECT_EQ(bf16_bits(0x00000000u), 0x0000);
  EXPECT_EQ(bf16_bits(0x80000000u), 0x8000);
  EXPECT_EQ(bf16_bits(0x007fffffu), 0x0000);  // would round to the smallest normal without the flush
  EXPECT_EQ(bf16_bits(0x80012345u), 0x8000);
  EXPECT_EQ(bf16_bits(0x00800000u), 0x0080);  // the smallest normal stays
}

TEST(Bfloat16, ToFloatIsExactAndRoundTrips) {
  for (std::uint32_t h = 0; h <= 0xffff; ++h) {
    const bfloat16 value{static_cast<std::uint16_t>(h)};
    const float f = to_float(value);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(f), h << 16);
    const bool nan = (h & 0x7f80) == 0x7f80 && (h & 0x7f) != 0, denormal = (h & 0x7f80) == 0 && (h & 0x7f) != 0;
    if (nan) {
      ASSERT_EQ(to_bfloat16(f).bits, h | 0x40) << std::hex << h;
    } else if (denormal) {
      ASSERT_EQ(to_bfloat16(f).bits, h & 0x8000) << std::hex << h;
    } else {
      ASSERT_EQ(to_bfloat16(f), value) << std::hex << h;
    }
  }
}

static_assert(to_bfloat16(1.0f).bits == 0x3f80 && to_float(bfloat16{0x4049}) == 3.140625f);

}  // namespace
