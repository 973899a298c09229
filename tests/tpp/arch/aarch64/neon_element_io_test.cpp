// The Neon element moves (tpp/src/arch/aarch64/element_io.cpp): small kernels load count elements
// of one type and store them as another, for every count 1..lanes of f32, f64 and bf16, with the
// elements flush against a guard page on either side (one byte too many faults), at offsets that
// take each addressing path (scaled, unscaled, through the address register, far beyond both);
// bf16 stores round bit for bit as jit::to_bfloat16 (ties, NaNs quiet and signalling, denormals,
// the largest finite values that round to infinity, zeros, random patterns) or keep the bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "element_io.hpp"
#include "guarded_buffer.hpp"
#include "weft/jit/aarch64/code_buffer.hpp"
#include "weft/jit/bfloat16.hpp"
#include "weft/jit/error.hpp"

namespace {

using namespace weft::jit::a64;
using weft::jit::DataType;
using weft::test::Flush;
using weft::test::GuardedBuffer;
using weft::tpp::neon::ElementIo;
using weft::tpp::neon::lanes_of;
using Store = ElementIo::Bf16Store;

// void kernel(const void* in, void* out, void* echo): count elements of `in_type` at in + in_offset
// into v0 (compute type), stored as `out_type` at out + out_offset, then v0's whole vector to echo
// (so that a test sees v0 unchanged by the store). Two ElementIo with registers of their own.
struct MoveKernel : CodeBuffer {
  MoveKernel(DataType in_type, DataType out_type, DataType compute, int count, std::int64_t in_offset,
             std::int64_t out_offset, Store mode = Store::round) {
    const std::array<VReg, 2> in_constants{v16, v17}, out_constants{v18, v19};
    const std::array<VReg, 3> in_scratch{v24, v25, v26}, out_scratch{v20, v21, v22};
    ElementIo in(*this, in_type, compute, x16, in_constants, in_scratch);
    ElementIo out(*this, out_type, compute, x17, out_constants, out_scratch);
    in.setup();
    out.setup();
    in.load(v0, x0, in_offset, count);
    out.store(x1, out_offset, v0, count, mode);
    str(q0, ptr(x2));
    ret();
  }
  using Fn = void (*)(const void*, void*, void*);
};

// `p` moved back by `offset` bytes, so that the kernel's [base + offset] is p (integer arithmetic:
// the base itself may point anywhere).
template <class T>
void* shifted(T* p, std::int64_t offset) {
  return reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(p) - static_cast<std::uintptr_t>(offset));
}

// Offsets of every addressing path of a 2-, 4-, 8- and 16-byte access and of the lane's address:
// 0, scaled, unscaled (negative, odd multiples), scaled maxima and just past them, multiples of
// 4096 (add's shifted immediate), and far beyond every immediate (both signs).
const std::vector<std::int64_t> kOffsets = {0,       2,        4,       8,       12,      16,         24,
                                            -2,      -4,       -8,      -16,     -256,    250,        -258,
                                            8190,    16380,    32760,   65520,   65536,   4096 * 4095, 4096 * 4096,
                                            -4094,   -4096,    -65536,  1 << 20, 8200,    (1ll << 33) + 6,
                                            -(1ll << 33) - 10};

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }
float from_bits(std::uint32_t u) { return std::bit_cast<float>(u); }

// Random bits of every kind: mostly ordinary values, with NaNs, infinities and denormals among them.
std::uint32_t random_f32_bits(std::mt19937& rng) { return static_cast<std::uint32_t>(rng()); }

template <class T>
void fill_random(T* p, std::size_t count, std::mt19937& rng) {
  for (std::size_t i = 0; i < count; ++i) {
    if constexpr (sizeof(T) == 8) {
      const std::uint64_t u = (std::uint64_t{rng()} << 32) | rng();
      std::memcpy(&p[i], &u, 8);
    } else if constexpr (sizeof(T) == 4) {
      const std::uint32_t u = random_f32_bits(rng);
      std::memcpy(&p[i], &u, 4);
    } else {
      const auto u = static_cast<std::uint16_t>(rng());
      std::memcpy(&p[i], &u, 2);
    }
  }
}

std::string where(int count, std::int64_t in_offset, std::int64_t out_offset, Flush flush) {
  return "count " + std::to_string(count) + " in offset " + std::to_string(in_offset) + " out offset " +
         std::to_string(out_offset) + (flush == Flush::back ? " flush back" : " flush front");
}

