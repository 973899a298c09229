// The unary and binary TPPs in bf16 and f64 against their reference, on every ISA (one test
// instance per ISA, skipped by name where the host cannot run it): fixed-seed random inputs with
// special values (+-0, +-inf, NaNs, denormals, bf16 rounding ties, the largest floats), shapes with
// tails, broadcasts, every buffer flush against an inaccessible page (the tails must not read or
// write past it), the streaming path, VNNI-2 packing, and the errors for (op, types) pairs without
// kernels.
#include <gtest/gtest.h>

#include "host_isas.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "guarded_buffer.hpp"
#include "weft/jit/bfloat16.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/jit/data_type.hpp"
#include "weft/jit/error.hpp"
#include "weft/tpp/binary.hpp"
#include "weft/tpp/unary.hpp"

namespace {

using namespace weft::tpp;
using weft::jit::bfloat16;
using weft::jit::DataType;
using weft::jit::Isa;
using weft::test::Flush;
using weft::test::GuardedBuffer;

constexpr DataTypes kBf16Types[] = {
    {.in = DataType::bf16, .out = DataType::bf16},
    {.in = DataType::f32, .out = DataType::bf16},
    {.in = DataType::bf16, .out = DataType::f32},
};
constexpr DataTypes kF64{.in = DataType::f64, .out = DataType::f64, .compute = DataType::f64};

constexpr UnaryOp kElementwise[] = {UnaryOp::copy,      UnaryOp::relu,      UnaryOp::square, UnaryOp::reciprocal,
                                    UnaryOp::sqrt,      UnaryOp::exp,       UnaryOp::sigmoid, UnaryOp::tanh,
                                    UnaryOp::gelu,      UnaryOp::increment, UnaryOp::decrement, UnaryOp::scale};
constexpr UnaryOp kF64Ops[] = {UnaryOp::zero,       UnaryOp::copy, UnaryOp::relu,      UnaryOp::relu_bwd,  UnaryOp::square,
                               UnaryOp::reciprocal, UnaryOp::sqrt, UnaryOp::increment, UnaryOp::decrement, UnaryOp::scale};
constexpr BinaryOp kBinaryOps[] = {BinaryOp::add, BinaryOp::sub, BinaryOp::mul, BinaryOp::div, BinaryOp::min, BinaryOp::max};
constexpr Broadcast kBcasts[] = {Broadcast::none, Broadcast::row, Broadcast::col, Broadcast::scalar};

bool takes_alpha(UnaryOp op) { return op == UnaryOp::increment || op == UnaryOp::decrement || op == UnaryOp::scale; }
bool transcendental(UnaryOp op) {
  return op == UnaryOp::exp || op == UnaryOp::sigmoid || op == UnaryOp::tanh || op == UnaryOp::gelu;
}
bool sums(UnaryOp op) { return op == UnaryOp::reduce_rows_sum || op == UnaryOp::reduce_cols_sum; }
// Ops that move values: their outputs must have exactly the reference's bits, NaNs included.
bool moves_values(UnaryOp op) {
  return op == UnaryOp::zero || op == UnaryOp::copy || op == UnaryOp::relu || op == UnaryOp::relu_bwd ||
         op == UnaryOp::transpose || op == UnaryOp::vnni2_pack || op == UnaryOp::vnni2_unpack;
}

// Special inputs. f32: zeros, infinities, NaNs (quiet, signaling, negative), denormals, values that
// tie in bf16 rounding (1.00390625 -> 1, 1.01171875 -> 1.015625, their negatives), the largest
// floats (0x7f7fffff and the tie 0x7f7f8000 round to bf16 infinity; 0x7f7f7fff does not), FLT_MIN.
constexpr std::uint32_t kF32Specials[] = {
    0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u, 0x7fa00000u, 0x00000001u,
    0x807fffffu, 0x3f808000u, 0x3f818000u, 0xbf808000u, 0x7f7fffffu, 0xff7fffffu, 0x7f7f8000u, 0x7f7f7fffu,
    0x00800000u, 0x3f80ffffu, 0x3f7f8000u};
// bf16: zeros, infinities, NaNs (quiet, signaling, negative), denormals, the largest and smallest
// normal values, 1.
constexpr std::uint16_t kBf16Specials[] = {0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0xffc1, 0x7f81, 0x0001,
                                           0x807f, 0x7f7f, 0xff7f, 0x0080, 0x3f80};
constexpr std::uint64_t kF64Specials[] = {0x0000000000000000u, 0x8000000000000000u, 0x7ff0000000000000u,
                                          0xfff0000000000000u, 0x7ff8000000000000u, 0x0000000000000001u,
                                          0x7fefffffffffffffu, 0x3ff0000000000001u};

// A buffer of `count` elements of `type`, flush against an inaccessible page (GuardedBuffer).
class Buffer {
 public:
  Buffer(DataType type, std::size_t count, Flush flush = Flush::back)
      : type_(type), count_(count), bytes_(count * weft::jit::size_of(type), flush) {}

  void* data() { return bytes_.data(); }
  std::size_t size() const { return count_; }
  DataType type() const { return type_; }
  std::uint64_t bits(std::size_t i) const { return load_bits(bytes_.data(), type_, i); }
  double value(std::size_t i) const { return as_value(type_, bits(i)); }
  void set_bits(std::size_t i, std::uint64_t bits) { store_bits(bytes_.data(), type_, i, bits); }

  static std::uint64_t load_bits(const std::uint8_t* p, DataType type, std::size_t i) {
    std::uint64_t b = 0;
    const std::size_t size = weft::jit::size_of(type);
    std::memcpy(&b, p + i * size, size);
    return b;
  }
  static void store_bits(std::uint8_t* p, DataType type, std::size_t i, std::uint64_t bits) {
    const std::size_t size = weft::jit::size_of(type);
    std::memcpy(p + i * size, &bits, size);
  }
  static double as_value(DataType type, std::uint64_t bits) {
    switch (type) {
      case DataType::f32: return std::bit_cast<float>(static_cast<std::uint32_t>(bits));
      case DataType::bf16: return weft::jit::to_float(bfloat16{static_cast<std::uint16_t>(bits)});
      case DataType::f64: return std::bit_cast<double>(bits);
    }
    return 0;
  }

