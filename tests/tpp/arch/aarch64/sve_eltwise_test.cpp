// The SVE element-wise emitters (tpp/src/arch/aarch64/sve_eltwise_emit.cpp) against the
// references, bit for bit (NaNs included): every binary op x broadcast pair and every unary op SVE
// covers, f32 and f64, m around the lanes (1, lanes - 1, lanes, lanes + 1, 3 lanes + 5, 8 lanes + 3),
// n 1..3, leading dimensions at and above m (the unary ones also at call time, 0 included),
// inputs with NaNs (quiet, signalling, negative), +-0, infinities and denormals, every operand
// flush against a guard page (alternately after and before it), the output's padding rows compared
// too. Each kernel runs at vector length 16, 32 and 64 bytes (generated after the length is set:
// its code is valid at that length only; 16 shows the code follows the plan's length, though
// sve128 runs Neon's kernels) and skips without SVE. Also: C aliasing A, and the dispatch of an SVE
// ISA (unary_kernel / binary_kernel with Isa::sve256) for supported and fallback descriptors.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "guarded_buffer.hpp"
#include "sve_eltwise_emit.hpp"
#include "sve_vector_length.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/jit/data_type.hpp"
#include "weft/jit/isa_traits.hpp"
#include "weft/tpp/binary.hpp"
#include "weft/tpp/unary.hpp"

