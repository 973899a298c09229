// The Neon binary TPP emitter (tpp/src/arch/aarch64/binary_emit.cpp) against binary_reference, bit
// for bit (NaNs included): every op x broadcast pair x data types on shapes with every row tail
// and loop count (m 1..37, n 1..9, leading dimensions at and above m, flat and strided), inputs
// with NaNs (quiet, signalling, negative), +-0, infinities, denormals and bf16 rounding ties,
// every operand flush against a guard page (alternately after and before it), C's padding rows
// compared too; C aliasing A or B; large leading dimensions and long columns.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "binary_emit.hpp"
#include "element_io.hpp"
#include "emitters.hpp"
#include "guarded_buffer.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/jit/data_type.hpp"
#include "weft/jit/error.hpp"
#include "weft/tpp/binary.hpp"

namespace {

using namespace weft::tpp;
using weft::jit::DataType;
using weft::jit::Isa;
using weft::test::Flush;
using weft::test::GuardedBuffer;

constexpr BinaryOp kOps[] = {BinaryOp::add, BinaryOp::sub, BinaryOp::mul, BinaryOp::div, BinaryOp::min, BinaryOp::max};
constexpr Broadcast kBcasts[] = {Broadcast::none, Broadcast::row, Broadcast::col, Broadcast::scalar};
constexpr DataTypes kTypes[] = {
    {},
    {.in = DataType::bf16, .out = DataType::bf16},
    {.in = DataType::bf16, .out = DataType::f32},
    {.in = DataType::f32, .out = DataType::bf16},
    {.in = DataType::f64, .out = DataType::f64, .compute = DataType::f64},
};

// Specials: zeros, infinities, NaNs (quiet, signalling, negative, all ones), denormals, the largest
// finite values (0x7f7fffff rounds to bf16 infinity), bf16 rounding ties (1.00390625 -> 1,
// 1.01171875 -> 1.015625), FLT_MIN, 1.
constexpr std::uint32_t kF32Specials[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
                                          0x7f800001u, 0xffc00001u, 0xffffffffu, 0x7fa00000u, 0x00000001u,
                                          0x807fffffu, 0x7f7fffffu, 0xff7fffffu, 0x3f808000u, 0x3f818000u,
                                          0xbf808000u, 0x00800000u, 0x3f800000u};
constexpr std::uint16_t kBf16Specials[] = {0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0xffc1, 0xffff,
                                           0x0001, 0x807f, 0x7f7f, 0xff7f, 0x0080, 0x3f80};
constexpr std::uint64_t kF64Specials[] = {0x0000000000000000u, 0x8000000000000000u, 0x7ff0000000000000u,
                                          0xfff0000000000000u, 0x7ff8000000000000u, 0x7ff0000000000001u,
                                          0xfff8000000000001u, 0xffffffffffffffffu, 0x0000000000000001u,
                                          0x800fffffffffffffu, 0x7fefffffffffffffu, 0x3ff0000000000000u};

template <class T, std::size_t N>
T pick(const T (&list)[N], std::mt19937& rng) {
  return list[rng() % N];
}

// `count` elements of `type` in a guarded buffer: random values in [-4, 4] (mostly), a special one
// in about every fifth element, and, so that min / max see equal operands, small integers.
class Operand {
 public:
  Operand(DataType type, std::size_t count, Flush flush)
      : type_(type), bytes_(weft::jit::size_of(type)), buffer_(count * bytes_, flush) {}

  void fill(std::mt19937& rng) {
    std::uniform_real_distribution<double> dist(-4, 4);
    for (std::size_t i = 0; i < count(); ++i) {
      const auto kind = static_cast<unsigned>(rng() % 10);
      double v = kind < 6 ? dist(rng) : static_cast<double>(static_cast<int>(rng() % 5) - 2);
      switch (type_) {
        case DataType::f32: {
          std::uint32_t u = std::bit_cast<std::uint32_t>(static_cast<float>(v));
          if (kind >= 8) u = pick(kF32Specials, rng);
          set(i, u);
          break;
        }
        case DataType::bf16: {
          auto u = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(static_cast<float>(v)) >> 16);
          if (kind >= 8) u = pick(kBf16Specials, rng);
          set(i, u);
          break;
        }
        case DataType::f64: {
          std::uint64_t u = std::bit_cast<std::uint64_t>(v);
          if (kind >= 8) u = pick(kF64Specials, rng);
          set(i, u);
          break;
        }
      }
    }
  }
  void set(std::size_t i, std::uint64_t bits) { std::memcpy(buffer_.data() + i * bytes_, &bits, bytes_); }
  std::uint64_t bits(std::size_t i) const {
    std::uint64_t b = 0;
    std::memcpy(&b, buffer_.data() + i * bytes_, bytes_);
    return b;
  }
  void* data() { return buffer_.data(); }
  std::size_t count() const { return buffer_.size() / bytes_; }
  std::size_t bytes() const { return buffer_.size(); }