 private:
  DataType type_;
  std::size_t count_;
  GuardedBuffer<std::uint8_t> bytes_;
};

std::uint64_t bits_of(DataType type, double v) {
  switch (type) {
    case DataType::f32: return std::bit_cast<std::uint32_t>(static_cast<float>(v));
    case DataType::bf16: return weft::jit::to_bfloat16(static_cast<float>(v)).bits;
    case DataType::f64: return std::bit_cast<std::uint64_t>(v);
  }
  return 0;
}

// Random values in [-lo, hi], with the type's special values every few elements when `specials`.
void fill(Buffer& b, std::mt19937& rng, bool specials, double lo = -8, double hi = 8) {
  std::uniform_real_distribution<double> dist(lo, hi);
  std::uniform_int_distribution<int> every(0, 4);
  std::size_t next_special = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (specials && every(rng) == 0) {
      switch (b.type()) {
        case DataType::f32: b.set_bits(i, kF32Specials[next_special++ % std::size(kF32Specials)]); break;
        case DataType::bf16: b.set_bits(i, kBf16Specials[next_special++ % std::size(kBf16Specials)]); break;
        case DataType::f64: b.set_bits(i, kF64Specials[next_special++ % std::size(kF64Specials)]); break;
      }
    } else {
      b.set_bits(i, bits_of(b.type(), dist(rng)));
    }
  }
}

// One bf16 unit in the last place at the magnitude of v (the spacing of bf16 values there).
double bf16_ulp(double v) {
  const double a = std::fabs(v);
  if (!(a >= std::ldexp(1.0, -126))) return std::ldexp(1.0, -133);
  return std::ldexp(1.0, std::ilogb(a) - 7);
}

enum class Match { bits, value, transcendental, sum };

// Whether `got` may stand for `want` (bits of `type`) under `match`; `scale` bounds sums.
bool matches(DataType type, std::uint64_t want, std::uint64_t got, Match match, double scale = 1) {
  if (want == got) return true;
  if (match == Match::bits) return false;
  const double w = Buffer::as_value(type, want), g = Buffer::as_value(type, got);
  if (std::isnan(w) || std::isnan(g)) return std::isnan(w) && std::isnan(g);
  if (w == g) return std::signbit(w) == std::signbit(g);  // +0 and -0 differ (min / max order them)
  if (match == Match::value) return false;
  // The f32 result within its documented accuracy, then rounded to bf16: one bf16 step at most
  // (denormal results, which bf16 flushes, within FLT_MIN).
  const double f32_bound = match == Match::sum ? 1e-5 * scale : 1e-6 * std::fabs(w) + 1e-44;
  const double bound = type == DataType::bf16 ? f32_bound + bf16_ulp(w) + std::ldexp(1.0, -126) : f32_bound;
  return std::fabs(g - w) <= bound;
}

Match unary_match(UnaryOp op, const DataTypes& types) {
  if (moves_values(op)) {
    return types.out == DataType::bf16 || types.compute == DataType::f64 ? Match::bits : Match::value;
  }
  if (transcendental(op)) return Match::transcendental;
  if (sums(op)) return Match::sum;
  return Match::value;
}

std::int64_t unary_out_count(const UnaryDesc& d, std::int64_t ldb) {
  switch (d.op) {
    case UnaryOp::reduce_rows_sum:
    case UnaryOp::reduce_rows_max: return d.m;
    case UnaryOp::reduce_cols_sum:
    case UnaryOp::reduce_cols_max: return d.n;
    case UnaryOp::transpose: return ldb * (d.m - 1) + d.n;
    case UnaryOp::vnni2_pack: return (d.n / 2 - 1) * 2 * ldb + 2 * d.m;
    default: return d.transpose_out ? ldb * (d.m - 1) + d.n : ldb * (d.n - 1) + d.m;
  }
}

std::int64_t unary_in_count(const UnaryDesc& d, std::int64_t lda) {
  if (d.op == UnaryOp::vnni2_unpack) return (d.n / 2 - 1) * 2 * lda + 2 * d.m;
  return lda * (d.n - 1) + d.m;
}

// Runs `d` on `isa` and on the reference over the same inputs; every element of the output (the
// gaps between columns too, which must keep their sentinels) and of the bitmask must match.
void check_unary(const UnaryDesc& d, Isa isa, std::mt19937& rng, Flush flush, bool specials = true) {
  SCOPED_TRACE(to_string(d));
  const std::int64_t a_count = unary_in_count(d, d.ld_in), b_count = unary_out_count(d, d.ld_out);
  Buffer a(d.types.in, static_cast<std::size_t>(a_count), flush), x(d.types.in, static_cast<std::size_t>(a_count), flush);
  Buffer b(d.types.out, static_cast<std::size_t>(b_count), flush);
  const std::size_t mask_bytes = static_cast<std::size_t>(mask_ld(d.m) * d.n);
  GuardedBuffer<std::uint8_t> mask(mask_bytes, flush), mask_in(mask_bytes, flush);
  const bool with_specials = specials && !sums(d.op);
  fill(a, rng, with_specials, d.op == UnaryOp::sqrt ? -1 : -8);
  fill(x, rng, with_specials);
  for (auto& v : mask_in) v = static_cast<std::uint8_t>(rng());
  std::memset(mask.data(), 0xAB, mask_bytes);
  std::vector<std::uint8_t> b_ref(static_cast<std::size_t>(b_count) * weft::jit::size_of(d.types.out));
  std::vector<std::uint8_t> mask_ref(mask_bytes, 0xAB);
  for (std::size_t i = 0; i < b.size(); ++i) {
    const std::uint64_t sentinel = bits_of(d.types.out, static_cast<double>(i) + 0.5);
    b.set_bits(i, sentinel);
    Buffer::store_bits(b_ref.data(), d.types.out, i, sentinel);
  }
  double scale = 1;
  for (std::size_t i = 0; i < a.size(); ++i) scale += std::fabs(a.value(i)) * static_cast<double>(d.m + d.n);

  const UnaryArgs args{a.data(), b.data(),
                       d.mask == ReluMask::bitmask ? static_cast<const void*>(mask_in.data()) : x.data(), mask.data()};
  UnaryArgs ref_args = args;
  ref_args.out = b_ref.data();
  ref_args.mask = mask_ref.data();
  unary_reference(d, ref_args);
  unary_kernel(d, isa)(&args);

  const Match match = unary_match(d.op, d.types);
  for (std::size_t i = 0; i < b.size(); ++i) {
    const std::uint64_t want = Buffer::load_bits(b_ref.data(), d.types.out, i), got = b.bits(i);
    ASSERT_TRUE(matches(d.types.out, want, got, match, scale))
        << "element " << i << ": want " << Buffer::as_value(d.types.out, want) << " (0x" << std::hex << want
        << ") got " << Buffer::as_value(d.types.out, got) << " (0x" << got << ")";
  }
  if (d.op == UnaryOp::relu && d.mask == ReluMask::bitmask) {
    for (std::size_t i = 0; i < mask_bytes; ++i) ASSERT_EQ(mask[i], mask_ref[i]) << "mask byte " << i;
  }
}