namespace {

using namespace weft::tpp;
using weft::jit::DataType;
using weft::jit::Isa;
using weft::test::Flush;
using weft::test::GuardedBuffer;

constexpr BinaryOp kBinaryOps[] = {BinaryOp::add, BinaryOp::sub, BinaryOp::mul,
                                   BinaryOp::div, BinaryOp::min, BinaryOp::max};
constexpr Broadcast kBcasts[] = {Broadcast::none, Broadcast::row, Broadcast::col, Broadcast::scalar};
constexpr UnaryOp kUnaryOps[] = {UnaryOp::zero,       UnaryOp::copy, UnaryOp::relu,      UnaryOp::square,
                                 UnaryOp::reciprocal, UnaryOp::sqrt, UnaryOp::increment, UnaryOp::decrement,
                                 UnaryOp::scale};
constexpr DataTypes kF64 = {.in = DataType::f64, .out = DataType::f64, .compute = DataType::f64};
constexpr DataTypes kBf16 = {.in = DataType::bf16, .out = DataType::bf16};
constexpr DataTypes kBf16InF32Out = {.in = DataType::bf16, .out = DataType::f32};
constexpr DataTypes kF32InBf16Out = {.in = DataType::f32, .out = DataType::bf16};
constexpr int kVectorBytes[] = {16, 32, 64};

Isa isa_of(int vector_bytes) { return vector_bytes == 16 ? Isa::sve128 : vector_bytes == 32 ? Isa::sve256 : Isa::sve512; }

// A plan of the SVE ISA of `vector_bytes`: sve256's re-laid for 16 bytes (sve128 plans Neon).
template <class Plan>
Plan for_length(Plan p, int vector_bytes, int element_bytes) {
  p.isa = isa_of(vector_bytes);
  p.lanes = vector_bytes / element_bytes;
  p.full_vectors = p.rows / p.lanes;
  p.tail = static_cast<int>(p.rows % p.lanes);
  return p;
}

std::vector<std::int64_t> rows_around(int lanes) {
  std::vector<std::int64_t> out;
  for (std::int64_t m : {std::int64_t{1}, std::int64_t{lanes - 1}, std::int64_t{lanes}, std::int64_t{lanes + 1},
                         std::int64_t{3 * lanes + 5}, std::int64_t{8 * lanes + 3}}) {
    bool seen = false;
    for (std::int64_t o : out) seen = seen || o == m;
    if (m >= 1 && !seen) out.push_back(m);
  }
  return out;
}

// Random values in [-4, 4] and, one in four, a special one: NaNs, zeros, infinities, denormals,
// bf16 rounding ties (to even: down and up), the largest float (rounds to bf16 infinity).
template <class T>
T value(std::mt19937& rng) {
  using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  constexpr int kMantissa = std::numeric_limits<T>::digits - 1;
  const Bits sign = Bits{1} << (sizeof(T) * 8 - 1);
  const Bits exp_all = ((Bits{1} << (sizeof(T) * 8 - 1 - kMantissa)) - 1) << kMantissa;
  const Bits quiet = Bits{1} << (kMantissa - 1);
  switch (rng() % 40) {
    case 0: return std::bit_cast<T>(exp_all | quiet | 5);           // quiet NaN with a payload
    case 1: return std::bit_cast<T>(exp_all | 3);                   // signalling NaN
    case 2: return std::bit_cast<T>(sign | exp_all | quiet | 0x11);  // negative NaN
    case 3: return T(0);
    case 4: return -T(0);
    case 5: return std::numeric_limits<T>::infinity();
    case 6: return -std::numeric_limits<T>::infinity();
    case 7: return std::bit_cast<T>(Bits{0x123});                   // denormal
    case 8: return std::bit_cast<T>(sign | Bits{0x4567});           // negative denormal
    case 9: return std::numeric_limits<T>::denorm_min();
    case 10: return sizeof(T) == 4 ? std::bit_cast<T>(Bits{0x3f808000}) : T(1.5);  // ties: to even (down)
    case 11: return sizeof(T) == 4 ? std::bit_cast<T>(Bits{0xbf818000}) : T(-2.5);  // ... and up
    case 12: return std::numeric_limits<T>::max();
    case 13: return sizeof(T) == 4 ? std::bit_cast<T>(Bits{0x00ff0000} | (sign & Bits(rng()))) : T(0.5);  // bf16 denormal
    default: return static_cast<T>(std::uniform_real_distribution<double>(-4, 4)(rng));
  }
}

template <class T>
void fill(std::span<T> s, std::mt19937& rng) {
  for (T& x : s) x = value<T>(rng);
}

// Elements of `type` in raw bytes.
struct Data {
  DataType type;
  std::size_t count;
  std::size_t bytes() const { return count * weft::jit::size_of(type); }
  std::uint64_t bits(const std::uint8_t* p, std::size_t i) const {
    std::uint64_t b = 0;
    std::memcpy(&b, p + i * weft::jit::size_of(type), weft::jit::size_of(type));
    return b;
  }
  bool nan(const std::uint8_t* p, std::size_t i) const {
    const std::uint64_t b = bits(p, i);
    switch (type) {
      case DataType::f32: return (b & 0x7fffffffu) > 0x7f800000u;
      case DataType::bf16: return (b & 0x7fffu) > 0x7f80u;
      case DataType::f64: return (b & 0x7fffffffffffffffu) > 0x7ff0000000000000u;
    }
    return false;
  }
};

// Random elements of `type` (bf16: the top halves of value<float>).
void fill(DataType type, std::uint8_t* p, std::size_t count, std::mt19937& rng) {
  for (std::size_t i = 0; i < count; ++i) {
    if (type == DataType::f64) {
      const double x = value<double>(rng);
      std::memcpy(p + 8 * i, &x, 8);
    } else {
      const auto u = std::bit_cast<std::uint32_t>(value<float>(rng));
      if (type == DataType::f32) {
        std::memcpy(p + 4 * i, &u, 4);
      } else {
        const auto h = static_cast<std::uint16_t>(u >> 16);
        std::memcpy(p + 2 * i, &h, 2);
      }
    }
  }
}

std::string hex(std::uint64_t u) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(u));
  return text;
}

std::int64_t input_count(Broadcast b, std::int64_t m, std::int64_t n, std::int64_t ld) {
  switch (b) {
    case Broadcast::none: return ld * (n - 1) + m;
    case Broadcast::row: return n;
    case Broadcast::col: return m;
    case Broadcast::scalar: return 1;
  }
  return 0;
}

bool sve_at(int vector_bytes, weft::test::ScopedVectorLength& vl) {
  return vl.ok() && weft::test::vector_length() == vector_bytes;
}

int compute_bytes(const DataTypes& t) { return static_cast<int>(weft::jit::size_of(t.compute)); }

// ---- binary ---------------------------------------------------------------------------------------