// Same-type round trip for f32 and f64: every count, both guard sides, every offset (as the load's
// and, reversed, as the store's), and the echo of v0 equals what was loaded.
template <class T>
void same_type_round_trip(DataType type) {
  std::mt19937 rng(11);
  const int lanes = lanes_of(type);
  for (int count = 1; count <= lanes; ++count) {
    for (Flush flush : {Flush::back, Flush::front}) {
      for (std::size_t o = 0; o < kOffsets.size(); ++o) {
        const std::int64_t in_offset = kOffsets[o], out_offset = kOffsets[kOffsets.size() - 1 - o];
        SCOPED_TRACE(where(count, in_offset, out_offset, flush));
        GuardedBuffer<T> in(static_cast<std::size_t>(count), flush), out(static_cast<std::size_t>(count), flush);
        fill_random(in.data(), in.size(), rng);
        fill_random(out.data(), out.size(), rng);
        alignas(16) std::array<T, 16 / sizeof(T)> echo{};
        MoveKernel code(type, type, type, count, in_offset, out_offset);
        code.finalize<MoveKernel::Fn>("element io test")(shifted(in.data(), in_offset), shifted(out.data(), out_offset),
                                                         echo.data());
        ASSERT_EQ(std::memcmp(in.data(), out.data(), in.size() * sizeof(T)), 0);
        ASSERT_EQ(std::memcmp(in.data(), echo.data(), in.size() * sizeof(T)), 0);
      }
    }
  }
}

TEST(NeonElementIo, F32EveryCountAtGuardPagesAndEveryOffset) { same_type_round_trip<float>(DataType::f32); }
TEST(NeonElementIo, F64EveryCountAtGuardPagesAndEveryOffset) { same_type_round_trip<double>(DataType::f64); }

// bf16 in memory, f32 in the vector: a load widens exactly (every bf16 is a binary32 prefix), a
// keep_bits store gives the bits back (signalling NaNs and denormals too), a rounding store gives
// to_bfloat16 of the widened value; all at both guard sides and every offset.
TEST(NeonElementIo, Bf16EveryCountAtGuardPagesAndEveryOffset) {
  std::mt19937 rng(12);
  for (int count = 1; count <= 4; ++count) {
    for (Flush flush : {Flush::back, Flush::front}) {
      for (std::size_t o = 0; o < kOffsets.size(); ++o) {
        const std::int64_t in_offset = kOffsets[o], out_offset = kOffsets[kOffsets.size() - 1 - o];
        SCOPED_TRACE(where(count, in_offset, out_offset, flush));
        const auto n = static_cast<std::size_t>(count);
        GuardedBuffer<std::uint16_t> in(n, flush), out(n, flush), rounded(n, flush);
        GuardedBuffer<float> widened(n, flush);
        fill_random(in.data(), n, rng);
        alignas(16) std::array<float, 4> echo{};
        MoveKernel keep(DataType::bf16, DataType::bf16, DataType::f32, count, in_offset, out_offset, Store::keep_bits);
        keep.finalize<MoveKernel::Fn>("keep")(shifted(in.data(), in_offset), shifted(out.data(), out_offset),
                                              echo.data());
        MoveKernel round(DataType::bf16, DataType::bf16, DataType::f32, count, in_offset, out_offset);
        round.finalize<MoveKernel::Fn>("round")(shifted(in.data(), in_offset), shifted(rounded.data(), out_offset),
                                                echo.data());
        MoveKernel widen(DataType::bf16, DataType::f32, DataType::f32, count, in_offset, out_offset);
        widen.finalize<MoveKernel::Fn>("widen")(shifted(in.data(), in_offset), shifted(widened.data(), out_offset),
                                                echo.data());
        for (std::size_t i = 0; i < n; ++i) {
          const weft::jit::bfloat16 h{in[i]};
          ASSERT_EQ(out[i], in[i]) << i;
          ASSERT_EQ(bits(widened[i]), std::uint32_t{in[i]} << 16) << i;
          ASSERT_EQ(bits(echo[i]), std::uint32_t{in[i]} << 16) << i;
          ASSERT_EQ(rounded[i], weft::jit::to_bfloat16(weft::jit::to_float(h)).bits) << i;
        }
      }
    }
  }
}