class EltwiseTypes : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!weft::jit::can_run(GetParam(), weft::jit::cpu_features()))
      GTEST_SKIP() << "this host cannot run " << weft::jit::to_string(GetParam()) << " code";
  }
};

// Every element-wise op (and zero, relu / relu_bwd with and without the bitmask) in every bf16
// combination, columns of 1..17 rows (every tail on both vector widths), 1..3 columns, ld = m
// (flat) and ld > m.
TEST_P(EltwiseTypes, UnaryBf16EveryOpEveryTail) {
  std::mt19937 rng(1501);
  std::vector<UnaryDesc> ops;
  for (UnaryOp op : kElementwise) ops.push_back({.op = op, .alpha = takes_alpha(op) ? 1.25f : 0.0f});
  ops.push_back({.op = UnaryOp::zero});
  ops.push_back({.op = UnaryOp::relu_bwd});
  ops.push_back({.op = UnaryOp::relu, .mask = ReluMask::bitmask});
  ops.push_back({.op = UnaryOp::relu_bwd, .mask = ReluMask::bitmask});
  int trial = 0;
  for (const DataTypes& types : kBf16Types)
    for (UnaryDesc d : ops)
      for (std::int64_t m = 1; m <= 17; ++m)
        for (std::int64_t n = 1; n <= 3; ++n)
          for (std::int64_t pad : {0, 3}) {
            d.types = types;
            d.m = m;
            d.n = n;
            d.ld_in = m + pad;
            d.ld_out = m + (pad == 0 ? 0 : 1);
            check_unary(d, GetParam(), rng, ++trial % 2 == 0 ? Flush::front : Flush::back);
            if (HasFatalFailure()) return;
          }
}

// Larger columns: the unrolled loop, whole-vector remainders and the partial-vector tail together.
TEST_P(EltwiseTypes, UnaryBf16LongColumns) {
  std::mt19937 rng(1502);
  std::uniform_int_distribution<std::int64_t> rows(18, 300), cols(1, 4), pad(0, 5);
  for (const DataTypes& types : kBf16Types)
    for (UnaryOp op : {UnaryOp::copy, UnaryOp::relu, UnaryOp::gelu, UnaryOp::scale, UnaryOp::zero, UnaryOp::relu_bwd})
      for (int trial = 0; trial < 4; ++trial) {
        UnaryDesc d{.op = op, .m = rows(rng), .n = cols(rng), .alpha = takes_alpha(op) ? -0.75f : 0.0f, .types = types};
        d.ld_in = d.m + (trial == 0 ? 0 : pad(rng));
        d.ld_out = d.m + (trial == 0 ? 0 : pad(rng));
        if (op == UnaryOp::relu_bwd && trial % 2 == 1) d.mask = ReluMask::bitmask;
        check_unary(d, GetParam(), rng, trial % 2 == 0 ? Flush::back : Flush::front);
        if (HasFatalFailure()) return;
      }
}

// Transposes (plain and fused with an op) and reductions in bf16.
TEST_P(EltwiseTypes, UnaryBf16TransposesAndReductions) {
  std::mt19937 rng(1503);
  std::uniform_int_distribution<std::int64_t> dim(1, 40), pad(0, 4);
  const UnaryDesc kinds[] = {{.op = UnaryOp::transpose},
                             {.op = UnaryOp::copy, .transpose_out = true},
                             {.op = UnaryOp::relu, .transpose_out = true},
                             {.op = UnaryOp::tanh, .transpose_out = true},
                             {.op = UnaryOp::reduce_rows_sum},
                             {.op = UnaryOp::reduce_rows_max},
                             {.op = UnaryOp::reduce_cols_sum},
                             {.op = UnaryOp::reduce_cols_max}};
  for (const DataTypes& types : kBf16Types)
    for (UnaryDesc d : kinds)
      for (int trial = 0; trial < 8; ++trial) {
        d.types = types;
        d.m = trial < 2 ? 1 + trial * 16 : dim(rng);
        d.n = trial < 2 ? 17 - trial * 16 : dim(rng);
        d.ld_in = d.m + (trial % 2 == 0 ? 0 : pad(rng));
        const bool transposes = d.op == UnaryOp::transpose || d.transpose_out;
        d.ld_out = (transposes ? d.n : d.m) + (trial % 2 == 0 ? 0 : pad(rng));
        check_unary(d, GetParam(), rng, trial % 3 == 0 ? Flush::front : Flush::back);
        if (HasFatalFailure()) return;
      }
}

TEST_P(EltwiseTypes, UnaryF64EveryOpEveryTail) {
  std::mt19937 rng(1504);
  int trial = 0;
  for (UnaryOp op : kF64Ops)
    for (std::int64_t m : {1, 2, 3, 4, 5, 7, 8, 9, 11, 15, 16, 17, 33, 70})
      for (std::int64_t n = 1; n <= 3; ++n)
        for (std::int64_t pad : {0, 2}) {
          const UnaryDesc d{.op = op, .m = m, .n = n, .ld_in = m + pad, .ld_out = m + pad / 2,
                            .alpha = takes_alpha(op) ? 0.1f : 0.0f, .types = kF64};
          check_unary(d, GetParam(), rng, ++trial % 2 == 0 ? Flush::front : Flush::back);
          if (HasFatalFailure()) return;
        }
}

