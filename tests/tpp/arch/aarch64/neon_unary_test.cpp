// The Neon unary kernels (tpp/src/arch/aarch64/unary_emit.cpp) against unary_reference: every op
// but the transposing ones and VNNI-2, in every data type validate() admits, over every m in 1..37
// with several n, with leading dimensions at their minimum, padded, given at call time and 0 at
// call time (the column broadcast). Operands sit flush against guard pages (after them, and before
// them in some cases), so that touching one element outside faults; outputs start as sentinels and
// are compared whole, the gaps between columns included. Results must equal the reference's bit for
// bit, NaN payloads and signed zeros included, except exp, sigmoid, tanh and gelu, which must be
// within docs/tpp_eltwise.md's accuracy (plus one bf16 step when rounded to bf16).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "guarded_buffer.hpp"
#include "unary_emit.hpp"
#include "weft/jit/bfloat16.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/jit/data_type.hpp"
#include "weft/jit/error.hpp"
#include "weft/tpp/unary.hpp"

namespace {

using namespace weft::tpp;
using weft::jit::DataType;
using weft::jit::Isa;
using weft::test::Flush;
using weft::test::GuardedBuffer;

constexpr DataType kF32 = DataType::f32, kBf16 = DataType::bf16, kF64 = DataType::f64;

// Every type combination the element-wise TPPs take.
constexpr DataTypes kAllTypes[] = {
    {kF32, kF32, kF32}, {kBf16, kF32, kF32}, {kF32, kBf16, kF32}, {kBf16, kBf16, kF32}, {kF64, kF64, kF64}};

constexpr UnaryOp kElementwiseOps[] = {UnaryOp::zero,       UnaryOp::copy,    UnaryOp::relu,      UnaryOp::square,
                                       UnaryOp::reciprocal, UnaryOp::sqrt,    UnaryOp::exp,       UnaryOp::sigmoid,
                                       UnaryOp::tanh,       UnaryOp::gelu,    UnaryOp::increment, UnaryOp::decrement,
                                       UnaryOp::scale};
constexpr UnaryOp kReductions[] = {UnaryOp::reduce_rows_sum, UnaryOp::reduce_rows_max, UnaryOp::reduce_cols_sum,
                                   UnaryOp::reduce_cols_max};

bool transcendental(UnaryOp op) {
  return op == UnaryOp::exp || op == UnaryOp::sigmoid || op == UnaryOp::tanh || op == UnaryOp::gelu;
}
bool takes_alpha(UnaryOp op) { return op == UnaryOp::increment || op == UnaryOp::decrement || op == UnaryOp::scale; }
bool rows_reduction(UnaryOp op) { return op == UnaryOp::reduce_rows_sum || op == UnaryOp::reduce_rows_max; }
bool cols_reduction(UnaryOp op) { return op == UnaryOp::reduce_cols_sum || op == UnaryOp::reduce_cols_max; }

// Whether validate() admits `d` (f64 has no transcendental and no bitmask).
bool has_kernel(const UnaryDesc& d) {
  try {
    validate(d);
    return true;
  } catch (const weft::Error&) {
    return false;
  }
}

// ---- typed operands -------------------------------------------------------------------------------

// Elements of one data type in a guarded buffer, accessed by bits.
class Operand {
 public:
  Operand(DataType type, std::int64_t count, Flush flush)
      : type_(type), count_(static_cast<std::size_t>(count)), bytes_(count_ * weft::jit::size_of(type), flush) {}
  void* data() { return bytes_.data(); }
  std::size_t size() const { return count_; }
  DataType type() const { return type_; }
  std::uint64_t bits(std::size_t i) const {
    std::uint64_t v = 0;
    std::memcpy(&v, bytes_.data() + i * weft::jit::size_of(type_), weft::jit::size_of(type_));
    return v;
  }
  void set_bits(std::size_t i, std::uint64_t v) {
    std::memcpy(bytes_.data() + i * weft::jit::size_of(type_), &v, weft::jit::size_of(type_));
  }
  std::vector<std::uint8_t> copy() const { return {bytes_.data(), bytes_.data() + bytes_.size()}; }