void check_binary(const BinaryDesc& d, int vector_bytes, std::mt19937& rng, int& flush_count) {
  const auto plan = for_length(plan_binary(d, Isa::sve256), vector_bytes, compute_bytes(d.types));
  const auto code = sve::emit_binary(d, plan);
  const auto fn = code->finalize<BinaryKernelFn>(to_string(d));
  const Flush flush = (flush_count++ % 2) ? Flush::front : Flush::back;
  const Data a_data{d.types.in, static_cast<std::size_t>(input_count(d.bcast0, d.m, d.n, d.ld_in0))};
  const Data b_data{d.types.in, static_cast<std::size_t>(input_count(d.bcast1, d.m, d.n, d.ld_in1))};
  const Data c_data{d.types.out, static_cast<std::size_t>(d.ld_out * (d.n - 1) + d.m)};
  GuardedBuffer<std::uint8_t> a(a_data.bytes(), flush), b(b_data.bytes(), flush), c(c_data.bytes(), flush);
  fill(a_data.type, a.data(), a_data.count, rng);
  fill(b_data.type, b.data(), b_data.count, rng);
  fill(c_data.type, c.data(), c_data.count, rng);
  std::vector<std::uint8_t> expected(c.begin(), c.end());
  binary_reference(d, BinaryArgs{.in0 = a.data(), .in1 = b.data(), .out = expected.data()});
  const BinaryArgs args{.in0 = a.data(), .in1 = b.data(), .out = c.data()};
  fn(&args);
  // Where an arithmetic op had two NaN operands, which one the result carries is not specified
  // (the first operand's on AArch64, but the compiler may swap the reference's a + b and a * b):
  // any NaN is right there (as in neon_binary_test.cpp).
  const bool arithmetic = d.op != BinaryOp::min && d.op != BinaryOp::max;
  auto at = [&](Broadcast kind, std::int64_t ld, std::int64_t i, std::int64_t j) -> std::size_t {
    switch (kind) {
      case Broadcast::none: return static_cast<std::size_t>(i + j * ld);
      case Broadcast::row: return static_cast<std::size_t>(j);
      case Broadcast::col: return static_cast<std::size_t>(i);
      case Broadcast::scalar: return 0;
    }
    return 0;
  };
  for (std::size_t k = 0; k < c_data.count; ++k) {
    const std::uint64_t got = c_data.bits(c.data(), k), want = c_data.bits(expected.data(), k);
    if (got == want) continue;
    const std::int64_t i = static_cast<std::int64_t>(k) % d.ld_out, j = static_cast<std::int64_t>(k) / d.ld_out;
    if (arithmetic && i < d.m && a_data.nan(a.data(), at(d.bcast0, d.ld_in0, i, j)) &&
        b_data.nan(b.data(), at(d.bcast1, d.ld_in1, i, j)) && c_data.nan(c.data(), k) &&
        c_data.nan(expected.data(), k))
      continue;
    ADD_FAILURE() << "vl " << vector_bytes << " " << to_string(d) << ": element " << k << " got " << hex(got)
                  << " want " << hex(want);
    return;
  }
}

void binary_sweep(int vector_bytes, const DataTypes& types) {
  const int lanes = vector_bytes / compute_bytes(types);
  std::mt19937 rng(42 + vector_bytes);
  int flush_count = 0;
  for (BinaryOp op : kBinaryOps) {
    for (Broadcast b0 : kBcasts) {
      for (Broadcast b1 : kBcasts) {
        for (std::int64_t m : rows_around(lanes)) {
          for (std::int64_t n = 1; n <= 3; ++n) {
            for (std::int64_t pad : {0, 3}) {
              if (pad == 0 && n == 1) continue;  // the same plan as pad 3 (one column)
              const BinaryDesc d{.op = op, .m = m, .n = n, .ld_in0 = m + pad, .ld_in1 = m + pad, .ld_out = m + pad,
                                 .bcast0 = b0, .bcast1 = b1, .types = types};
              check_binary(d, vector_bytes, rng, flush_count);
            }
          }
        }
      }
    }
  }
}