// The f64 transpose (4 x 4 blocks) and every f64 op fused with it (transpose_out): every row and
// column tail, whole blocks in loops, padded leading dimensions, and the partial row block of the
// last columns, which must not read past A.
TEST_P(EltwiseTypes, UnaryF64Transposes) {
  std::mt19937 rng(1506);
  std::vector<UnaryDesc> kinds{{.op = UnaryOp::transpose}};
  for (UnaryOp op : kF64Ops)
    if (is_elementwise(op)) kinds.push_back({.op = op, .alpha = takes_alpha(op) ? 0.1f : 0.0f, .transpose_out = true});
  int trial = 0;
  for (UnaryDesc d : kinds)
    for (std::int64_t m : {1, 3, 4, 5, 8, 11, 17})
      for (std::int64_t n : {1, 2, 4, 7, 9, 16})
        for (std::int64_t pad : {0, 3}) {
          d.types = kF64;
          d.m = m;
          d.n = n;
          d.ld_in = m + pad;
          d.ld_out = n + pad / 3;
          check_unary(d, GetParam(), rng, ++trial % 2 == 0 ? Flush::front : Flush::back);
          if (HasFatalFailure()) return;
        }
}

// The f64 reductions: every row and column tail on both vector widths (4 and 8 doubles), padded
// leading dimensions. max with the special values (a NaN element gives NaN, as in f32); sums of
// multiples of 1/16, which are exact in any order, bit for bit against the reference.
TEST_P(EltwiseTypes, UnaryF64Reductions) {
  std::mt19937 rng(1507);
  std::uniform_int_distribution<int> sixteenths(-1000, 1000);
  int trial = 0;
  for (UnaryOp op : {UnaryOp::reduce_rows_sum, UnaryOp::reduce_rows_max, UnaryOp::reduce_cols_sum,
                     UnaryOp::reduce_cols_max})
    for (std::int64_t m : {1, 2, 3, 4, 5, 7, 8, 9, 13, 17, 33})
      for (std::int64_t n : {1, 2, 5})
        for (std::int64_t pad : {0, 3}) {
          const UnaryDesc d{.op = op, .m = m, .n = n, .ld_in = m + pad, .ld_out = m, .types = kF64};
          const Flush flush = ++trial % 2 == 0 ? Flush::front : Flush::back;
          if (op == UnaryOp::reduce_rows_max || op == UnaryOp::reduce_cols_max) {
            check_unary(d, GetParam(), rng, flush);
            if (HasFatalFailure()) return;
            continue;
          }
          SCOPED_TRACE(to_string(d));
          const std::int64_t outputs = op == UnaryOp::reduce_rows_sum ? m : n;
          Buffer a(DataType::f64, static_cast<std::size_t>(unary_in_count(d, d.ld_in)), flush);
          Buffer b(DataType::f64, static_cast<std::size_t>(outputs), flush);
          std::vector<double> want(static_cast<std::size_t>(outputs));
          for (std::size_t i = 0; i < a.size(); ++i) a.set_bits(i, bits_of(DataType::f64, sixteenths(rng) / 16.0));
          unary_reference(d, UnaryArgs{.in = a.data(), .out = want.data()});
          Unary(d, GetParam())(UnaryArgs{.in = a.data(), .out = b.data()});
          for (std::size_t i = 0; i < b.size(); ++i) ASSERT_EQ(b.value(i), want[i]) << "output " << i;
        }
}

// UnaryArgs::ld_in = 0 under a descriptor whose ld_in is 0: every column reads A's first (and
// aux's), for every op that reads A, in every type combination that has it, against the reference
// (which reads A at i + j * 0 too). The tensor layer runs its stride-0 inputs so. Before this was
// part of the contract, Unary::operator() refused it (a test below).
TEST_P(EltwiseTypes, UnaryColumnBroadcastAtCallTime) {
  std::mt19937 rng(1508);
  std::vector<UnaryDesc> kinds;
  for (UnaryOp op : kElementwise) kinds.push_back({.op = op, .alpha = takes_alpha(op) ? 0.5f : 0.0f});
  for (UnaryOp op : {UnaryOp::relu_bwd, UnaryOp::transpose, UnaryOp::reduce_rows_sum, UnaryOp::reduce_rows_max,
                     UnaryOp::reduce_cols_sum, UnaryOp::reduce_cols_max})
    kinds.push_back({.op = op});
  kinds.push_back({.op = UnaryOp::relu, .transpose_out = true});
  auto has_kernel = [](const UnaryDesc& d) {
    try {
      validate(d);
      return true;
    } catch (const weft::Error&) {
      return false;
    }
  };
  int trial = 0;
  for (const DataTypes& types : {DataTypes{}, kBf16Types[0], kBf16Types[2], kF64})
    for (UnaryDesc d : kinds) {
      d.types = types;
      d.m = d.n = 4;
      if (!has_kernel(d)) continue;  // an op the type combination has no kernel for
      for (std::int64_t m : {1, 5, 8, 13, 17, 33})
        for (std::int64_t n : {2, 9}) {
          d.m = m;
          d.n = n;
          d.ld_in = 0;
          d.ld_out = (d.op == UnaryOp::transpose || d.transpose_out ? n : m) + 1;
          check_unary(d, GetParam(), rng, ++trial % 2 == 0 ? Flush::front : Flush::back);
          if (HasFatalFailure()) return;
        }
    }
}

// Leading dimensions given at call time (UnaryArgs::ld_in / ld_out) scale by the element size too.
TEST_P(EltwiseTypes, UnaryLeadingDimensionsAtCallTime) {
  std::mt19937 rng(1505);
  for (const DataTypes& types : {kBf16Types[0], kBf16Types[1], kBf16Types[2], kF64}) {
    const UnaryDesc d{.op = UnaryOp::relu, .m = 13, .n = 3, .ld_in = 0, .ld_out = 0, .types = types};
    const std::int64_t lda = 17, ldb = 14;
    Buffer a(types.in, static_cast<std::size_t>(lda * 2 + 13)), b(types.out, static_cast<std::size_t>(ldb * 2 + 13));
    std::vector<std::uint8_t> ref(b.size() * weft::jit::size_of(types.out));
    fill(a, rng, true);
    for (std::size_t i = 0; i < b.size(); ++i) {
      b.set_bits(i, bits_of(types.out, 7.0));
      Buffer::store_bits(ref.data(), types.out, i, bits_of(types.out, 7.0));
    }
    const UnaryArgs args{.in = a.data(), .out = b.data(), .ld_in = lda, .ld_out = ldb};
    UnaryArgs r = args;
    r.out = ref.data();
    unary_reference(d, r);
    Unary(d, GetParam())(args);
    for (std::size_t i = 0; i < b.size(); ++i)
      ASSERT_EQ(b.bits(i), Buffer::load_bits(ref.data(), types.out, i)) << to_string(d) << " element " << i;
  }
}

