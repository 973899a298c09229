// The Neon transposes and VNNI-2 moves (tpp/src/arch/aarch64/unary_transpose_emit.cpp,
// unary_vnni2_emit.cpp) against unary_reference, bit for bit: every shape of m, n in 1..19 (and a
// few larger), leading dimensions at and above their minimum, from the descriptor and at call time
// (ld_in 0 at call time: every column reads A's first), A and B flush against a guard page after
// them, or before them, so that touching one element outside an operand faults. B's padding is
// compared too (a store past a row or column is seen). Values include NaN (signalling too), +-0,
// denormals and infinities.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "activation_emit.hpp"
#include "constant_pool.hpp"
#include "guarded_buffer.hpp"
#include "op_properties.hpp"
#include "raw_moves.hpp"
#include "unary_transpose_emit.hpp"
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

constexpr DataTypes kF32{};
constexpr DataTypes kBf16{.in = DataType::bf16, .out = DataType::bf16};
constexpr DataTypes kF64{.in = DataType::f64, .out = DataType::f64, .compute = DataType::f64};
constexpr DataTypes kF32ToBf16{.out = DataType::bf16};
constexpr DataTypes kBf16ToF32{.in = DataType::bf16};

bool transposes(const UnaryDesc& d) { return d.op == UnaryOp::transpose || d.transpose_out; }

// Elements each operand spans: (columns - 1) * ld + rows, in the operand's own layout.
std::int64_t span_elements(std::int64_t rows, std::int64_t columns, std::int64_t ld) {
  return (columns - 1) * ld + rows;
}

// The elements A and B of `d` span with leading dimensions lda, ldb.
std::int64_t in_elements(const UnaryDesc& d, std::int64_t lda) {
  if (d.op == UnaryOp::vnni2_unpack) return span_elements(2 * d.m, d.n / 2, 2 * lda);
  return span_elements(d.m, d.n, lda);
}
std::int64_t out_elements(const UnaryDesc& d, std::int64_t ldb) {
  if (transposes(d)) return span_elements(d.n, d.m, ldb);
  if (d.op == UnaryOp::vnni2_pack) return span_elements(2 * d.m, d.n / 2, 2 * ldb);
  return span_elements(d.m, d.n, ldb);
}

// Floats whose bf16 rounding or whose moves are delicate: NaN (quiet, signalling, negative, payloads
// in the low half that rounding drops), +-0, +-inf, denormals (flushed to a zero of their sign by
// to_bfloat16), the largest finite values (0x7f7f8000 rounds up to inf), ties to even both ways,
// and values just off the ties.
constexpr std::uint32_t kSpecial[] = {0x7fc00000u, 0x7f800001u, 0xffc12345u, 0x7fbf0001u, 0x00000000u, 0x80000000u,
                                      0x7f800000u, 0xff800000u, 0x00000001u, 0x807fffffu, 0x00400000u, 0x00008000u,
                                      0x7f7fffffu, 0x7f7f8000u, 0x7f7f7fffu, 0xff7f8000u, 0x3f808000u, 0x3f818000u,
                                      0x3f808001u, 0x3f817fffu, 0xbf808000u, 0x00808000u, 0x00818000u, 0x3f800000u};

// A float with a special value now and then (one in 4 with `specials`, else one in 16); otherwise
// uniform in [-range, range].
bool g_specials = false;
float random_float(std::mt19937& rng, float range) {
  std::uniform_int_distribution<int> pick(0, g_specials ? 3 : 15);
  if (pick(rng) == 0) {
    std::uniform_int_distribution<std::size_t> which(0, std::size(kSpecial) - 1);
    return std::bit_cast<float>(kSpecial[which(rng)]);
  }
  return std::uniform_real_distribution<float>(-range, range)(rng);
}