// f32 values in groups of 4 (and the last group's 1..3) through a rounding bf16 store, against
// to_bfloat16; each kernel's echo shows the stored vector unchanged.
void check_rounding(const std::vector<std::uint32_t>& values, Store mode) {
  std::array<MoveKernel::Fn, 5> fns{};
  std::vector<std::unique_ptr<MoveKernel>> kernels;
  for (int count = 1; count <= 4; ++count) {
    kernels.push_back(std::make_unique<MoveKernel>(DataType::f32, DataType::bf16, DataType::f32, count, 0, 0, mode));
    fns[static_cast<std::size_t>(count)] = kernels.back()->finalize<MoveKernel::Fn>("round");
  }
  for (std::size_t i = 0; i < values.size(); i += 4) {
    const int count = static_cast<int>(std::min<std::size_t>(4, values.size() - i));
    for (int c = 1; c <= count; c += (count == 4 ? 3 : 1)) {  // 1 and 4 for full groups, each for the last
      const auto n = static_cast<std::size_t>(c);
      GuardedBuffer<std::uint32_t> in(n);
      GuardedBuffer<std::uint16_t> out(n);
      std::memcpy(in.data(), &values[i], n * 4);
      alignas(16) std::array<std::uint32_t, 4> echo{};
      fns[n](in.data(), out.data(), echo.data());
      for (std::size_t k = 0; k < n; ++k) {
        const std::uint32_t u = values[i + k];
        const std::uint16_t expected =
            mode == Store::round ? weft::jit::to_bfloat16(from_bits(u)).bits : static_cast<std::uint16_t>(u >> 16);
        ASSERT_EQ(out[k], expected) << std::hex << "input 0x" << u << " gave 0x" << out[k] << ", expected 0x"
                                    << expected;
        ASSERT_EQ(echo[k], u) << std::hex << "the store changed its vector: 0x" << u;
      }
    }
  }
}

// Every sign, the exponents at the edges (0: zeros and denormals; 0xff: infinities and NaNs), and
// mantissas around each rounding boundary of the upper half: below, at and above the tie with an
// even and an odd kept bit, the quiet bit alone or absent (signalling NaNs), all ones.
std::vector<std::uint32_t> interesting_values() {
  const std::uint32_t exponents[] = {0x00, 0x01, 0x02, 0x7e, 0x7f, 0x80, 0xfd, 0xfe, 0xff};
  const std::uint32_t mantissas[] = {0x000000, 0x000001, 0x007fff, 0x008000, 0x008001, 0x00ffff, 0x010000,
                                     0x017fff, 0x018000, 0x018001, 0x01ffff, 0x3f8000, 0x3fffff, 0x400000,
                                     0x400001, 0x408000, 0x40ffff, 0x7f0000, 0x7f7fff, 0x7f8000, 0x7f8001,
                                     0x7fff7f, 0x7fffff, 0x2a8000, 0x550000};
  std::vector<std::uint32_t> v;
  for (std::uint32_t sign : {0u, 0x80000000u})
    for (std::uint32_t e : exponents)
      for (std::uint32_t m : mantissas) v.push_back(sign | e << 23 | m);
  return v;
}

TEST(NeonElementIo, Bf16RoundingOfInterestingPatternsMatchesToBfloat16) {
  const std::vector<std::uint32_t> values = interesting_values();
  // The cases the rounding must get right are among them.
  auto has = [&](std::uint32_t u) { return std::find(values.begin(), values.end(), u) != values.end(); };
  ASSERT_TRUE(has(0x7f7fffffu));  // largest finite: rounds to inf
  ASSERT_TRUE(has(0x7f800001u));  // signalling NaN
  ASSERT_TRUE(has(0xff800000u));  // -inf
  ASSERT_TRUE(has(0x80000000u));  // -0
  ASSERT_TRUE(has(0x00000001u));  // smallest denormal
  ASSERT_TRUE(has(0x3f808000u));  // tie, even kept bit: down
  ASSERT_TRUE(has(0x3f818000u));  // tie, odd kept bit: up
  check_rounding(values, Store::round);
}

TEST(NeonElementIo, Bf16RoundingOfRandomValuesMatchesToBfloat16) {
  std::mt19937 rng(2024);
  std::vector<std::uint32_t> values(40000);
  for (std::uint32_t& u : values) u = static_cast<std::uint32_t>(rng());
  // Random values near the ties, of every exponent.
  for (int i = 0; i < 8000; ++i) {
    const auto u = static_cast<std::uint32_t>(rng());
    constexpr std::uint32_t kLow[] = {0x7fff, 0x8000, 0x8001, 0x8000};  // below, at, above the tie
    values.push_back((u & 0xffff0000u) | kLow[u & 3u]);
  }
  check_rounding(values, Store::round);
}