void binary_test(const DataTypes& types) {
  if (!weft::test::has_sve()) GTEST_SKIP() << "no SVE";
  for (int vector_bytes : kVectorBytes) {
    weft::test::ScopedVectorLength vl(vector_bytes);
    ASSERT_TRUE(sve_at(vector_bytes, vl));
    binary_sweep(vector_bytes, types);
  }
}

TEST(SveEltwise, BinaryF32EveryOpAndBroadcast) { binary_test({}); }
TEST(SveEltwise, BinaryF64EveryOpAndBroadcast) { binary_test(kF64); }
TEST(SveEltwise, BinaryBf16EveryOpAndBroadcast) { binary_test(kBf16); }
TEST(SveEltwise, BinaryBf16InF32Out) { binary_test(kBf16InF32Out); }
TEST(SveEltwise, BinaryF32InBf16Out) { binary_test(kF32InBf16Out); }

// C = A op B in place (C is A): every element is read before it is written.
TEST(SveEltwise, BinaryOutputAliasesAnInput) {
  if (!weft::test::has_sve()) GTEST_SKIP() << "no SVE";
  for (int vector_bytes : kVectorBytes) {
    weft::test::ScopedVectorLength vl(vector_bytes);
    ASSERT_TRUE(sve_at(vector_bytes, vl));
    std::mt19937 rng(7);
    for (const DataTypes types : {DataTypes{}, kBf16}) {
      for (std::int64_t m : {std::int64_t{5}, std::int64_t{37}, std::int64_t{131}}) {
        const BinaryDesc d{.op = BinaryOp::max, .m = m, .n = 3, .ld_in0 = m + 1, .ld_in1 = m, .ld_out = m + 1,
                           .types = types};
        const auto plan = for_length(plan_binary(d, Isa::sve256), vector_bytes, 4);
        const auto code = sve::emit_binary(d, plan);
        const auto fn = code->finalize<BinaryKernelFn>(to_string(d));
        const std::size_t bytes = weft::jit::size_of(types.in);
        std::vector<std::uint8_t> a(static_cast<std::size_t>((m + 1) * 3) * bytes), b(static_cast<std::size_t>(m * 3) * bytes);
        fill(types.in, a.data(), a.size() / bytes, rng);
        fill(types.in, b.data(), b.size() / bytes, rng);
        std::vector<std::uint8_t> expected = a;
        binary_reference(d, BinaryArgs{.in0 = a.data(), .in1 = b.data(), .out = expected.data()});
        const BinaryArgs args{.in0 = a.data(), .in1 = b.data(), .out = a.data()};
        fn(&args);
        EXPECT_EQ(a, expected) << to_string(d);
      }
    }
  }
}

// ---- unary ----------------------------------------------------------------------------------------

void check_unary(const UnaryDesc& d, std::int64_t call_ld_in, std::int64_t call_ld_out, int vector_bytes,
                 std::mt19937& rng, int& flush_count) {
  const auto plan = for_length(plan_unary(d, Isa::sve256), vector_bytes, compute_bytes(d.types));
  const auto code = sve::emit_unary(d, plan);
  const auto fn = code->finalize<UnaryKernelFn>(to_string(d));
  const Flush flush = (flush_count++ % 2) ? Flush::front : Flush::back;
  const std::int64_t ld_in = d.ld_in != 0 ? d.ld_in : call_ld_in;
  const std::int64_t ld_out = d.ld_out != 0 ? d.ld_out : call_ld_out;
  const Data a_data{d.types.in, static_cast<std::size_t>(ld_in * (d.n - 1) + d.m)};
  const Data b_data{d.types.out, static_cast<std::size_t>(ld_out * (d.n - 1) + d.m)};
  GuardedBuffer<std::uint8_t> a(a_data.bytes(), flush), b(b_data.bytes(), flush);
  fill(a_data.type, a.data(), a_data.count, rng);
  fill(b_data.type, b.data(), b_data.count, rng);
  std::vector<std::uint8_t> expected(b.begin(), b.end());
  unary_reference(d, UnaryArgs{.in = a.data(), .out = expected.data(), .ld_in = call_ld_in, .ld_out = call_ld_out});
  const UnaryArgs args{.in = a.data(), .out = b.data(), .ld_in = call_ld_in, .ld_out = call_ld_out};
  fn(&args);
  for (std::size_t k = 0; k < b_data.count; ++k) {
    const std::uint64_t got = b_data.bits(b.data(), k), want = b_data.bits(expected.data(), k);
    if (got == want) continue;
    ADD_FAILURE() << "vl " << vector_bytes << " " << to_string(d) << " call ld " << call_ld_in << ", " << call_ld_out
                  << ": element " << k << " got " << hex(got) << " want " << hex(want);
    return;
  }
}

