// The SVE transcendentals (exp, sigmoid, tanh, gelu: tpp/src/arch/aarch64/sve_activation_emit.cpp
// through the SVE unary kernels) give the Neon kernels' bits, NaN payloads included, at vector
// length 16, 32 and 64 bytes (each kernel generated after the length is set): over a sample of the
// whole float range (every 7th pattern of activation_whole_range()), [-20, 20] densely and the
// special values (NaNs quiet and signalling of both signs, +-0, +-inf, denormals, the formulas'
// edges and the overflow / underflow thresholds with their neighbours), f32 and bf16 in / out;
// m around the lanes and the bf16 chunks (tails), with leading dimensions past m and the operands
// against guard pages.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "activation_bits.hpp"
#include "guarded_buffer.hpp"
#include "sve_activation_emit.hpp"
#include "sve_eltwise_emit.hpp"
#include "sve_vector_length.hpp"
#include "weft/jit/aarch64/assembler.hpp"
#include "weft/jit/data_type.hpp"
#include "weft/jit/error.hpp"
#include "weft/tpp/unary.hpp"

namespace {

using namespace weft::tpp;
using weft::jit::DataType;
using weft::jit::Isa;
using weft::test::Flush;
using weft::test::GuardedBuffer;

constexpr UnaryOp kOps[] = {UnaryOp::exp, UnaryOp::sigmoid, UnaryOp::tanh, UnaryOp::gelu};
constexpr int kVectorBytes[] = {16, 32, 64};
constexpr DataTypes kF32{};
constexpr DataTypes kBf16 = {.in = DataType::bf16, .out = DataType::bf16};
constexpr DataTypes kBf16InF32Out = {.in = DataType::bf16, .out = DataType::f32};
constexpr DataTypes kF32InBf16Out = {.in = DataType::f32, .out = DataType::bf16};

Isa isa_of(int vector_bytes) { return vector_bytes == 16 ? Isa::sve128 : vector_bytes == 32 ? Isa::sve256 : Isa::sve512; }

// A plan of the SVE ISA of `vector_bytes` (f32 lanes), as sve_eltwise_test.cpp's.
UnaryPlan plan_for(const UnaryDesc& d, int vector_bytes) {
  UnaryPlan p = plan_unary(d, Isa::sve256);
  p.isa = isa_of(vector_bytes);
  p.lanes = vector_bytes / 4;
  p.full_vectors = p.rows / p.lanes;
  p.tail = static_cast<int>(p.rows % p.lanes);
  return p;
}

float from_bits(std::uint32_t b) { return std::bit_cast<float>(b); }

std::vector<float> special_floats() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> xs = {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                           -std::numeric_limits<float>::quiet_NaN(), from_bits(0x7f800001u), from_bits(0xff800001u),
                           from_bits(0x7fa00000u), from_bits(0x7fc12345u), from_bits(0xffffffffu),
                           from_bits(0xffa5a5a5u), 1e-45f, -1e-45f, 1e-40f, -1e-40f, 1.17549435e-38f,
                           -1.17549435e-38f, 1.1754942e-38f, 3.40282347e38f, -3.40282347e38f, 1.0f, -1.0f, 0.5f,
                           2.0f, 3.0f, 0.1f, -0.1f};
  const float edges[] = {88.7228f, 88.72284f, 88.7229f, -87.33655f, -103.97f, -104.0f, -104.5f, 0.55f, -0.55f,
                         0.5499999f, 0.8f, -0.8f, 0.7999999f, -15.0f, -14.1f, 15.0f, 9.01f, -9.01f, 1e-8f, -1e-8f,
                         0.3465736f, -0.3465736f, 89.0f, -89.0f, -100.0f, -110.0f, -113.5f, 17.0f, 20.0f, -30.0f,
                         44.5f, -44.5f, 1e30f, -1e30f, 13.8f, -13.8f, 9.0f, -9.0f};
  for (float e : edges) {
    xs.push_back(e);
    xs.push_back(std::nextafter(e, 0.0f));
    xs.push_back(std::nextafter(e, inf));
  }
  return xs;
}

// The sweep: specials first (they land in the first vectors and, repeated at the end, in the tail).
std::vector<float> sweep() {
  std::vector<float> xs = special_floats();
  const std::vector<float> whole = weft::test::activation_whole_range();
  for (std::size_t i = 0; i < whole.size(); i += 7) xs.push_back(whole[i]);
  for (float x : weft::test::activation_dense(-20.0f, 20.0f, 20001)) xs.push_back(x);
  for (float x : special_floats()) xs.push_back(x);
  return xs;
}