// `count` random elements of `type` (bit patterns, specials included) into raw memory.
void fill(void* p, std::int64_t count, DataType type, std::mt19937& rng, float range = 4.0f) {
  for (std::int64_t i = 0; i < count; ++i) {
    const float f = random_float(rng, range);
    switch (type) {
      case DataType::f32: static_cast<float*>(p)[i] = f; break;
      case DataType::bf16: {
        // bf16 bit patterns of their own, not rounded floats: denormals and signalling NaNs stay.
        std::uint16_t bits = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(f) >> 16);
        if (rng() % 16 == 0) bits = rng() % 2 == 0 ? 0x7f81 : 0x0003;
        static_cast<std::uint16_t*>(p)[i] = bits;
        break;
      }
      case DataType::f64: {
        double v = f;
        if (rng() % 16 == 0) v = std::bit_cast<double>(std::uint64_t{0x7ff0000000000001u});  // signalling NaN
        if (rng() % 16 == 0) v = std::bit_cast<double>(std::uint64_t{0x0000000000000007u});  // denormal
        static_cast<double*>(p)[i] = v;
        break;
      }
    }
  }
}

struct CallLds {
  std::int64_t ld_in = 0, ld_out = 0;  // the args' (read where the descriptor's are 0)
};

// ---- the op as the element-wise kernels apply it -------------------------------------------------

// `op` on `vectors` vectors of the compute type at x0 into x1, with ActivationEmitter: the
// instructions the kernels that do not transpose run on each vector.
struct ApplyOp : weft::jit::a64::CodeBuffer {
  ApplyOp(UnaryOp op, float alpha, DataType compute, std::int64_t vectors) {
    using namespace weft::jit::a64;
    neon::ConstantPool pool;
    pool.load_base(*this, x3);
    neon::ActivationEmitter act(*this, pool, x3);
    const VReg scratch[] = {v16, v17, v18, v19, v20, v21};
    mov_imm(x2, static_cast<std::uint64_t>(vectors));
    Label loop;
    bind(loop);
    ldr(q0, post_ptr(x0, 16));
    act.emit(op, alpha, v0, scratch, compute);
    str(q0, post_ptr(x1, 16));
    subs(x2, x2, 1);
    b(Cond::ne, loop);
    ret();
    pool.emit(*this);
  }
};

// The values of A (widened to the compute type: float or double) at A's positions, the op applied
// as the element-wise kernels apply it.
template <class V>
std::vector<V> op_values(const UnaryDesc& d, const void* a, std::int64_t count) {
  std::vector<V> values(static_cast<std::size_t>(count + 4));  // whole vectors
  for (std::int64_t e = 0; e < count; ++e) {
    if constexpr (std::is_same_v<V, double>) {
      values[static_cast<std::size_t>(e)] = static_cast<const double*>(a)[e];
    } else if (d.types.in == DataType::bf16) {
      values[static_cast<std::size_t>(e)] = weft::jit::to_float({static_cast<const std::uint16_t*>(a)[e]});
    } else {
      values[static_cast<std::size_t>(e)] = static_cast<const float*>(a)[e];
    }
  }
  const std::int64_t vectors = static_cast<std::int64_t>(values.size() * sizeof(V) / 16);
  ApplyOp code(d.op, d.alpha, d.types.compute, vectors);
  auto fn = code.finalize<void (*)(const V*, V*)>("apply_op");
  std::vector<V> out(values.size());
  fn(values.data(), out.data());
  return out;
}

// B of transpose_out as the element-wise kernel's results transposed: B(j, i) = op(A(i, j)),
// converted to the output type as the kernels store it (bf16: rounded with to_bfloat16, or the upper
// half kept for ops that select their input).
template <class V>
void transposed_op(const UnaryDesc& d, const void* a, std::int64_t a_count, std::int64_t lda, void* b,
                   std::int64_t ldb) {
  const std::vector<V> values = op_values<V>(d, a, a_count);
  for (std::int64_t j = 0; j < d.n; ++j)
    for (std::int64_t i = 0; i < d.m; ++i) {
      const V v = values[static_cast<std::size_t>(i + j * lda)];
      const std::int64_t at = j + i * ldb;
      if constexpr (std::is_same_v<V, double>) {
        static_cast<double*>(b)[at] = v;
      } else if (d.types.out == DataType::bf16) {
        static_cast<std::uint16_t*>(b)[at] = detail::keeps_bf16_bits(d)
                                                 ? static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(v) >> 16)
                                                 : weft::jit::to_bfloat16(v).bits;
      } else {
        static_cast<float*>(b)[at] = v;
      }
    }
}