TEST(NeonElementIo, Bf16KeepBitsTakesTheUpperHalves) {
  std::vector<std::uint32_t> values = interesting_values();
  std::mt19937 rng(7);
  for (int i = 0; i < 4000; ++i) values.push_back(static_cast<std::uint32_t>(rng()));
  check_rounding(values, Store::keep_bits);
}

// Every bf16 pattern: widened exactly, given back by keep_bits, rounded as to_bfloat16 of its float.
TEST(NeonElementIo, EveryBf16PatternWidensAndComesBack) {
  MoveKernel keep(DataType::bf16, DataType::bf16, DataType::f32, 4, 0, 0, Store::keep_bits);
  MoveKernel round(DataType::bf16, DataType::bf16, DataType::f32, 4, 0, 0);
  auto keep_fn = keep.finalize<MoveKernel::Fn>("keep");
  auto round_fn = round.finalize<MoveKernel::Fn>("round");
  for (std::uint32_t first = 0; first < 65536; first += 4) {
    alignas(16) std::array<std::uint16_t, 4> in{}, kept{}, rounded{};
    alignas(16) std::array<std::uint32_t, 4> echo{};
    for (std::uint32_t k = 0; k < 4; ++k) in[k] = static_cast<std::uint16_t>(first + k);
    keep_fn(in.data(), kept.data(), echo.data());
    round_fn(in.data(), rounded.data(), echo.data());
    for (std::size_t k = 0; k < 4; ++k) {
      ASSERT_EQ(kept[k], in[k]);
      ASSERT_EQ(echo[k], std::uint32_t{in[k]} << 16);
      ASSERT_EQ(rounded[k], weft::jit::to_bfloat16(weft::jit::to_float({in[k]})).bits) << std::hex << in[k];
    }
  }
}

TEST(NeonElementIo, RegisterNeedsAndElementBytes) {
  EXPECT_EQ(ElementIo::constant_vectors(DataType::f32), 0);
  EXPECT_EQ(ElementIo::scratch_vectors(DataType::f32), 0);
  EXPECT_EQ(ElementIo::constant_vectors(DataType::f64), 0);
  EXPECT_EQ(ElementIo::scratch_vectors(DataType::f64), 0);
  EXPECT_GT(ElementIo::constant_vectors(DataType::bf16), 0);
  EXPECT_GT(ElementIo::scratch_vectors(DataType::bf16), 0);
  EXPECT_EQ(lanes_of(DataType::f32), 4);
  EXPECT_EQ(lanes_of(DataType::f64), 2);
  Assembler a;
  const std::array<VReg, 2> constants{v16, v17};
  const std::array<VReg, 3> scratch{v20, v21, v22};
  EXPECT_EQ(ElementIo(a, DataType::f32, DataType::f32, x16, {}, {}).element_bytes(), 4);
  EXPECT_EQ(ElementIo(a, DataType::bf16, DataType::f32, x16, constants, scratch).element_bytes(), 2);
  EXPECT_EQ(ElementIo(a, DataType::f64, DataType::f64, x16, {}, {}).element_bytes(), 8);
}

TEST(NeonElementIo, WrongTypesCountsAndRegistersAreErrors) {
  Assembler a;
  EXPECT_THROW(ElementIo(a, DataType::f64, DataType::f32, x16, {}, {}), weft::Error);
  EXPECT_THROW(ElementIo(a, DataType::f32, DataType::f64, x16, {}, {}), weft::Error);
  EXPECT_THROW(ElementIo(a, DataType::bf16, DataType::f64, x16, {}, {}), weft::Error);
  EXPECT_THROW(ElementIo(a, DataType::bf16, DataType::f32, x16, {}, {}), weft::Error);  // no registers
  ElementIo f32(a, DataType::f32, DataType::f32, x16, {}, {});
  EXPECT_THROW(f32.load(v0, x1, 0, 0), weft::Error);
  EXPECT_THROW(f32.load(v0, x1, 0, 5), weft::Error);
  ElementIo f64(a, DataType::f64, DataType::f64, x16, {}, {});
  EXPECT_THROW(f64.store(x1, 0, v0, 3), weft::Error);
  const std::array<VReg, 2> constants{v16, v17};
  const std::array<VReg, 3> scratch{v20, v21, v22};
  ElementIo bf16(a, DataType::bf16, DataType::f32, x16, constants, scratch);
  EXPECT_THROW(bf16.store(x1, 0, v21, 4), weft::Error);  // its own scratch
  EXPECT_THROW(bf16.load(v17, x1, 0, 4), weft::Error);   // its own constant
  EXPECT_NO_THROW(bf16.load(v0, x1, 0, 4));
}

}  // namespace