// `xs` in `type` (bf16: the top halves, so every pattern class is kept).
std::vector<std::uint8_t> encode(const std::vector<float>& xs, DataType type) {
  const std::size_t size = weft::jit::size_of(type);
  std::vector<std::uint8_t> out(xs.size() * size);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const auto u = std::bit_cast<std::uint32_t>(xs[i]);
    if (size == 4) {
      std::memcpy(&out[4 * i], &u, 4);
    } else {
      const auto h = static_cast<std::uint16_t>(u >> 16);
      std::memcpy(&out[2 * i], &h, 2);
    }
  }
  return out;
}

std::string hex(const std::uint8_t* p, std::size_t size) {
  std::uint32_t u = 0;
  std::memcpy(&u, p, size);
  char text[16];
  std::snprintf(text, sizeof text, "0x%x", u);
  return text;
}

// The SVE kernel (generated for this thread's vector length) and Neon's on the same input; the
// whole output buffers (padding rows too) compared byte for byte.
void check(const UnaryDesc& d, int vector_bytes, const std::vector<std::uint8_t>& input, Flush flush) {
  const std::size_t in_size = weft::jit::size_of(d.types.in), out_size = weft::jit::size_of(d.types.out);
  const auto in_count = static_cast<std::size_t>(d.ld_in * (d.n - 1) + d.m);
  const auto out_count = static_cast<std::size_t>(d.ld_out * (d.n - 1) + d.m);
  GuardedBuffer<std::uint8_t> a(in_count * in_size, flush), b(out_count * out_size, flush);
  for (std::size_t i = 0; i < in_count * in_size; ++i) a.data()[i] = input[i % input.size()];
  for (std::size_t i = 0; i < out_count * out_size; ++i) b.data()[i] = static_cast<std::uint8_t>(0x5a + i);
  std::vector<std::uint8_t> expected(b.begin(), b.end());
  const UnaryArgs neon_args{.in = a.data(), .out = expected.data()}, sve_args{.in = a.data(), .out = b.data()};
  unary_kernel(d, Isa::neon)(&neon_args);
  const auto code = sve::emit_unary(d, plan_for(d, vector_bytes));
  code->finalize<UnaryKernelFn>(to_string(d))(&sve_args);
  for (std::size_t k = 0; k < out_count; ++k) {
    if (std::memcmp(b.data() + k * out_size, expected.data() + k * out_size, out_size) == 0) continue;
    const std::size_t i = k % static_cast<std::size_t>(d.ld_out), j = k / static_cast<std::size_t>(d.ld_out);
    const std::size_t at = (j * static_cast<std::size_t>(d.ld_in) + i) * in_size;
    ADD_FAILURE() << "vl " << vector_bytes << " " << to_string(d) << ": element " << k << " (input "
                  << (i < static_cast<std::size_t>(d.m) ? hex(a.data() + at, in_size) : std::string("padding"))
                  << ") got " << hex(b.data() + k * out_size, out_size) << " want "
                  << hex(expected.data() + k * out_size, out_size);
    return;
  }
}

void run_types(const DataTypes& types) {
  if (!weft::test::has_sve()) GTEST_SKIP() << "no SVE";
  static const std::vector<float> xs = sweep();
  const std::vector<std::uint8_t> input = encode(xs, types.in);
  const auto whole = static_cast<std::int64_t>(xs.size());
  const bool f32 = types.in == DataType::f32 && types.out == DataType::f32;
  for (int vector_bytes : kVectorBytes) {
    weft::test::ScopedVectorLength vl(vector_bytes);
    ASSERT_TRUE(vl.ok() && weft::test::vector_length() == vector_bytes);
    const std::int64_t lanes = vector_bytes / 4;
    for (UnaryOp op : kOps) {
      // The sweep in one column (bf16: a quarter of it, each pattern class is there).
      const std::int64_t m = f32 ? whole : whole / 4 + 3;
      check(UnaryDesc{.op = op, .m = m, .n = 1, .ld_in = m, .ld_out = m, .types = types}, vector_bytes, input,
            Flush::back);
      // Tails: m around the lanes and the bf16 chunk (2 lanes), three columns with padding.
      int flush = 0;
      for (std::int64_t rows : {std::int64_t{1}, lanes - 1, lanes + 1, 2 * lanes - 1, 2 * lanes + 1, 4 * lanes + 3,
                                 9 * lanes + 5}) {
        const UnaryDesc d{.op = op, .m = rows, .n = 3, .ld_in = rows + 2, .ld_out = rows + 3, .types = types};
        std::vector<std::uint8_t> shifted(input.begin() + static_cast<std::ptrdiff_t>((rows * 97) % 4000) *
                                                              static_cast<std::ptrdiff_t>(weft::jit::size_of(types.in)),
                                          input.end());
        check(d, vector_bytes, shifted, (flush++ % 2) ? Flush::front : Flush::back);
      }
    }
  }
}