 private:
  DataType type_;
  std::size_t bytes_;
  GuardedBuffer<std::uint8_t> buffer_;
};

std::size_t input_count(const BinaryDesc& d, Broadcast b, std::int64_t ld) {
  switch (b) {
    case Broadcast::none: return static_cast<std::size_t>(ld * (d.n - 1) + d.m);
    case Broadcast::row: return static_cast<std::size_t>(d.n);
    case Broadcast::col: return static_cast<std::size_t>(d.m);
    case Broadcast::scalar: return 1;
  }
  return 0;
}

std::string hex(std::uint64_t u) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(u));
  return text;
}

bool is_nan(DataType type, std::uint64_t bits) {
  switch (type) {
    case DataType::f32: return (bits & 0x7fffffffu) > 0x7f800000u;
    case DataType::bf16: return (bits & 0x7fffu) > 0x7f80u;
    case DataType::f64: return (bits & 0x7fffffffffffffffu) > 0x7ff0000000000000u;
  }
  return false;
}

// Whether A(i, j) and B(i, j) are both NaN.
bool both_nan(const BinaryDesc& d, const Operand& a, const Operand& b, std::int64_t i, std::int64_t j) {
  auto at = [&](Broadcast kind, std::int64_t ld) -> std::size_t {
    switch (kind) {
      case Broadcast::none: return static_cast<std::size_t>(i + j * ld);
      case Broadcast::row: return static_cast<std::size_t>(j);
      case Broadcast::col: return static_cast<std::size_t>(i);
      case Broadcast::scalar: return 0;
    }
    return 0;
  };
  return is_nan(d.types.in, a.bits(at(d.bcast0, d.ld_in0))) && is_nan(d.types.in, b.bits(at(d.bcast1, d.ld_in1)));
}

// Compares C (padding rows too, which both leave alone) with the reference's bytes, bit for bit,
// except where an arithmetic op had two NaN operands: which of them the result carries is not
// specified (it is the first operand's on AArch64, but the compiler may swap the operands of the
// reference's a + b and a * b, which commute), so any NaN is right there.
void expect_same(const BinaryDesc& d, const Operand& a, const Operand& b, const Operand& c,
                 const std::vector<std::uint8_t>& want_bytes) {
  const std::size_t size = weft::jit::size_of(d.types.out);
  const bool arithmetic = d.op != BinaryOp::min && d.op != BinaryOp::max;
  for (std::size_t k = 0; k < c.count(); ++k) {
    std::uint64_t want = 0;
    std::memcpy(&want, want_bytes.data() + k * size, size);
    const std::uint64_t got = c.bits(k);
    const std::int64_t i = static_cast<std::int64_t>(k) % d.ld_out, j = static_cast<std::int64_t>(k) / d.ld_out;
    if (got != want && arithmetic && i < d.m && both_nan(d, a, b, i, j) && is_nan(d.types.out, want) &&
        is_nan(d.types.out, got))
      continue;
    ASSERT_EQ(got, want) << to_string(d) << ": element " << k << " (row " << i << ", column " << j << ") got "
                         << hex(got) << ", want " << hex(want);
  }
}

void check(const BinaryDesc& d, std::uint32_t seed, Flush flush) {
  std::mt19937 rng(seed);
  Operand a(d.types.in, input_count(d, d.bcast0, d.ld_in0), flush);
  Operand b(d.types.in, input_count(d, d.bcast1, d.ld_in1), flush);
  Operand c(d.types.out, static_cast<std::size_t>(d.ld_out * (d.n - 1) + d.m), flush);
  a.fill(rng);
  b.fill(rng);
  c.fill(rng);
  std::vector<std::uint8_t> want(c.bytes());
  std::memcpy(want.data(), c.data(), c.bytes());
  binary_reference(d, BinaryArgs{a.data(), b.data(), want.data()});
  const BinaryArgs args{a.data(), b.data(), c.data()};
  binary_kernel(d, Isa::neon)(&args);
  expect_same(d, a, b, c, want);
}

BinaryDesc shaped(BinaryOp op, Broadcast b0, Broadcast b1, const DataTypes& types, std::int64_t m, std::int64_t n,
                  std::int64_t pad0, std::int64_t pad1, std::int64_t pad_out) {
  return BinaryDesc{.op = op, .m = m, .n = n, .ld_in0 = m + pad0, .ld_in1 = m + pad1, .ld_out = m + pad_out,
                    .bcast0 = b0, .bcast1 = b1, .types = types};
}