// What B must be: unary_reference's, or (Oracle::kernel_op) the element-wise kernels' op values
// transposed, for transcendentals, whose kernels are within bounds of the reference, not equal.
enum class Oracle { reference, kernel_op };

// The f32 B of a transpose_out kernel (at `b`) within the accuracy bounds of docs/tpp_eltwise.md of
// unary_reference's (the exact value rounded once): relative error <= 1e-6, absolute <= 4 * 2^-149
// where the value is denormal; NaN where the reference is NaN, the same infinity.
void within_bounds_of_reference(const UnaryDesc& d, const UnaryArgs& args, const void* b, std::int64_t ldb) {
  const std::int64_t count = (d.m - 1) * ldb + d.n;
  std::vector<float> ref(static_cast<std::size_t>(count));
  UnaryArgs ref_args = args;
  ref_args.out = ref.data();
  unary_reference(d, ref_args);
  const auto* got = static_cast<const float*>(b);
  for (std::int64_t i = 0; i < d.m; ++i)
    for (std::int64_t j = 0; j < d.n; ++j) {
      const std::int64_t at = j + i * ldb;
      const float want = ref[static_cast<std::size_t>(at)], have = got[at];
      if (std::isnan(want) || std::isinf(want)) {
        ASSERT_TRUE(std::isnan(want) ? std::isnan(have) : have == want)
            << "at " << at << ": " << have << " vs " << want;
        continue;
      }
      const double error = std::fabs(static_cast<double>(have) - want);
      const double bound = std::fabs(static_cast<double>(want)) < std::numeric_limits<float>::min()
                               ? 4 * std::ldexp(1.0, -149)
                               : 1e-6 * std::fabs(static_cast<double>(want));
      ASSERT_LE(error, bound) << "at " << at << ": " << have << " vs " << want;
    }
}

// Runs the Neon kernel of `d` on A and B flush against guard pages (after them, or before them
// with `front`), and compares all of B with the oracle's B, bit for bit.
void check(const UnaryDesc& d, CallLds call, std::uint32_t seed, bool front = false,
           Oracle oracle = Oracle::reference) {
  SCOPED_TRACE(to_string(d) + " call ld_in=" + std::to_string(call.ld_in) + " ld_out=" + std::to_string(call.ld_out) +
               (front ? " front" : " back"));
  std::mt19937 rng(seed);
  const std::int64_t lda = d.ld_in != 0 ? d.ld_in : call.ld_in;
  const std::int64_t ldb = d.ld_out != 0 ? d.ld_out : call.ld_out;
  const auto in_bytes = static_cast<std::int64_t>(weft::jit::size_of(d.types.in));
  const auto out_bytes = static_cast<std::int64_t>(weft::jit::size_of(d.types.out));
  const std::int64_t a_count = in_elements(d, lda), b_count = out_elements(d, ldb);
  const Flush flush = front ? Flush::front : Flush::back;
  GuardedBuffer<std::uint8_t> a(static_cast<std::size_t>(a_count * in_bytes), flush);
  GuardedBuffer<std::uint8_t> b(static_cast<std::size_t>(b_count * out_bytes), flush);
  fill(a.data(), a_count, d.types.in, rng);
  fill(b.data(), b_count, d.types.out, rng);  // B's padding: whatever was there must stay
  std::vector<std::uint8_t> expected(b.begin(), b.end());
  UnaryArgs args{.in = a.data(), .out = b.data(), .ld_in = call.ld_in, .ld_out = call.ld_out};
  UnaryArgs ref_args = args;
  ref_args.out = expected.data();
  if (oracle == Oracle::reference) {
    unary_reference(d, ref_args);
  } else if (d.types.compute == DataType::f64) {
    transposed_op<double>(d, a.data(), a_count, lda, expected.data(), ldb);
  } else {
    transposed_op<float>(d, a.data(), a_count, lda, expected.data(), ldb);
  }

  const UnaryPlan plan = plan_unary(d, Isa::neon);
  auto code = transposes(d) ? neon::emit_unary_transpose(d, plan) : neon::emit_unary_vnni2(d, plan);
  auto fn = code->finalize<UnaryKernelFn>(to_string(d));
  fn(&args);
  ASSERT_EQ(std::memcmp(b.data(), expected.data(), expected.size()), 0) << [&] {
    for (std::int64_t e = 0; e < b_count; ++e)
      if (std::memcmp(&b[static_cast<std::size_t>(e * out_bytes)], &expected[static_cast<std::size_t>(e * out_bytes)],
                      static_cast<std::size_t>(out_bytes)) != 0) {
        std::uint64_t got = 0, want = 0;
        std::memcpy(&got, &b[static_cast<std::size_t>(e * out_bytes)], static_cast<std::size_t>(out_bytes));
        std::memcpy(&want, &expected[static_cast<std::size_t>(e * out_bytes)], static_cast<std::size_t>(out_bytes));
        return "first difference at element " + std::to_string(e) + " of B (ld " + std::to_string(ldb) + "): bits " +
               std::to_string(got) + ", expected " + std::to_string(want);
      }
    return std::string();
  }();
  if (oracle == Oracle::kernel_op && d.types == DataTypes{}) within_bounds_of_reference(d, args, b.data(), ldb);
}