// Outputs of 8 MiB or more: streaming stores after a scalar head that aligns the output, from an
// output misaligned by one element.
TEST_P(EltwiseTypes, UnaryAndBinaryStreaming) {
  std::mt19937 rng(1506);
  for (const DataTypes& types : {kBf16Types[0], kBf16Types[1], kF64}) {
    const std::int64_t n = kNontemporalBytes / static_cast<std::int64_t>(weft::jit::size_of(types.out)) + 21;
    Buffer a(types.in, static_cast<std::size_t>(n)), c(types.in, static_cast<std::size_t>(n), Flush::front);
    Buffer b(types.out, static_cast<std::size_t>(n + 1));
    // Random values (specials among them) repeating with a period of 4099 elements, prime: each
    // lands at every lane position (drawing millions of them took a third of the test's time).
    for (Buffer* operand : {&a, &c}) {
      Buffer pattern(types.in, 4099);
      fill(pattern, rng, true);
      const std::size_t period = pattern.size() * weft::jit::size_of(types.in);
      const std::size_t bytes = operand->size() * weft::jit::size_of(types.in);
      auto* to = static_cast<std::uint8_t*>(operand->data());
      for (std::size_t at = 0; at < bytes; at += period) std::memcpy(to + at, pattern.data(), std::min(period, bytes - at));
    }
    std::vector<std::uint8_t> ref(static_cast<std::size_t>(n) * weft::jit::size_of(types.out));
    auto* out = static_cast<std::uint8_t*>(b.data()) + weft::jit::size_of(types.out);  // misaligned by one element
    // Equal bytes, else one search for the first wrong element (an assertion per element cost most
    // of the test's time under qemu).
    auto expect_reference = [&](const std::string& what, Match match) {
      if (std::memcmp(ref.data(), out, ref.size()) == 0) return;
      std::int64_t i = 0;
      while (i < n && matches(types.out, Buffer::load_bits(ref.data(), types.out, static_cast<std::size_t>(i)),
                              Buffer::load_bits(out, types.out, static_cast<std::size_t>(i)), match))
        ++i;
      ASSERT_EQ(i, n) << what << ": first wrong element";
    };
    for (UnaryOp op : {UnaryOp::relu, UnaryOp::scale, UnaryOp::zero}) {
      const UnaryDesc d{.op = op, .m = n, .n = 1, .ld_in = n, .ld_out = n, .alpha = op == UnaryOp::scale ? 3.0f : 0.0f,
                        .types = types};
      ASSERT_TRUE(plan_unary(d, GetParam()).nontemporal) << to_string(d);
      unary_reference(d, UnaryArgs{.in = a.data(), .out = ref.data()});
      Unary(d, GetParam())(UnaryArgs{.in = a.data(), .out = out});
      expect_reference(to_string(d), unary_match(op, types));
      if (HasFatalFailure()) return;
    }
    for (BinaryOp op : {BinaryOp::add, BinaryOp::max}) {
      const BinaryDesc d{.op = op, .m = n, .n = 1, .ld_in0 = n, .ld_in1 = n, .ld_out = n, .types = types};
      ASSERT_TRUE(plan_binary(d, GetParam()).nontemporal) << to_string(d);
      binary_reference(d, BinaryArgs{a.data(), c.data(), ref.data()});
      Binary(d, GetParam())(BinaryArgs{a.data(), c.data(), out});
      expect_reference(to_string(d), Match::value);
      if (HasFatalFailure()) return;
    }
  }
}

// VNNI-2 packing and unpacking (bf16, and f32 rounded as it is packed): against the reference,
// and unpack(pack(A)) == A bit for bit.
TEST_P(EltwiseTypes, Vnni2PackAndUnpack) {
  std::mt19937 rng(1507);
  std::uniform_int_distribution<std::int64_t> pad(0, 5);
  int trial = 0;
  for (DataType in : {DataType::bf16, DataType::f32})
    for (std::int64_t m : {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33, 40, 70, 150})
      for (std::int64_t n : {2, 4, 6}) {
        const Flush flush = ++trial % 2 == 0 ? Flush::front : Flush::back;
        const UnaryDesc pack{.op = UnaryOp::vnni2_pack, .m = m, .n = n, .ld_in = m + pad(rng), .ld_out = m + pad(rng),
                             .types = {.in = in, .out = DataType::bf16}};
        check_unary(pack, GetParam(), rng, flush);
        if (HasFatalFailure()) return;
        if (in != DataType::bf16) continue;
        const UnaryDesc unpack{.op = UnaryOp::vnni2_unpack, .m = m, .n = n, .ld_in = m + pad(rng), .ld_out = m + pad(rng),
                               .types = pack.types};
        check_unary(unpack, GetParam(), rng, flush);
        if (HasFatalFailure()) return;
        // The round trip, with the same ld: every bit back (NaN payloads and denormals included).
        const UnaryDesc there{.op = UnaryOp::vnni2_pack, .m = m, .n = n, .ld_in = m, .ld_out = m, .types = pack.types};
        UnaryDesc back = there;
        back.op = UnaryOp::vnni2_unpack;
        Buffer a(DataType::bf16, static_cast<std::size_t>(m * n)), v(DataType::bf16, static_cast<std::size_t>(m * n), Flush::front);
        Buffer r(DataType::bf16, static_cast<std::size_t>(m * n));
        fill(a, rng, true);
        Unary(there, GetParam())(UnaryArgs{.in = a.data(), .out = v.data()});
        Unary(back, GetParam())(UnaryArgs{.in = v.data(), .out = r.data()});
        for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(r.bits(i), a.bits(i)) << to_string(there) << " element " << i;
        // The layout itself, at one element: A(i, j) lands at (j / 2) * 2m + 2i + j % 2.
        const std::int64_t i = m - 1, j = n - 1;
        EXPECT_EQ(v.bits(static_cast<std::size_t>(j / 2 * 2 * m + 2 * i + j % 2)), a.bits(static_cast<std::size_t>(i + j * m)));
      }
}