TEST(SveActivation, F32SameBitsAsNeon) { run_types(kF32); }
TEST(SveActivation, Bf16SameBitsAsNeon) { run_types(kBf16); }
TEST(SveActivation, Bf16InF32OutSameBitsAsNeon) { run_types(kBf16InF32Out); }
TEST(SveActivation, F32InBf16OutSameBitsAsNeon) { run_types(kF32InBf16Out); }

TEST(SveActivation, SupportsTheTranscendentalsInF32Arithmetic) {
  for (UnaryOp op : kOps) {
    EXPECT_TRUE(sve::supports(UnaryDesc{.op = op, .m = 4, .n = 1}));
    EXPECT_TRUE(sve::supports(UnaryDesc{.op = op, .m = 4, .n = 1, .types = kBf16}));
    EXPECT_FALSE(sve::supports(
        UnaryDesc{.op = op, .m = 4, .n = 1, .types = {.in = DataType::f64, .out = DataType::f64, .compute = DataType::f64}}));
  }
}

// The word pool: 4-byte entries deduplicated by bits, at most 64 (ld1rw's reach), none after emit().
TEST(SveActivation, WordPoolEntriesAndLimits) {
  using namespace weft::jit::a64;
  Assembler a;
  sve::WordPool pool;
  pool.load_base(a, x12);
  EXPECT_EQ(pool.f32(1.5f), 0);
  EXPECT_EQ(pool.bits32(0x3fc00000u), 0);  // 1.5f's bits: the same entry
  for (std::uint32_t i = 1; i < 64; ++i) EXPECT_EQ(pool.bits32(i), static_cast<std::int64_t>(4 * i));
  EXPECT_THROW(pool.bits32(1000), weft::Error);
  EXPECT_EQ(pool.bits32(7), 28);  // existing entries are still found
  a.ret();
  pool.emit(a);
  EXPECT_THROW(pool.bits32(2), weft::Error);
  EXPECT_THROW(pool.emit(a), weft::Error);
}

TEST(SveActivation, ScratchCountsAndErrors) {
  using namespace weft::jit::a64;
  using sve::ActivationEmitter;
  EXPECT_EQ(ActivationEmitter::scratch_vectors(UnaryOp::exp, 1), 3);
  EXPECT_EQ(ActivationEmitter::scratch_vectors(UnaryOp::exp, 4), 12);
  for (UnaryOp op : {UnaryOp::sigmoid, UnaryOp::tanh, UnaryOp::gelu}) {
    EXPECT_EQ(ActivationEmitter::scratch_vectors(op, 2), 8);
  }
  EXPECT_THROW(ActivationEmitter::scratch_vectors(UnaryOp::relu, 1), weft::Error);
  EXPECT_THROW(ActivationEmitter::scratch_vectors(UnaryOp::exp, 0), weft::Error);
  EXPECT_THROW(ActivationEmitter::scratch_vectors(UnaryOp::exp, 5), weft::Error);
  Assembler a;
  sve::WordPool pool;
  ActivationEmitter act(a, pool, x12, p0);
  const ZReg xs[] = {z0, z1};
  const ZReg scratch[] = {z4, z5, z6, z7, z16, z17, z18, z19};
  const PReg preds[] = {p8, p9};
  EXPECT_THROW(act.emit(UnaryOp::gelu, xs, std::span<const ZReg>(scratch, 7), preds), weft::Error);
  EXPECT_THROW(act.emit(UnaryOp::gelu, xs, scratch, std::span<const PReg>(preds, 1)), weft::Error);
  EXPECT_NO_THROW(act.emit(UnaryOp::gelu, xs, scratch, preds));
}

}  // namespace