// Every m, n in 1..max_m x 1..max_n for `types` and `op` (transpose_out when op is not transpose):
// the padding of the leading dimensions (0 = at the minimum, columns touching), where they come from
// (descriptor or call) and the guard side rotate with the case.
void every_shape(DataTypes types, UnaryOp op, int max_m, int max_n, std::uint32_t seed, float alpha = 0.0f,
                 Oracle oracle = Oracle::reference) {
  int index = 0;
  for (int m = 1; m <= max_m; ++m) {
    for (int n = 1; n <= max_n; ++n, ++index) {
      const int pad_in = index % 3 == 0 ? 0 : index % 5, pad_out = index % 4 == 1 ? 0 : index % 3 + 1;
      const bool call_in = index % 4 == 2, call_out = index % 7 == 3;
      UnaryDesc d{.op = op, .m = m, .n = n, .ld_in = m + pad_in, .ld_out = n + pad_out, .alpha = alpha,
                  .transpose_out = op != UnaryOp::transpose, .types = types};
      CallLds call;
      if (call_in) std::swap(call.ld_in, d.ld_in);
      if (call_out) std::swap(call.ld_out, d.ld_out);
      check(d, call, seed + static_cast<std::uint32_t>(index), index % 2 == 1, oracle);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// ---- transpose -----------------------------------------------------------------------------------

TEST(NeonTranspose, F32EveryShape) { every_shape(kF32, UnaryOp::transpose, 19, 19, 100); }
TEST(NeonTranspose, F64EveryShape) { every_shape(kF64, UnaryOp::transpose, 19, 19, 200); }
TEST(NeonTranspose, Bf16EveryShape) { every_shape(kBf16, UnaryOp::transpose, 19, 19, 300); }

// Types that differ: bf16 widened on the loads, or rounded as to_bfloat16 on the stores.
TEST(NeonTranspose, F32ToBf16EveryShape) { every_shape(kF32ToBf16, UnaryOp::transpose, 19, 19, 1100); }
TEST(NeonTranspose, Bf16ToF32EveryShape) { every_shape(kBf16ToF32, UnaryOp::transpose, 19, 19, 1200); }

// Mostly the delicate values of kSpecial: rounding ties, NaN, denormals, overflow to infinity.
TEST(NeonTranspose, RoundingToBf16) {
  g_specials = true;
  every_shape(kF32ToBf16, UnaryOp::transpose, 9, 9, 1300);
  g_specials = false;
}

// transpose_out of copy is the transpose, in every pair of types.
TEST(NeonTransposeOut, CopyInEveryType) {
  std::uint32_t seed = 1400;
  for (const DataTypes types : {kF32, kF64, kBf16, kF32ToBf16, kBf16ToF32}) {
    every_shape(types, UnaryOp::copy, 9, 10, seed);
    if (HasFatalFailure()) return;
    seed += 1000;
  }
}

// Every element-wise op fused (f32): the exact ops bit for bit as the reference, the
// transcendentals bit for bit as the element-wise kernels' ActivationEmitter (which the activation
// tests hold to the accuracy bounds of docs/tpp_eltwise.md).
TEST(NeonTransposeOut, EveryOpF32) {
  std::uint32_t seed = 3000;
  for (const UnaryOp op : {UnaryOp::relu, UnaryOp::square, UnaryOp::reciprocal, UnaryOp::sqrt, UnaryOp::increment,
                           UnaryOp::decrement, UnaryOp::scale}) {
    SCOPED_TRACE(to_string(op));
    const float alpha = detail::unary_op_properties(op).takes_alpha ? -1.75f : 0.0f;
    every_shape(kF32, op, 9, 9, seed, alpha);
    every_shape(kF32, op, 5, 6, seed + 500, alpha, Oracle::kernel_op);
    if (HasFatalFailure()) return;
    seed += 1000;
  }
  for (const UnaryOp op : {UnaryOp::exp, UnaryOp::sigmoid, UnaryOp::tanh, UnaryOp::gelu}) {
    SCOPED_TRACE(to_string(op));
    every_shape(kF32, op, 9, 9, seed, 0.0f, Oracle::kernel_op);
    if (HasFatalFailure()) return;
    seed += 1000;
  }
}

// The f64 ops (all exact): bit for bit as the reference.
TEST(NeonTransposeOut, EveryOpF64) {
  std::uint32_t seed = 4000;
  for (const UnaryOp op : {UnaryOp::relu, UnaryOp::square, UnaryOp::reciprocal, UnaryOp::sqrt, UnaryOp::increment,
                           UnaryOp::decrement, UnaryOp::scale}) {
    SCOPED_TRACE(to_string(op));
    const float alpha = detail::unary_op_properties(op).takes_alpha ? 0.3f : 0.0f;
    every_shape(kF64, op, 7, 7, seed, alpha);
    if (HasFatalFailure()) return;
    seed += 1000;
  }
}

// bf16 in and / or out: relu keeps a bf16 input's bits (a signalling NaN, a denormal), scale rounds
// (scale by 1 flushes a bf16 denormal, as to_bfloat16 of the f32 result does), exp within its kernel.
TEST(NeonTransposeOut, Bf16Ops) {
  std::uint32_t seed = 5000;
  for (const DataTypes types : {kBf16, kF32ToBf16, kBf16ToF32}) {
    every_shape(types, UnaryOp::relu, 9, 9, seed++);
    every_shape(types, UnaryOp::scale, 9, 9, seed++, 1.0f);
    every_shape(types, UnaryOp::scale, 6, 6, seed++, -3.5f);
    every_shape(types, UnaryOp::exp, 6, 6, seed++, 0.0f, Oracle::kernel_op);
    if (HasFatalFailure()) return;
  }
}

// Larger shapes and leading dimensions at call time with an op fused.
TEST(NeonTransposeOut, LargerShapesAndCallTimeLeadingDimensions) {
  std::uint32_t seed = 6000;
  for (const DataTypes types : {kF32, kBf16, kF64}) {
    const UnaryDesc d{.op = UnaryOp::relu, .m = 37, .n = 23, .transpose_out = true, .types = types};
    check(d, {.ld_in = 40, .ld_out = 23}, seed++);
    check(d, {.ld_in = 0, .ld_out = 25}, seed++, true);
  }
  const UnaryDesc e{.op = UnaryOp::exp, .m = 23, .n = 37, .ld_in = 23, .ld_out = 40, .transpose_out = true};
  check(e, {}, seed++, false, Oracle::kernel_op);
}

// Larger shapes: several full blocks in both loops with edges, and a square multiple of every block.
TEST(NeonTranspose, LargerShapes) {
  const int shapes[][2] = {{37, 23}, {23, 37}, {64, 56}, {33, 17}, {128, 3}, {3, 130}};
  std::uint32_t seed = 400;
  for (const DataTypes types : {kF32, kF64, kBf16, kF32ToBf16, kBf16ToF32}) {
    for (const auto& s : shapes) {
      const UnaryDesc d{.op = UnaryOp::transpose, .m = s[0], .n = s[1], .ld_in = s[0] + 3, .ld_out = s[1] + 1,
                        .types = types};
      check(d, {}, seed++);
      check(d, {}, seed++, true);
      if (HasFatalFailure()) return;
    }
  }
}

// Leading dimensions at call time, the broadcast ld_in 0 (every column of A is its first) among them.
TEST(NeonTranspose, CallTimeLeadingDimensionsAndBroadcast) {
  std::uint32_t seed = 500;
  for (const DataTypes types : {kF32, kF64, kBf16, kF32ToBf16, kBf16ToF32}) {
    for (const auto& s : std::vector<std::array<int, 2>>{{1, 1}, {5, 7}, {8, 8}, {19, 9}, {37, 23}}) {
      const UnaryDesc d{.op = UnaryOp::transpose, .m = s[0], .n = s[1], .types = types};
      check(d, {.ld_in = s[0], .ld_out = s[1]}, seed++);
      check(d, {.ld_in = s[0] + 5, .ld_out = s[1] + 2}, seed++, true);
      check(d, {.ld_in = 0, .ld_out = s[1] + 1}, seed++);
      check(d, {.ld_in = 0, .ld_out = s[1]}, seed++, true);
      if (HasFatalFailure()) return;
    }
  }
}

// Leading dimensions past the immediates' ranges.
TEST(NeonTranspose, LargeLeadingDimensions) {
  std::uint32_t seed = 600;
  for (const DataTypes types : {kF32, kF64, kBf16, kF32ToBf16, kBf16ToF32}) {
    const UnaryDesc d{.op = UnaryOp::transpose, .m = 13, .n = 11, .ld_in = 5001, .ld_out = 4099, .types = types};
    check(d, {}, seed++);
  }
}

// ---- VNNI-2 -----------------------------------------------------------------------------------

void every_vnni2_shape(UnaryOp op, DataTypes types, std::uint32_t seed) {
  int index = 0;
  for (int m = 1; m <= 37; ++m) {
    for (int n = 2; n <= 8; n += 2, ++index) {
      const int pad_in = index % 3 == 0 ? 0 : index % 4 + 1, pad_out = index % 4 == 1 ? 0 : index % 3 + 1;
      UnaryDesc d{.op = op, .m = m, .n = n, .ld_in = m + pad_in, .ld_out = m + pad_out, .types = types};
      CallLds call;
      if (index % 5 == 2) std::swap(call.ld_in, d.ld_in);
      if (index % 6 == 3) std::swap(call.ld_out, d.ld_out);
      check(d, call, seed + static_cast<std::uint32_t>(index), index % 2 == 1);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(NeonVnni2, PackBf16EveryShape) { every_vnni2_shape(UnaryOp::vnni2_pack, kBf16, 700); }
TEST(NeonVnni2, UnpackBf16EveryShape) { every_vnni2_shape(UnaryOp::vnni2_unpack, kBf16, 800); }
TEST(NeonVnni2, PackF32EveryShape) { every_vnni2_shape(UnaryOp::vnni2_pack, kF32ToBf16, 850); }

// f32 rounded as it is packed: mostly the delicate values of kSpecial.
TEST(NeonVnni2, PackF32Rounding) {
  g_specials = true;
  every_vnni2_shape(UnaryOp::vnni2_pack, kF32ToBf16, 870);
  g_specials = false;
}

TEST(NeonVnni2, BroadcastAndLargeLeadingDimensions) {
  std::uint32_t seed = 900;
  for (const UnaryOp op : {UnaryOp::vnni2_pack, UnaryOp::vnni2_unpack}) {
    const UnaryDesc d{.op = op, .m = 21, .n = 6, .types = kBf16};
    check(d, {.ld_in = 0, .ld_out = 23}, seed++);
    check(d, {.ld_in = 4001, .ld_out = 3001}, seed++, true);
  }
  const UnaryDesc f{.op = UnaryOp::vnni2_pack, .m = 23, .n = 4, .types = kF32ToBf16};
  check(f, {.ld_in = 0, .ld_out = 23}, seed++);
  check(f, {.ld_in = 4001, .ld_out = 3001}, seed++, true);
}

// ---- errors and the pieces ---------------------------------------------------------------------

TEST(NeonTranspose, OtherDescriptorsAreErrors) {
  const UnaryDesc relu{.op = UnaryOp::relu, .m = 4, .n = 4, .ld_in = 4, .ld_out = 4};
  EXPECT_THROW((void)neon::emit_unary_transpose(relu, plan_unary(relu, Isa::neon)), weft::Error);
  EXPECT_THROW((void)neon::emit_unary_vnni2(relu, plan_unary(relu, Isa::neon)), weft::Error);
  const UnaryDesc t{.op = UnaryOp::transpose, .m = 4, .n = 4, .ld_in = 4, .ld_out = 4};
  EXPECT_THROW((void)neon::emit_unary_transpose(t, plan_unary(t, Isa::avx2)), weft::Error);
}

// raw_load / raw_store of every even run of 2..16 bytes, against a guard page on both sides.
TEST(NeonRawMoves, EveryRunStaysInsideItsBytes) {
  using namespace weft::jit::a64;
  for (int bytes = 2; bytes <= 16; bytes += 2) {
    SCOPED_TRACE("bytes=" + std::to_string(bytes));
    struct Copy : CodeBuffer {
      explicit Copy(int n) {
        neon::raw_load(*this, v0, x0, n, v1);
        neon::raw_store(*this, x1, v0, n, v2);
        ret();
      }
    } code(bytes);
    auto fn = code.finalize<void (*)(const void*, void*)>("raw_copy");
    for (const Flush flush : {Flush::back, Flush::front}) {
      const auto size = static_cast<std::size_t>(bytes);
      GuardedBuffer<std::uint8_t> in(size, flush), out(size, flush);
      for (int i = 0; i < bytes; ++i) {
        in[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(17 * i + 3);
        out[static_cast<std::size_t>(i)] = 0;
      }
      fn(in.data(), out.data());
      EXPECT_EQ(std::memcmp(in.data(), out.data(), static_cast<std::size_t>(bytes)), 0);
    }
  }
}

// With WEFT_NEON_TRANSPOSE_DUMP=dir, the code of a few kernels goes to dir/<name>.bin (for objdump
// and llvm-mca); always: each emits some code.
TEST(NeonTranspose, CodeDump) {
  const UnaryDesc descs[] = {
      {.op = UnaryOp::transpose, .m = 64, .n = 56, .ld_in = 64, .ld_out = 56},
      {.op = UnaryOp::transpose, .m = 64, .n = 56, .ld_in = 64, .ld_out = 56, .types = kBf16},
      {.op = UnaryOp::transpose, .m = 64, .n = 56, .ld_in = 64, .ld_out = 56, .types = kF64},
      {.op = UnaryOp::relu, .m = 13, .n = 7, .ld_in = 13, .ld_out = 7, .transpose_out = true, .types = kF32ToBf16},
      {.op = UnaryOp::vnni2_pack, .m = 21, .n = 4, .ld_in = 21, .ld_out = 21, .types = kBf16},
      {.op = UnaryOp::vnni2_pack, .m = 21, .n = 4, .ld_in = 21, .ld_out = 21, .types = kF32ToBf16},
      {.op = UnaryOp::vnni2_unpack, .m = 21, .n = 4, .ld_in = 21, .ld_out = 21, .types = kBf16},
  };
  for (const UnaryDesc& d : descs) {
    const UnaryPlan plan = plan_unary(d, Isa::neon);
    auto code = transposes(d) ? neon::emit_unary_transpose(d, plan) : neon::emit_unary_vnni2(d, plan);
    const std::vector<std::uint8_t> bytes = code->bytes();
    EXPECT_GT(bytes.size(), 0u);
    if (const char* dir = std::getenv("WEFT_NEON_TRANSPOSE_DUMP")) {
      const std::string path = std::string(dir) + "/" + to_string(d) + ".bin";
      std::FILE* f = std::fopen(path.c_str(), "wb");
      ASSERT_NE(f, nullptr) << path;
      std::fwrite(bytes.data(), 1, bytes.size(), f);
      std::fclose(f);
    }
  }
}

}  // namespace
