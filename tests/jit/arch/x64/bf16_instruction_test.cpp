// Where the CPU has AVX512_BF16, jit/bfloat16.hpp's to_bfloat16 agrees bit for bit with
// VCVTNEPS2BF16 on every class of input and on a fixed-seed sample of all bit patterns.
#include <immintrin.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>
#include <weft/jit/bfloat16.hpp>
#include <weft/jit/cpu.hpp>

namespace {

using weft::jit::to_bfloat16;

float from_bits(std::uint32_t u) { return std::bit_cast<float>(u); }

// VCVTNEPS2BF16 on 16 floats, for the CPUs that have it.
__attribute__((target("avx512f,avx512bf16,avx512vl"))) void hardware_convert(const float* in, std::uint16_t* out) {
  const __m256bh r = _mm512_cvtneps_pbh(_mm512_loadu_ps(in));
  std::memcpy(out, &r, sizeof r);
}

TEST(Bfloat16, AgreesWithVcvtneps2bf16) {
  if (!weft::jit::cpu_features().avx512bf16) GTEST_SKIP() << "the CPU has no AVX512_BF16";
  std::vector<std::uint32_t> patterns = {0x00000000u, 0x80000000u, 0x007fffffu, 0x00400000u, 0x80012345u,
                                         0x00800000u, 0x3f808000u, 0x3f818000u, 0x3f807fffu, 0x7f7fffffu,
                                         0x7f7f7fffu, 0x7f800000u, 0xff800000u, 0x7f800001u, 0xffc00001u,
                                         0x7fa12345u};
  std::mt19937 random(20261124);
  for (int i = 0; i < (1 << 20); ++i) patterns.push_back(static_cast<std::uint32_t>(random()));
  while (patterns.size() % 16 != 0) patterns.push_back(0x3f800000u);
  for (std::size_t i = 0; i < patterns.size(); i += 16) {
    float in[16];
    std::uint16_t out[16];
    for (int j = 0; j < 16; ++j) in[j] = from_bits(patterns[i + static_cast<std::size_t>(j)]);
    hardware_convert(in, out);
    for (int j = 0; j < 16; ++j) {
      ASSERT_EQ(to_bfloat16(in[j]).bits, out[j]) << std::hex << patterns[i + static_cast<std::size_t>(j)];
    }
  }
}

}  // namespace