void check_binary(const BinaryDesc& d, Isa isa, std::mt19937& rng, Flush flush) {
  SCOPED_TRACE(to_string(d));
  auto count = [&](Broadcast b, std::int64_t ld) -> std::size_t {
    switch (b) {
      case Broadcast::none: return static_cast<std::size_t>(ld * (d.n - 1) + d.m);
      case Broadcast::row: return static_cast<std::size_t>(d.n);
      case Broadcast::col: return static_cast<std::size_t>(d.m);
      case Broadcast::scalar: return 1;
    }
    return 0;
  };
  Buffer a(d.types.in, count(d.bcast0, d.ld_in0), flush), b(d.types.in, count(d.bcast1, d.ld_in1), flush);
  const std::size_t c_count = static_cast<std::size_t>(d.ld_out * (d.n - 1) + d.m);
  Buffer c(d.types.out, c_count, flush);
  fill(a, rng, true, -4, 4);
  fill(b, rng, true, -4, 4);
  std::vector<std::uint8_t> ref(c_count * weft::jit::size_of(d.types.out));
  for (std::size_t i = 0; i < c_count; ++i) {
    const std::uint64_t sentinel = bits_of(d.types.out, static_cast<double>(i) + 0.5);
    c.set_bits(i, sentinel);
    Buffer::store_bits(ref.data(), d.types.out, i, sentinel);
  }
  binary_reference(d, BinaryArgs{a.data(), b.data(), ref.data()});
  const BinaryArgs args{a.data(), b.data(), c.data()};
  binary_kernel(d, isa)(&args);
  for (std::size_t i = 0; i < c_count; ++i) {
    const std::uint64_t want = Buffer::load_bits(ref.data(), d.types.out, i), got = c.bits(i);
    ASSERT_TRUE(matches(d.types.out, want, got, Match::value))
        << "element " << i << ": want " << Buffer::as_value(d.types.out, want) << " (0x" << std::hex << want << ") got "
        << Buffer::as_value(d.types.out, got) << " (0x" << got << ")";
  }
}

// Every op, every pair of broadcasts, every type combination; shapes with tails (1..17 rows),
// flat and strided, plus a few long columns.
TEST_P(EltwiseTypes, BinaryEveryOpEveryBroadcastEveryType) {
  std::mt19937 rng(1508);
  std::uniform_int_distribution<std::int64_t> rows(1, 17), cols(1, 3), pad(0, 3), long_rows(18, 200);
  int trial = 0;
  for (const DataTypes& types : {kBf16Types[0], kBf16Types[1], kBf16Types[2], kF64})
    for (BinaryOp op : kBinaryOps)
      for (Broadcast b0 : kBcasts)
        for (Broadcast b1 : kBcasts)
          for (int shape = 0; shape < 6; ++shape) {
            BinaryDesc d{.op = op, .m = shape == 5 ? long_rows(rng) : rows(rng), .n = cols(rng), .bcast0 = b0, .bcast1 = b1,
                         .types = types};
            const bool flat = shape % 2 == 0;
            d.ld_in0 = d.m + (flat ? 0 : pad(rng));
            d.ld_in1 = d.m + (flat ? 0 : pad(rng));
            d.ld_out = d.m + (flat ? 0 : pad(rng));
            check_binary(d, GetParam(), rng, ++trial % 2 == 0 ? Flush::front : Flush::back);
            if (HasFatalFailure()) return;
          }
}

// The conversions themselves, pinned to their bits (not only to the reference): f32 -> bf16 rounds
// to nearest even (ties, the largest floats to infinity, denormals to signed zero, NaN quieted),
// bf16 -> f32 is exact, bf16 -> bf16 keeps every bit.
TEST_P(EltwiseTypes, ConversionsBitForBit) {
  const std::vector<std::pair<std::uint32_t, std::uint16_t>> rounding = {
      {0x3f808000u, 0x3f80}, {0x3f818000u, 0x3f82}, {0xbf808000u, 0xbf80}, {0x3f808001u, 0x3f81},
      {0x7f7fffffu, 0x7f80}, {0x7f7f8000u, 0x7f80}, {0x7f7f7fffu, 0x7f7f}, {0xff7fffffu, 0xff80},
      {0x00000001u, 0x0000}, {0x807fffffu, 0x8000}, {0x7fa00000u, 0x7fe0}, {0xffc00001u, 0xffc0},
      {0x7f800000u, 0x7f80}, {0x80000000u, 0x8000}, {0x00800000u, 0x0080}, {0x3f7fffffu, 0x3f80}};
  // 17 elements: a whole vector and a tail on AVX2, a tail on AVX-512.
  const std::int64_t m = 17;
  Buffer f(DataType::f32, m), h(DataType::bf16, m);
  for (std::size_t i = 0; i < static_cast<std::size_t>(m); ++i) f.set_bits(i, rounding[i % rounding.size()].first);
  Unary(UnaryDesc{.op = UnaryOp::copy, .m = m, .n = 1, .ld_in = m, .ld_out = m, .types = {.in = DataType::f32, .out = DataType::bf16}},
        GetParam())(UnaryArgs{.in = f.data(), .out = h.data()});
  for (std::size_t i = 0; i < static_cast<std::size_t>(m); ++i)
    EXPECT_EQ(h.bits(i), rounding[i % rounding.size()].second) << std::hex << "f32 0x" << f.bits(i);

  Buffer src(DataType::bf16, m), widened(DataType::f32, m), copied(DataType::bf16, m);
  for (std::size_t i = 0; i < static_cast<std::size_t>(m); ++i) src.set_bits(i, kBf16Specials[i % std::size(kBf16Specials)]);
  Unary(UnaryDesc{.op = UnaryOp::copy, .m = m, .n = 1, .ld_in = m, .ld_out = m, .types = {.in = DataType::bf16, .out = DataType::f32}},
        GetParam())(UnaryArgs{.in = src.data(), .out = widened.data()});
  Unary(UnaryDesc{.op = UnaryOp::copy, .m = m, .n = 1, .ld_in = m, .ld_out = m, .types = {.in = DataType::bf16, .out = DataType::bf16}},
        GetParam())(UnaryArgs{.in = src.data(), .out = copied.data()});
  for (std::size_t i = 0; i < static_cast<std::size_t>(m); ++i) {
    EXPECT_EQ(widened.bits(i), src.bits(i) << 16) << std::hex << "bf16 0x" << src.bits(i);
    EXPECT_EQ(copied.bits(i), src.bits(i)) << std::hex << "bf16 0x" << src.bits(i);
  }
  // A bf16 denormal through an op that rounds (scale by 1) is flushed, as the f32 result rounded
  // with to_bfloat16 is.
  Unary(UnaryDesc{.op = UnaryOp::scale, .m = m, .n = 1, .ld_in = m, .ld_out = m, .alpha = 1.0f, .types = {.in = DataType::bf16, .out = DataType::bf16}},
        GetParam())(UnaryArgs{.in = src.data(), .out = copied.data()});
  EXPECT_EQ(copied.bits(7), 0x0000u);  // 0x0001
  EXPECT_EQ(copied.bits(8), 0x8000u);  // 0x807f
  EXPECT_EQ(copied.bits(6), 0x7fc1u);  // the signaling NaN 0x7f81, quieted
}