// Every op x broadcast pair x types on 9 shapes each, rotating through m 1..37 and n 1..9 so that
// every row count and column count meets every combination over the run; every third shape has
// the minimum leading dimensions (the flat path where the broadcasts allow it).
TEST(NeonBinary, EveryOpBroadcastAndTypeMatchesTheReference) {
  std::uint32_t index = 0;
  for (const DataTypes& types : kTypes)
    for (BinaryOp op : kOps)
      for (Broadcast b0 : kBcasts)
        for (Broadcast b1 : kBcasts)
          for (int shape = 0; shape < 9; ++shape, ++index) {
            const std::int64_t m = 1 + (index * 7 + static_cast<std::uint32_t>(shape) * 13) % 37;
            const std::int64_t n = 1 + (index * 5 + static_cast<std::uint32_t>(shape)) % 9;
            const bool minimum = shape % 3 == 0;
            const BinaryDesc d = shaped(op, b0, b1, types, m, n, minimum ? 0 : index % 5, minimum ? 0 : index % 3 + 1,
                                        minimum ? 0 : index % 4);
            check(d, 100 + index, index % 2 == 0 ? Flush::back : Flush::front);
            if (HasFatalFailure()) return;
          }
}

// Every m in 1..37 (each tail, remainder and loop count of the column sweep) with 1 and 3 columns,
// for each type, every broadcast of B and a NaN-sensitive and an arithmetic op.
TEST(NeonBinary, EveryRowCountMatchesTheReference) {
  std::uint32_t index = 0;
  for (const DataTypes& types : kTypes)
    for (BinaryOp op : {BinaryOp::sub, BinaryOp::max})
      for (Broadcast b1 : kBcasts)
        for (std::int64_t m = 1; m <= 37; ++m)
          for (std::int64_t n : {1, 3}) {
            const BinaryDesc d = shaped(op, Broadcast::none, b1, types, m, n, index % 3, 1, m % 2);
            check(d, 5000 + index, index % 2 == 0 ? Flush::back : Flush::front);
            ++index;
            if (HasFatalFailure()) return;
          }
}

// Long columns and flat sweeps (the vector loop), and leading dimensions far past the immediates.
TEST(NeonBinary, LongColumnsAndLargeLeadingDimensions) {
  std::uint32_t index = 0;
  for (const DataTypes& types : kTypes)
    for (BinaryOp op : kOps) {
      check(shaped(op, Broadcast::none, Broadcast::none, types, 1001, 3, 0, 0, 0), 9000 + index++, Flush::back);
      check(shaped(op, Broadcast::col, Broadcast::none, types, 203, 4, 0, 5, 1), 9000 + index++, Flush::front);
      check(shaped(op, Broadcast::none, Broadcast::row, types, 33, 3, 20000, 0, 5000), 9000 + index++, Flush::back);
      check(shaped(op, Broadcast::scalar, Broadcast::none, types, 7, 4, 0, 4097, 9000), 9000 + index++, Flush::front);
      if (HasFatalFailure()) return;
    }
}

// C aliasing A or B (same types, same leading dimension): each element is read before written.
TEST(NeonBinary, OutputMayAliasAnInput) {
  std::uint32_t index = 0;
  for (const DataTypes& types : {kTypes[0], kTypes[1], kTypes[4]})
    for (BinaryOp op : kOps)
      for (int aliased = 0; aliased < 2; ++aliased)
        for (std::int64_t m : {1, 3, 4, 9, 37}) {
          const std::int64_t n = 1 + index % 4, ld = m + index % 3;
          BinaryDesc d = shaped(op, Broadcast::none, Broadcast::none, types, m, n, 0, 0, 0);
          d.ld_in0 = d.ld_in1 = d.ld_out = ld;
          if (index % 3 == 1) (aliased == 0 ? d.bcast1 : d.bcast0) = Broadcast::col;
          if (index % 3 == 2) (aliased == 0 ? d.bcast1 : d.bcast0) = Broadcast::row;
          SCOPED_TRACE(to_string(d) + (aliased == 0 ? " C = A" : " C = B"));
          std::mt19937 rng(7000 + index++);
          Operand a(types.in, input_count(d, d.bcast0, d.ld_in0), Flush::back);
          Operand b(types.in, input_count(d, d.bcast1, d.ld_in1), Flush::front);
          a.fill(rng);
          b.fill(rng);
          Operand& c = aliased == 0 ? a : b;
          std::vector<std::uint8_t> want(c.bytes());
          std::memcpy(want.data(), c.data(), c.bytes());
          binary_reference(d, BinaryArgs{a.data(), b.data(), want.data()});
          // The inputs as they were, for expect_same's NaN pairs.
          Operand a0(types.in, a.count(), Flush::back), b0(types.in, b.count(), Flush::back);
          std::memcpy(a0.data(), a.data(), a.bytes());
          std::memcpy(b0.data(), b.data(), b.bytes());
          const BinaryArgs args{a.data(), b.data(), c.data()};
          binary_kernel(d, Isa::neon)(&args);
          expect_same(d, a0, b0, c, want);
          if (HasFatalFailure()) return;
        }
}