void unary_sweep(int vector_bytes, const DataTypes& types) {
  const int lanes = vector_bytes / compute_bytes(types);
  std::mt19937 rng(1234 + vector_bytes);
  int flush_count = 0;
  for (UnaryOp op : kUnaryOps) {
    const bool alpha = op == UnaryOp::increment || op == UnaryOp::decrement || op == UnaryOp::scale;
    for (std::int64_t m : rows_around(lanes)) {
      for (std::int64_t n = 1; n <= 3; ++n) {
        UnaryDesc d{.op = op, .m = m, .n = n, .ld_in = m, .ld_out = m, .alpha = alpha ? 1.375f : 0.0f,
                    .types = types};
        check_unary(d, 0, 0, vector_bytes, rng, flush_count);  // flat
        if (n == 1) continue;
        d.ld_in = m + 2;
        d.ld_out = m + 5;
        check_unary(d, 0, 0, vector_bytes, rng, flush_count);
        // At call time, ld_in 0 too: every column reads A's first.
        d.ld_in = 0;
        d.ld_out = 0;
        check_unary(d, m + 1, m + 4, vector_bytes, rng, flush_count);
        if (op != UnaryOp::zero) check_unary(d, 0, m, vector_bytes, rng, flush_count);
      }
    }
  }
}

void unary_test(const DataTypes& types) {
  if (!weft::test::has_sve()) GTEST_SKIP() << "no SVE";
  for (int vector_bytes : kVectorBytes) {
    weft::test::ScopedVectorLength vl(vector_bytes);
    ASSERT_TRUE(sve_at(vector_bytes, vl));
    unary_sweep(vector_bytes, types);
  }
}

TEST(SveEltwise, UnaryF32EveryOp) { unary_test({}); }
TEST(SveEltwise, UnaryF64EveryOp) { unary_test(kF64); }
TEST(SveEltwise, UnaryBf16EveryOp) { unary_test(kBf16); }
TEST(SveEltwise, UnaryBf16InF32Out) { unary_test(kBf16InF32Out); }
TEST(SveEltwise, UnaryF32InBf16Out) { unary_test(kF32InBf16Out); }

// ---- scope and dispatch ---------------------------------------------------------------------------

TEST(SveEltwise, SupportsTheMemoryBoundOpsInEveryType) {
  EXPECT_TRUE(sve::supports(BinaryDesc{.op = BinaryOp::min, .m = 4, .n = 1, .ld_in0 = 4, .ld_in1 = 4, .ld_out = 4}));
  EXPECT_TRUE(sve::supports(BinaryDesc{.op = BinaryOp::div, .m = 4, .n = 1, .ld_in0 = 4, .ld_in1 = 4, .ld_out = 4,
                                       .types = kF64}));
  EXPECT_TRUE(sve::supports(BinaryDesc{.op = BinaryOp::add, .m = 4, .n = 1, .ld_in0 = 4, .ld_in1 = 4, .ld_out = 4,
                                       .types = {.in = DataType::bf16}}));
  EXPECT_TRUE(sve::supports(UnaryDesc{.op = UnaryOp::relu, .m = 4, .n = 1}));
  EXPECT_FALSE(sve::supports(UnaryDesc{.op = UnaryOp::relu, .m = 4, .n = 1, .mask = ReluMask::bitmask}));
  EXPECT_TRUE(sve::supports(UnaryDesc{.op = UnaryOp::exp, .m = 4, .n = 1}));  // sve_activation_test.cpp
  EXPECT_FALSE(sve::supports(UnaryDesc{.op = UnaryOp::transpose, .m = 4, .n = 4}));
  EXPECT_TRUE(sve::supports(UnaryDesc{.op = UnaryOp::copy, .m = 4, .n = 1, .types = {.out = DataType::bf16}}));
  EXPECT_FALSE(sve::supports(UnaryDesc{.op = UnaryOp::reduce_rows_sum, .m = 4, .n = 1}));
  // The element-wise plans of sve256 / sve512 are their own; sve128's Neon's.
  const UnaryDesc d{.op = UnaryOp::copy, .m = 4, .n = 1};
  EXPECT_EQ(plan_unary(d, Isa::sve256_bf16).isa, Isa::sve256_bf16);
  EXPECT_EQ(plan_unary(d, Isa::sve512).lanes, 16);
  EXPECT_EQ(plan_unary(d, Isa::sve128).isa, Isa::neon);
}