INSTANTIATE_TEST_SUITE_P(Isas, EltwiseTypes, ::testing::Values(Isa::avx2, Isa::avx512, Isa::avx512_bf16, Isa::neon, Isa::sve256, Isa::sve512),
                         [](const ::testing::TestParamInfo<Isa>& p) { return std::string(weft::jit::to_string(p.param)); });

// ---- what has no kernel, and the code of ISAs the host may not run ---------------------------------

void expect_refused(const UnaryDesc& d, const std::string& says) {
  try {
    validate(d);
    ADD_FAILURE() << "accepted " << to_string(d) << "; expected: " << says;
  } catch (const weft::Error& e) {
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
  }
  EXPECT_THROW(Unary(d, Isa::reference), weft::Error);
}

TEST(EltwiseTypeErrors, UnaryOpsWithoutKernelsInTheirTypesAreNamed) {
  for (UnaryOp op : {UnaryOp::exp, UnaryOp::sigmoid, UnaryOp::tanh, UnaryOp::gelu})
    expect_refused(UnaryDesc{.op = op, .m = 8, .n = 4, .ld_in = 8, .ld_out = 8, .types = kF64},
                   "op " + to_string(op) + " is not supported with data types in_f64_out_f64_compute_f64: f64 kernels exist for");
  expect_refused(UnaryDesc{.op = UnaryOp::relu, .m = 8, .n = 4, .ld_in = 8, .ld_out = 8, .mask = ReluMask::bitmask, .types = kF64},
                 "op relu with a ReLU bitmask is not supported with data types in_f64_out_f64_compute_f64");
  expect_refused(UnaryDesc{.op = UnaryOp::relu_bwd, .m = 8, .n = 4, .ld_in = 8, .ld_out = 8, .mask = ReluMask::bitmask, .types = kF64},
                 "op relu_bwd with a ReLU bitmask is not supported");
  expect_refused(UnaryDesc{.op = UnaryOp::exp, .m = 8, .n = 4, .ld_in = 8, .ld_out = 4, .transpose_out = true, .types = kF64},
                 "op exp is not supported with data types in_f64_out_f64_compute_f64");
  expect_refused(UnaryDesc{.op = UnaryOp::vnni2_pack, .m = 8, .n = 4, .ld_in = 8, .ld_out = 8},
                 "op vnni2_pack is not supported with data types in_f32_out_f32_compute_f32: VNNI-2 is a bf16 layout");
  expect_refused(UnaryDesc{.op = UnaryOp::vnni2_pack, .m = 8, .n = 4, .ld_in = 8, .ld_out = 8, .types = {.in = DataType::bf16}},
                 "op vnni2_pack is not supported with data types in_bf16_out_f32_compute_f32");
  expect_refused(UnaryDesc{.op = UnaryOp::vnni2_unpack, .m = 8, .n = 4, .ld_in = 8, .ld_out = 8, .types = {.out = DataType::bf16}},
                 "op vnni2_unpack is not supported with data types in_f32_out_bf16_compute_f32: VNNI-2 is a bf16 layout (in bf16 and out bf16)");
  expect_refused(UnaryDesc{.op = UnaryOp::vnni2_pack, .m = 8, .n = 3, .ld_in = 8, .ld_out = 8,
                           .types = {.in = DataType::bf16, .out = DataType::bf16}},
                 "n = 3 is odd: vnni2_pack packs the columns in pairs");
  expect_refused(UnaryDesc{.op = UnaryOp::vnni2_unpack, .m = 8, .n = 4, .ld_in = 7, .ld_out = 8,
                           .types = {.in = DataType::bf16, .out = DataType::bf16}},
                 "ld_in < m");
  // The types the element-wise TPPs do not take at all.
  expect_refused(UnaryDesc{.op = UnaryOp::copy, .m = 8, .n = 4, .ld_in = 8, .ld_out = 8, .types = {.out = DataType::f64}},
                 "data types in_f32_out_f64_compute_f32 are not supported by the element-wise TPPs");
}

TEST(EltwiseTypeErrors, TypedCallsAreFp32Only) {
  std::vector<float> a(16), b(16), c(16);
  const Unary u(UnaryDesc{.op = UnaryOp::copy, .m = 16, .n = 1, .ld_in = 16, .ld_out = 16, .types = {.out = DataType::bf16}},
                Isa::reference);
  try {
    u(a.data(), b.data());
    ADD_FAILURE() << "no error";
  } catch (const weft::Error& e) {
    EXPECT_NE(std::string(e.what()).find("the typed call takes float pointers, but the data types are in_f32_out_bf16_compute_f32"),
              std::string::npos)
        << e.what();
  }
  const Binary bin(BinaryDesc{.op = BinaryOp::add, .m = 16, .n = 1, .ld_in0 = 16, .ld_in1 = 16, .ld_out = 16, .types = kF64},
                   Isa::reference);
  EXPECT_THROW(bin(a.data(), b.data(), c.data()), weft::Error);
}