 private:
  DataType type_;
  std::size_t count_;
  GuardedBuffer<std::uint8_t> bytes_;
};

double value_of(DataType type, std::uint64_t bits) {
  switch (type) {
    case DataType::f32: return std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    case DataType::bf16: return weft::jit::to_float(weft::jit::bfloat16{static_cast<std::uint16_t>(bits)});
    case DataType::f64: return std::bit_cast<double>(bits);
  }
  return 0;
}

std::uint64_t bits_of(DataType type, double v) {
  switch (type) {
    case DataType::f32: return std::bit_cast<std::uint32_t>(static_cast<float>(v));
    case DataType::bf16: return weft::jit::to_bfloat16(static_cast<float>(v)).bits;
    case DataType::f64: return std::bit_cast<std::uint64_t>(v);
  }
  return 0;
}

// NaNs (quiet, negative with a payload, signalling), zeros, infinities, denormals, the extremes.
constexpr std::uint64_t kF32Specials[] = {0x7fc00000, 0xffc00123, 0x7f800001, 0x80000000, 0x00000000, 0x7f800000,
                                          0xff800000, 0x00000001, 0x807fffff, 0x7f7fffff, 0x00800000, 0xff7fffff,
                                          0x3f800000, 0xbf800000};
constexpr std::uint64_t kBf16Specials[] = {0x7fc0, 0xffc1, 0x7f81, 0x8000, 0x0000, 0x7f80, 0xff80,
                                           0x0001, 0x807f, 0x7f7f, 0x0080, 0xff7f, 0x3f80, 0xbf80};
constexpr std::uint64_t kF64Specials[] = {0x7ff8000000000000, 0xfff8000000000123, 0x7ff0000000000001,
                                          0x8000000000000000, 0x0000000000000000, 0x7ff0000000000000,
                                          0xfff0000000000000, 0x0000000000000001, 0x800fffffffffffff,
                                          0x7fefffffffffffff, 0x0010000000000000, 0xffefffffffffffff,
                                          0x3ff0000000000000, 0xbff0000000000000};

// Random values in [-8, 8], a special value in about one element of `special_every`.
void fill(Operand& o, std::mt19937& rng, int special_every = 5) {
  std::uniform_real_distribution<double> dist(-8, 8);
  std::uniform_int_distribution<int> pick(0, special_every - 1);
  std::uniform_int_distribution<std::size_t> special(0, std::size(kF32Specials) - 1);
  for (std::size_t i = 0; i < o.size(); ++i) {
    if (special_every > 0 && pick(rng) == 0) {
      const std::size_t s = special(rng);
      o.set_bits(i, o.type() == kF32 ? kF32Specials[s] : o.type() == kBf16 ? kBf16Specials[s] : kF64Specials[s]);
    } else {
      o.set_bits(i, bits_of(o.type(), dist(rng)));
    }
  }
}

// ---- one case against the reference -----------------------------------------------------------------

// One bf16 step at the magnitude of v.
double bf16_ulp(double v) {
  const double a = std::fabs(v);
  if (!(a >= std::ldexp(1.0, -126))) return std::ldexp(1.0, -133);
  return std::ldexp(1.0, std::ilogb(a) - 7);
}

// Whether `got` may stand for `want` (bits of `type`): equal bits, or for a transcendental op both
// NaN or within the documented accuracy (relative 1e-6 where the value is a normal float, 4 * 2^-149
// where denormal), plus one bf16 step (and bf16's flush of denormals) when rounded to bf16.
bool matches(UnaryOp op, DataType type, std::uint64_t want, std::uint64_t got) {
  if (want == got) return true;
  if (!transcendental(op)) return false;
  const double w = value_of(type, want), g = value_of(type, got);
  if (std::isnan(w) || std::isnan(g)) return std::isnan(w) && std::isnan(g);
  const double f32_bound = std::fabs(w) >= std::ldexp(1.0, -126) ? 1e-6 * std::fabs(w) : 4 * std::ldexp(1.0, -149);
  const double bound = type == kBf16 ? f32_bound + bf16_ulp(w) + std::ldexp(1.0, -126) : f32_bound;
  return std::fabs(g - w) <= bound;
}

struct Call {
  std::int64_t ld_in = 0, ld_out = 0;  // UnaryArgs' (read where the descriptor has 0)
};

std::int64_t out_count(const UnaryDesc& d, std::int64_t ldb) {
  if (rows_reduction(d.op)) return d.m;
  if (cols_reduction(d.op)) return d.n;
  return ldb * (d.n - 1) + d.m;
}

// Runs the Neon kernel of `d` and the reference on the same operands; compares B whole and the
// bitmask relu writes. `specials`: one element in about `specials` is a special value (0: none).
void check(const UnaryDesc& d, Call call, std::uint32_t seed, Flush flush = Flush::back, int specials = 5) {
  SCOPED_TRACE(to_string(d) + " call ld_in " + std::to_string(call.ld_in) + " ld_out " + std::to_string(call.ld_out) +
               (flush == Flush::front ? " (guard before)" : ""));
  std::mt19937 rng(seed);
  const std::int64_t lda = d.ld_in != 0 ? d.ld_in : call.ld_in;
  const std::int64_t ldb = d.ld_out != 0 ? d.ld_out : call.ld_out;
  const std::int64_t a_count = lda * (d.n - 1) + d.m, b_count = out_count(d, ldb);
  Operand a(d.types.in, a_count, flush), x(d.types.in, a_count, flush), b(d.types.out, b_count, flush);
  fill(a, rng, specials);
  fill(x, rng, specials);
  // Sentinels in B: positions the kernel must not write keep them.
  for (std::size_t i = 0; i < b.size(); ++i) b.set_bits(i, 0x5a5a5a5a5a5a5a5aull ^ (i * 0x9e3779b97f4a7c15ull));
  const std::size_t mask_bytes = static_cast<std::size_t>(mask_ld(d.m) * d.n);
  GuardedBuffer<std::uint8_t> mask_in(mask_bytes, flush), mask_out(mask_bytes, flush);
  for (auto& byte : mask_in) byte = static_cast<std::uint8_t>(rng());  // bits past m too: ignored
  std::memset(mask_out.data(), 0xA5, mask_bytes);
  std::vector<std::uint8_t> want = b.copy(), want_mask(mask_out.begin(), mask_out.end());

  UnaryArgs args{.in = d.op == UnaryOp::zero ? nullptr : a.data(),
                 .out = b.data(),
                 .aux = d.op != UnaryOp::relu_bwd ? nullptr
                        : d.mask == ReluMask::bitmask ? static_cast<const void*>(mask_in.data())
                                                      : x.data(),
                 .mask = d.op == UnaryOp::relu && d.mask == ReluMask::bitmask ? mask_out.data() : nullptr,
                 .ld_in = call.ld_in,
                 .ld_out = call.ld_out};
  UnaryArgs ref = args;
  ref.out = want.data();
  if (args.mask != nullptr) ref.mask = want_mask.data();
  unary_reference(d, ref);

  const auto code = neon::emit_unary(d, plan_unary(d, Isa::neon));
  const auto fn = code->finalize<UnaryKernelFn>(to_string(d));
  fn(&args);

  Operand expected(d.types.out, b_count, Flush::back);
  std::memcpy(expected.data(), want.data(), want.size());
  for (std::size_t i = 0; i < b.size(); ++i) {
    ASSERT_TRUE(matches(d.op, d.types.out, expected.bits(i), b.bits(i)))
        << "element " << i << " (row " << (ldb > 0 && !rows_reduction(d.op) && !cols_reduction(d.op) ? i % ldb : i)
        << "): want 0x" << std::hex << expected.bits(i) << " (" << value_of(d.types.out, expected.bits(i)) << ") got 0x"
        << b.bits(i) << " (" << value_of(d.types.out, b.bits(i)) << ")" << std::dec;
  }
  for (std::size_t i = 0; i < mask_bytes; ++i)
    ASSERT_EQ(int{mask_out[i]}, int{want_mask[i]}) << "mask byte " << i;
}

// The layouts every op meets: leading dimensions at the minimum (flat for element-wise ops),
// padded, given at call time, and A broadcast (0 at call time).
enum class Layout { packed, padded, call_time, broadcast };
constexpr Layout kLayouts[] = {Layout::packed, Layout::padded, Layout::call_time, Layout::broadcast};

// `d` with the layout's leading dimensions (varying with `index`) and the call's.
std::pair<UnaryDesc, Call> laid_out(UnaryDesc d, Layout layout, int index) {
  Call call;
  const std::int64_t m = d.m;
  switch (layout) {
    case Layout::packed:
      d.ld_in = d.ld_out = m;
      break;
    case Layout::padded:
      d.ld_in = m + 1 + index % 5;
      d.ld_out = m + index % 3 + (index % 3 == 0 ? 1 : 0);
      break;
    case Layout::call_time:
      d.ld_in = d.ld_out = 0;
      call.ld_in = m + index % 4;
      call.ld_out = m + index % 3;
      break;
    case Layout::broadcast:
      d.ld_in = 0;
      call.ld_in = 0;
      if (index % 2 == 0) {
        d.ld_out = m + index % 3;
      } else {
        d.ld_out = 0;
        call.ld_out = m + 2;
      }
      break;
  }
  return {d, call};
}

// ---- element-wise ops -------------------------------------------------------------------------------

// Every element-wise op and zero, in every type it has kernels in, for m = 1..37 and n in
// {1, 2, 3, 7} (f32) or {2, 7} (the other types: the same code with other loads and stores); the
// layout rotates with m, and every third case has the guard page before.
TEST(NeonUnary, ElementwiseOpsEveryTypeAndShape) {
  int index = 0;
  for (UnaryOp op : kElementwiseOps) {
    for (const DataTypes& types : kAllTypes) {
      UnaryDesc base{.op = op, .m = 1, .n = 1, .alpha = takes_alpha(op) ? 1.25f : 0.0f, .types = types};
      if (!has_kernel(base)) continue;
      const std::vector<std::int64_t> ns = types == DataTypes{} ? std::vector<std::int64_t>{1, 2, 3, 7}
                                                                : std::vector<std::int64_t>{2, 7};
      for (std::int64_t n : ns) {
        for (std::int64_t m = 1; m <= 37; ++m, ++index) {
          base.m = m;
          base.n = n;
          const auto [d, call] = laid_out(base, kLayouts[index % 4], index);
          check(d, call, static_cast<std::uint32_t>(index), index % 3 == 2 ? Flush::front : Flush::back);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

// Each element-wise op over every special value of its input type, alone in a column of 1..16
// (each tail length) and in a long column.
TEST(NeonUnary, SpecialValuesEveryOpAndType) {
  for (UnaryOp op : kElementwiseOps) {
    for (const DataTypes& types : kAllTypes) {
      for (std::int64_t m : {1, 3, 14, 57}) {
        UnaryDesc d{.op = op, .m = m, .n = 2, .ld_in = m, .ld_out = m + 1, .alpha = takes_alpha(op) ? -0.75f : 0.0f,
                    .types = types};
        if (!has_kernel(d)) continue;
        check(d, {}, static_cast<std::uint32_t>(m), Flush::back, 1);  // every element special
        if (HasFatalFailure()) return;
      }
    }
  }
}

// increment / decrement / scale with alphas that make results round, overflow and cancel.
TEST(NeonUnary, AlphaValues) {
  int index = 0;
  for (UnaryOp op : {UnaryOp::increment, UnaryOp::decrement, UnaryOp::scale}) {
    for (float alpha : {1.0f, -0.0f, 3.1e-5f, 1e30f, -7.5f, 1e-40f}) {
      for (const DataTypes& types : kAllTypes) {
        const UnaryDesc d{.op = op, .m = 13, .n = 3, .ld_in = 13, .ld_out = 15, .alpha = alpha, .types = types};
        check(d, {}, static_cast<std::uint32_t>(100 + index++));
        if (HasFatalFailure()) return;
      }
    }
  }
}

// ---- ReLU bitmask and backward ------------------------------------------------------------------------

// relu with the bitmask, relu_bwd from the bitmask and from the forward input: every m in 1..37
// and n in 1..7 (mask columns of 1..5 bytes, each bit position of a partial byte), every type.
TEST(NeonUnary, ReluBitmaskAndBackwardEveryShape) {
  struct Variant {
    UnaryOp op;
    ReluMask mask;
  };
  int index = 0;
  for (Variant v : {Variant{UnaryOp::relu, ReluMask::bitmask}, Variant{UnaryOp::relu_bwd, ReluMask::bitmask},
                    Variant{UnaryOp::relu_bwd, ReluMask::none}}) {
    for (const DataTypes& types : kAllTypes) {
      UnaryDesc base{.op = v.op, .m = 1, .n = 1, .mask = v.mask, .types = types};
      if (!has_kernel(base)) continue;
      for (std::int64_t n = 1; n <= 7; ++n) {
        for (std::int64_t m = 1; m <= 37; ++m, ++index) {
          base.m = m;
          base.n = n;
          const auto [d, call] = laid_out(base, kLayouts[index % 4], index);
          check(d, call, static_cast<std::uint32_t>(7000 + index), index % 3 == 1 ? Flush::front : Flush::back);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

// ---- reductions ----------------------------------------------------------------------------------------

// The four reductions in every type, m in 1..37 and n in 1..9 (column groups of 4 and 2, and their
// remainders), every layout (ld_out is unused: B holds m or n values).
TEST(NeonUnary, ReductionsEveryTypeAndShape) {
  int index = 0;
  for (UnaryOp op : kReductions) {
    for (const DataTypes& types : kAllTypes) {
      UnaryDesc base{.op = op, .m = 1, .n = 1, .types = types};
      for (std::int64_t n = 1; n <= 9; ++n) {
        for (std::int64_t m = 1; m <= 37; ++m, ++index) {
          base.m = m;
          base.n = n;
          auto [d, call] = laid_out(base, kLayouts[index % 4], index);
          d.ld_out = 0;
          call.ld_out = 0;
          check(d, call, static_cast<std::uint32_t>(20000 + index), index % 3 == 0 ? Flush::front : Flush::back);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

// The max reductions' rules: any NaN gives the all-ones NaN, +0 wins over -0 in either order, a
// column of -inf gives -inf; sums of +0 and -0 give +0 (the reference starts from +0).
TEST(NeonUnary, ReductionSignedZerosNaNAndInfinities) {
  for (const DataTypes& types : kAllTypes) {
    const DataType t = types.in;
    const std::uint64_t minus_zero = t == kF32 ? 0x80000000u : t == kBf16 ? 0x8000u : 0x8000000000000000u;
    const std::uint64_t minus_inf = t == kF32 ? 0xff800000u : t == kBf16 ? 0xff80u : 0xfff0000000000000u;
    const std::uint64_t snan = t == kF32 ? 0x7f800001u : t == kBf16 ? 0x7f81u : 0x7ff0000000000001u;
    for (UnaryOp op : kReductions) {
      for (std::int64_t m : {1, 5, 9}) {
        for (std::int64_t n : {1, 3, 6}) {
          const UnaryDesc d{.op = op, .m = m, .n = n, .ld_in = m, .types = types};
          const std::int64_t count = m * n;
          // Patterns by element index: column j / row i of the reduced direction sees each rule.
          for (int pattern = 0; pattern < 4; ++pattern) {
            Operand a(t, count, Flush::back);
            for (std::int64_t e = 0; e < count; ++e) {
              const std::int64_t i = e % m, j = e / m;
              std::uint64_t v = 0;  // +0
              switch (pattern) {
                case 0: v = (i + j) % 2 == 0 ? minus_zero : 0; break;  // zeros of both signs
                case 1: v = minus_zero; break;
                case 2: v = minus_inf; break;
                default: v = (i == m / 2 && j == n / 2) ? snan : minus_inf; break;
              }
              a.set_bits(static_cast<std::size_t>(e), v);
            }
            const std::int64_t outs = out_count(d, 0);
            Operand b(types.out, outs, Flush::back);
            std::vector<std::uint8_t> want = b.copy();
            UnaryArgs args{.in = a.data(), .out = b.data()};
            UnaryArgs ref = args;
            ref.out = want.data();
            unary_reference(d, ref);
            const auto code = neon::emit_unary(d, plan_unary(d, Isa::neon));
            code->finalize<UnaryKernelFn>(to_string(d))(&args);
            ASSERT_EQ(std::memcmp(b.copy().data(), want.data(), want.size()), 0)
                << to_string(d) << " pattern " << pattern;
          }
        }
      }
    }
  }
}

// Sums whose order matters: large and small terms that cancel, in f32 where a float accumulator
// would lose them (the reference adds in double).
TEST(NeonUnary, SumsAddInDoubleInTheReferenceOrder) {
  for (UnaryOp op : {UnaryOp::reduce_rows_sum, UnaryOp::reduce_cols_sum}) {
    for (const DataTypes& types : kAllTypes) {
      const UnaryDesc d{.op = op, .m = 23, .n = 11, .ld_in = 25, .types = types};
      Operand a(types.in, 25 * 10 + 23, Flush::back);
      std::mt19937 rng(5);
      std::uniform_int_distribution<int> e(-30, 30);
      for (std::size_t i = 0; i < a.size(); ++i)
        a.set_bits(i, bits_of(types.in, std::ldexp((i % 3 == 0 ? -1.0 : 1.0) * (1 + static_cast<double>(i % 7) / 8.0), e(rng))));
      Operand b(types.out, op == UnaryOp::reduce_rows_sum ? 23 : 11, Flush::back);
      std::vector<std::uint8_t> want = b.copy();
      UnaryArgs args{.in = a.data(), .out = b.data()};
      UnaryArgs ref = args;
      ref.out = want.data();
      unary_reference(d, ref);
      const auto code = neon::emit_unary(d, plan_unary(d, Isa::neon));
      code->finalize<UnaryKernelFn>(to_string(d))(&args);
      EXPECT_EQ(std::memcmp(b.copy().data(), want.data(), want.size()), 0) << to_string(d);
    }
  }
}

// ---- sizes and the kernel cache ------------------------------------------------------------------------

// Long columns (many steps of the loop), a long flat array, and leading dimensions far beyond what
// an immediate offset reaches.
TEST(NeonUnary, LongColumnsAndLargeLeadingDimensions) {
  int index = 0;
  for (const DataTypes& types : kAllTypes) {
    for (UnaryOp op : {UnaryOp::copy, UnaryOp::relu, UnaryOp::sqrt, UnaryOp::tanh, UnaryOp::reduce_rows_sum,
                       UnaryOp::reduce_cols_max}) {
      UnaryDesc d{.op = op, .m = 1003, .n = 3, .ld_in = 5001, .ld_out = 4099, .types = types};
      if (!has_kernel(d)) continue;
      check(d, {}, static_cast<std::uint32_t>(300 + index++));
      d.m = 20001;
      d.n = 1;
      d.ld_in = d.ld_out = d.m;
      check(d, {}, static_cast<std::uint32_t>(300 + index++));
      if (HasFatalFailure()) return;
    }
    UnaryDesc mask{.op = UnaryOp::relu, .m = 333, .n = 4, .ld_in = 4100, .ld_out = 340, .mask = ReluMask::bitmask,
                   .types = types};
    if (has_kernel(mask)) check(mask, {}, 399);
  }
}

// unary_kernel(desc, Isa::neon) generates through the family's cache (Neon is not registered yet).
TEST(NeonUnary, KernelCacheGeneratesNeon) {
  const UnaryDesc d{.op = UnaryOp::relu, .m = 19, .n = 3, .ld_in = 20, .ld_out = 21};
  UnaryCode code = unary_kernel(d, Isa::neon);
  std::vector<float> a(20 * 2 + 19), b(21 * 2 + 19, 7.0f);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 5) - 2.0f;
  UnaryArgs args{.in = a.data(), .out = b.data()};
  code(&args);
  for (std::int64_t j = 0; j < 3; ++j)
    for (std::int64_t i = 0; i < 19; ++i)
      ASSERT_EQ(b[static_cast<std::size_t>(i + 21 * j)], std::max(a[static_cast<std::size_t>(i + 20 * j)], 0.0f));
  EXPECT_EQ(b[19], 7.0f);  // the padding row
}

// AAPCS64: a kernel leaves x19-x28 and the low halves of v8-v15 as it found them. A trampoline
// of our own sets them to known values, calls the kernel and stores what they hold afterwards;
// the descriptors are those that need the most vector registers (bf16 in and out: ElementIo's
// constants and scratch; sums: two accumulators per vector), which reach into v8-v15.
TEST(NeonUnary, PreservesCalleeSavedRegisters) {
  using namespace weft::jit::a64;
  struct Trampoline : CodeBuffer {
    // void(const UnaryArgs* args, UnaryKernelFn kernel, std::uint64_t* after): after[0..7] = d8..d15,
    // after[8..17] = x19..x28 once the kernel returned.
    Trampoline() {
      stp(x29, x30, pre_ptr(sp, -16));
      for (unsigned r = 19; r < 29; r += 2) stp(XReg(r), XReg(r + 1), pre_ptr(sp, -16));
      for (unsigned r = 8; r < 16; r += 2) stp(DReg(r), DReg(r + 1), pre_ptr(sp, -16));
      for (unsigned r = 8; r < 16; ++r) fmov(DReg(r), static_cast<double>(r - 7));  // 1.0 .. 8.0
      for (unsigned r = 19; r < 29; ++r) mov_imm(XReg(r), 0x1111111111111111ull * (r - 18));
      str(x2, pre_ptr(sp, -16));
      blr(x1);
      ldr(x16, post_ptr(sp, 16));
      for (unsigned r = 8; r < 16; ++r) str(DReg(r), ptr(x16, 8 * (r - 8)));
      for (unsigned r = 19; r < 29; ++r) str(XReg(r), ptr(x16, 8 * (r - 11)));
      for (unsigned r = 14; r >= 8; r -= 2) ldp(DReg(r), DReg(r + 1), post_ptr(sp, 16));
      for (unsigned r = 27; r >= 19; r -= 2) ldp(XReg(r), XReg(r + 1), post_ptr(sp, 16));
      ldp(x29, x30, post_ptr(sp, 16));
      ret();
    }
  };
  Trampoline trampoline;
  const auto call = trampoline.finalize<void (*)(const UnaryArgs*, UnaryKernelFn, std::uint64_t*)>("trampoline");
  const DataTypes bf16{kBf16, kBf16, kF32};
  for (const UnaryDesc& d : {UnaryDesc{.op = UnaryOp::reduce_rows_sum, .m = 37, .n = 5, .ld_in = 40, .types = bf16},
                             UnaryDesc{.op = UnaryOp::reduce_cols_max, .m = 37, .n = 5, .ld_in = 40, .types = bf16},
                             UnaryDesc{.op = UnaryOp::gelu, .m = 37, .n = 5, .ld_in = 40, .ld_out = 37, .types = bf16},
                             UnaryDesc{.op = UnaryOp::relu_bwd, .m = 37, .n = 5, .ld_in = 40, .ld_out = 37,
                                       .mask = ReluMask::bitmask, .types = bf16}}) {
    SCOPED_TRACE(to_string(d));
    std::vector<std::uint16_t> a(40 * 5, 0x3f80), b(40 * 5);
    std::vector<std::uint8_t> mask(5 * 5, 0x5a);
    const UnaryArgs args{.in = a.data(), .out = b.data(), .aux = mask.data()};
    const auto code = neon::emit_unary(d, plan_unary(d, Isa::neon));
    std::uint64_t after[18] = {};
    call(&args, code->finalize<UnaryKernelFn>(to_string(d)), after);
    for (unsigned r = 8; r < 16; ++r)
      EXPECT_EQ(after[r - 8], std::bit_cast<std::uint64_t>(static_cast<double>(r - 7))) << "d" << r;
    for (unsigned r = 19; r < 29; ++r) EXPECT_EQ(after[r - 11], 0x1111111111111111ull * (r - 18)) << "x" << r;
  }
}

// The plan of another ISA is an error naming the lanes, not a kernel with wrong strides.
TEST(NeonUnary, PlanOfAnotherIsaIsAnError) {
  const UnaryDesc d{.op = UnaryOp::copy, .m = 8, .n = 2, .ld_in = 8, .ld_out = 8};
  try {
    (void)neon::emit_unary(d, plan_unary(d, Isa::avx2));
    ADD_FAILURE() << "no error";
  } catch (const weft::Error& e) {
    EXPECT_NE(std::string(e.what()).find("lanes"), std::string::npos) << e.what();
  }
}

}  // namespace