// Through the library's dispatch at VL 256: supported descriptors run SVE code, the others (a
// reduction, a transpose, a column reduction's max) Neon's planned for Isa::neon; all give the
// reference's results.
TEST(SveEltwise, Sve256DispatchAndNeonFallbackGiveTheReference) {
  if (!weft::test::has_sve()) GTEST_SKIP() << "no SVE";
  weft::test::ScopedVectorLength vl(32);
  ASSERT_TRUE(sve_at(32, vl));
  std::mt19937 rng(99);
  const std::int64_t m = 13, n = 3;
  const std::vector<UnaryDesc> unaries{
      UnaryDesc{.op = UnaryOp::relu, .m = m, .n = n, .ld_in = m + 1, .ld_out = m + 2},
      UnaryDesc{.op = UnaryOp::reduce_rows_sum, .m = m, .n = n, .ld_in = m + 1},
      UnaryDesc{.op = UnaryOp::transpose, .m = m, .n = n, .ld_in = m, .ld_out = n},
      UnaryDesc{.op = UnaryOp::copy, .m = m, .n = n, .ld_in = m, .ld_out = m,
                .types = {.in = DataType::bf16, .out = DataType::f32}},
      UnaryDesc{.op = UnaryOp::reduce_cols_max, .m = m, .n = n, .ld_in = m + 3},
  };
  for (const UnaryDesc& d : unaries) {
    const UnaryCode code = unary_kernel(d, Isa::sve256);
    const std::size_t in_bytes = weft::jit::size_of(d.types.in), out_bytes = weft::jit::size_of(d.types.out);
    std::vector<std::uint8_t> a(static_cast<std::size_t>(64 * 64) * in_bytes), b(static_cast<std::size_t>(64 * 64) * out_bytes);
    for (std::size_t i = 0; i + 4 <= a.size(); i += 4) {
      const float x = value<float>(rng);
      std::memcpy(&a[i], &x, 4);
    }
    std::vector<std::uint8_t> expected = b;
    unary_reference(d, UnaryArgs{.in = a.data(), .out = expected.data()});
    const UnaryArgs args{.in = a.data(), .out = b.data()};
    code(&args);
    EXPECT_EQ(b, expected) << to_string(d);
  }
  for (Broadcast bcast : {Broadcast::none, Broadcast::row}) {
    for (const DataTypes types : {DataTypes{}, DataTypes{.in = DataType::bf16, .out = DataType::bf16}}) {
      const BinaryDesc d{.op = BinaryOp::min, .m = m, .n = n, .ld_in0 = m, .ld_in1 = m, .ld_out = m + 1,
                         .bcast1 = bcast, .types = types};
      const BinaryCode code = binary_kernel(d, Isa::sve256);
      std::vector<float> a(static_cast<std::size_t>(m * n)), b(static_cast<std::size_t>(m * n)),
          c(static_cast<std::size_t>((m + 1) * n));
      fill(std::span<float>(a), rng);
      fill(std::span<float>(b), rng);
      std::vector<float> expected = c;
      binary_reference(d, BinaryArgs{.in0 = a.data(), .in1 = b.data(), .out = expected.data()});
      const BinaryArgs args{.in0 = a.data(), .in1 = b.data(), .out = c.data()};
      code(&args);
      EXPECT_EQ(std::memcmp(c.data(), expected.data(), c.size() * sizeof(float)), 0) << to_string(d);
    }
  }
}

}  // namespace