// min / max: NaN from either operand is the all-ones NaN (bf16: 0xffff, also from a signalling
// bf16 NaN, whose bits are not kept), -0 orders below +0 in both orders; bf16 in and out keeps a
// selected denormal's bits.
TEST(NeonBinary, MinMaxRuleInEveryType) {
  for (const DataTypes& types : kTypes) {
    const std::int64_t m = 7;
    for (BinaryOp op : {BinaryOp::min, BinaryOp::max}) {
      const BinaryDesc d = shaped(op, Broadcast::none, Broadcast::none, types, m, 1, 0, 0, 0);
      SCOPED_TRACE(to_string(d));
      Operand a(types.in, m, Flush::back), b(types.in, m, Flush::back), c(types.out, m, Flush::back);
      // (NaN, 1), (1, sNaN), (-0, +0), (+0, -0), (denormal, 0), (-1, 2), (qNaN, sNaN)
      const bool bf16 = types.in == DataType::bf16, f64 = types.in == DataType::f64;
      auto value = [&](std::uint32_t f32, std::uint16_t h, std::uint64_t d64) -> std::uint64_t {
        return bf16 ? h : f64 ? d64 : f32;
      };
      const std::uint64_t qnan = value(0x7fc00000u, 0x7fc0, 0x7ff8000000000000u);
      const std::uint64_t snan = value(0x7f800001u, 0x7f81, 0x7ff0000000000001u);
      const std::uint64_t one = value(0x3f800000u, 0x3f80, 0x3ff0000000000000u);
      const std::uint64_t neg_zero = value(0x80000000u, 0x8000, 0x8000000000000000u);
      const std::uint64_t denormal = value(0x00000001u, 0x0001, 1);
      const std::uint64_t minus_one = value(0xbf800000u, 0xbf80, 0xbff0000000000000u);
      const std::uint64_t two = value(0x40000000u, 0x4000, 0x4000000000000000u);
      const std::uint64_t as[] = {qnan, one, neg_zero, 0, denormal, minus_one, qnan};
      const std::uint64_t bs[] = {one, snan, 0, neg_zero, 0, two, snan};
      for (std::size_t i = 0; i < 7; ++i) {
        a.set(i, as[i]);
        b.set(i, bs[i]);
      }
      const BinaryArgs args{a.data(), b.data(), c.data()};
      binary_kernel(d, Isa::neon)(&args);
      const std::uint64_t nan = types.out == DataType::bf16 ? 0xffffu : types.out == DataType::f64 ? ~0ull : 0xffffffffu;
      const bool max = op == BinaryOp::max;
      auto out = [&](std::uint64_t in) -> std::uint64_t {  // an input value as C's type (exact here)
        if (types.in == types.out) return in;
        return types.in == DataType::bf16 ? in << 16 : in >> 16;
      };
      EXPECT_EQ(c.bits(0), nan);
      EXPECT_EQ(c.bits(1), nan);
      EXPECT_EQ(c.bits(2), out(max ? 0 : neg_zero));
      EXPECT_EQ(c.bits(3), out(max ? 0 : neg_zero));
      // a denormal: kept with bf16 in and out (and as f32 from bf16), flushed by rounding to bf16
      EXPECT_EQ(c.bits(4), max ? (types.out == DataType::bf16 && types.in == DataType::f32 ? 0 : out(denormal)) : 0);
      EXPECT_EQ(c.bits(5), out(max ? two : minus_one));
      EXPECT_EQ(c.bits(6), nan);
    }
  }
}

// The cache's Neon kernels are these (requested by ISA; Neon is not in the ISA list yet), and other
// ISAs' plans are not this emitter's.
TEST(NeonBinary, KernelCacheAndPlans) {
  const BinaryDesc d{.op = BinaryOp::add, .m = 5, .n = 2, .ld_in0 = 5, .ld_in1 = 5, .ld_out = 5};
  EXPECT_GT(binary_code_size(d, Isa::neon), 0u);
  EXPECT_THROW((void)neon::emit_binary(d, plan_binary(d, Isa::avx2)), weft::Error);
  BinaryPlan wrong = plan_binary(d, Isa::neon);
  wrong.lanes = 8;
  EXPECT_THROW((void)neon::emit_binary(d, wrong), weft::Error);
}

}  // namespace