// Every (op, types) pair with a kernel emits on every ISA, on any host (AVX-512 code is generated
// here even where it cannot run); the native bf16 rounding makes the avx512_bf16 code shorter.
TEST(EltwiseTypeEmission, EveryIsaOnAnyHost) {
  WEFT_SKIP_UNLESS_BUILT_FOR(weft::jit::Isa::avx512);
  std::vector<UnaryDesc> unary;
  for (const DataTypes& types : kBf16Types) {
    for (UnaryOp op : kElementwise) unary.push_back({.op = op, .alpha = takes_alpha(op) ? 2.0f : 0.0f, .types = types});
    for (UnaryOp op : {UnaryOp::zero, UnaryOp::relu_bwd, UnaryOp::transpose, UnaryOp::reduce_rows_sum,
                       UnaryOp::reduce_rows_max, UnaryOp::reduce_cols_sum, UnaryOp::reduce_cols_max})
      unary.push_back({.op = op, .types = types});
    unary.push_back({.op = UnaryOp::relu, .mask = ReluMask::bitmask, .types = types});
    unary.push_back({.op = UnaryOp::gelu, .transpose_out = true, .types = types});
  }
  for (UnaryOp op : kF64Ops) unary.push_back({.op = op, .alpha = takes_alpha(op) ? 2.0f : 0.0f, .types = kF64});
  unary.push_back({.op = UnaryOp::transpose, .types = kF64});
  for (UnaryOp op : {UnaryOp::reduce_rows_sum, UnaryOp::reduce_rows_max, UnaryOp::reduce_cols_sum, UnaryOp::reduce_cols_max})
    unary.push_back({.op = op, .types = kF64});
  unary.push_back({.op = UnaryOp::sqrt, .transpose_out = true, .types = kF64});
  unary.push_back({.op = UnaryOp::vnni2_pack, .types = {.in = DataType::bf16, .out = DataType::bf16}});
  unary.push_back({.op = UnaryOp::vnni2_pack, .types = {.in = DataType::f32, .out = DataType::bf16}});
  unary.push_back({.op = UnaryOp::vnni2_unpack, .types = {.in = DataType::bf16, .out = DataType::bf16}});
  for (Isa isa : {Isa::avx2, Isa::avx512, Isa::avx512_bf16})
    for (UnaryDesc d : unary)
      for (std::int64_t m : {1, 17, 45}) {
        d.m = m;
        d.n = 4;
        d.ld_in = m + 1;
        d.ld_out = (d.op == UnaryOp::transpose || d.transpose_out ? 4 : m) + 1;
        EXPECT_GT(unary_code_size(d, isa), 0u) << to_string(d) << " " << weft::jit::to_string(isa);
      }
  for (Isa isa : {Isa::avx2, Isa::avx512, Isa::avx512_bf16})
    for (const DataTypes& types : {kBf16Types[0], kBf16Types[1], kBf16Types[2], kF64})
      for (BinaryOp op : kBinaryOps)
        for (Broadcast b : kBcasts) {
          const BinaryDesc d{.op = op, .m = 37, .n = 5, .ld_in0 = 40, .ld_in1 = 37, .ld_out = 37, .bcast1 = b, .types = types};
          EXPECT_GT(binary_code_size(d, isa), 0u) << to_string(d) << " " << weft::jit::to_string(isa);
        }
  const UnaryDesc round{.op = UnaryOp::copy, .m = 37, .n = 3, .ld_in = 37, .ld_out = 40,
                        .types = {.in = DataType::f32, .out = DataType::bf16}};
  EXPECT_LT(unary_code_size(round, Isa::avx512_bf16), unary_code_size(round, Isa::avx512));
}

TEST(EltwiseTypePlans, LanesAndStreamingFollowTheTypes) {
  const UnaryDesc f64{.op = UnaryOp::relu, .m = 37, .n = 2, .ld_in = 40, .ld_out = 37, .types = kF64};
  EXPECT_EQ(plan_unary(f64, Isa::avx2).lanes, 4);
  EXPECT_EQ(plan_unary(f64, Isa::avx2).full_vectors, 9);
  EXPECT_EQ(plan_unary(f64, Isa::avx2).tail, 1);
  EXPECT_EQ(plan_unary(f64, Isa::avx512).lanes, 8);
  UnaryDesc bf16 = f64;
  bf16.types = {.in = DataType::bf16, .out = DataType::bf16};
  EXPECT_EQ(plan_unary(bf16, Isa::avx2).lanes, 8);  // widened to f32 lanes
  EXPECT_EQ(plan_unary(bf16, Isa::avx512_bf16).lanes, 16);
  EXPECT_EQ(plan_unary(UnaryDesc{.op = UnaryOp::vnni2_pack, .m = 37, .n = 6, .ld_in = 37, .ld_out = 37, .types = bf16.types},
                       Isa::avx2).cols, 3);
  // Streaming from kNontemporalBytes of output: twice as many bf16 elements as floats, half as
  // many doubles.
  const std::int64_t floats = kNontemporalBytes / 4;
  auto streams = [](std::int64_t elements, const DataTypes& types) {
    return plan_unary(UnaryDesc{.op = UnaryOp::copy, .m = elements, .n = 1, .ld_in = elements, .ld_out = elements, .types = types},
                      Isa::avx2).nontemporal;
  };
  EXPECT_TRUE(streams(floats, DataTypes{}));
  EXPECT_FALSE(streams(floats, {.in = DataType::f32, .out = DataType::bf16}));
  EXPECT_TRUE(streams(2 * floats, {.in = DataType::f32, .out = DataType::bf16}));
  EXPECT_TRUE(streams(floats / 2, kF64));
  EXPECT_FALSE(streams(floats / 2 - 1, kF64));
  const BinaryDesc add{.op = BinaryOp::add, .m = floats, .n = 1, .ld_in0 = floats, .ld_in1 = floats, .ld_out = floats,
                       .types = {.in = DataType::bf16, .out = DataType::bf16}};
  EXPECT_FALSE(plan_binary(add, Isa::avx2).nontemporal);
  EXPECT_EQ(plan_binary(BinaryDesc{.op = BinaryOp::add, .m = 9, .n = 1, .ld_in0 = 9, .ld_in1 = 9, .ld_out = 9, .types = kF64},
                        Isa::avx512).lanes, 8);
}

}  // namespace
