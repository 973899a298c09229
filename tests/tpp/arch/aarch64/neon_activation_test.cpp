// The Neon activation emitter (tpp/src/arch/aarch64/activation_emit.cpp) and its constant pool, run
// through a test kernel of our own: `for each vector: ldr q; emit(op); str q`, the pool after ret.
// - exact ops (copy, relu, square, reciprocal, sqrt, increment, decrement, scale; f32 and f64):
//   bit for bit against unary_reference over a sample of the whole bit-pattern range, fixed-seed
//   random patterns and the special values (NaN payloads, signalling NaNs, +-0, denormals, +-inf);
// - exp, sigmoid, tanh, gelu: the bounds of tests/tpp/activation_accuracy_test.cpp (relative error
//   <= 1e-6 where the exact value is a normal float, absolute <= 4 * 2^-149 where it is denormal,
//   overflow only within 1e-6 of FLT_MAX), over every 2053rd float bit pattern, 400001 points of
//   [-20, 20], the formulas' edges, and the documented special values; and the same bits as the
//   x86 kernels (tests/support/activation_bits.hpp);
// - emit() clobbers no vector register but its declared scratch ones and no general register;
// - the multi-vector emit() (1..4 vectors interleaved) gives the single-vector form's bits, lane for
//   lane, whatever the registers, and clobbers only its declared scratch registers.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "activation_accuracy.hpp"
#include "activation_bits.hpp"
#include "activation_emit.hpp"
#include "constant_pool.hpp"
#include "weft/jit/aarch64/code_buffer.hpp"
#include "weft/jit/error.hpp"
#include "weft/tpp/unary.hpp"

namespace {

using namespace weft::jit::a64;
using weft::jit::DataType;
using weft::tpp::UnaryArgs;
using weft::tpp::UnaryDesc;
using weft::tpp::UnaryOp;
using weft::tpp::neon::ActivationEmitter;
using weft::tpp::neon::ConstantPool;

constexpr UnaryOp kElementwise[] = {UnaryOp::copy,    UnaryOp::relu,    UnaryOp::square, UnaryOp::reciprocal,
                                    UnaryOp::sqrt,    UnaryOp::exp,     UnaryOp::sigmoid, UnaryOp::tanh,
                                    UnaryOp::gelu,    UnaryOp::increment, UnaryOp::decrement, UnaryOp::scale};
constexpr UnaryOp kF64Ops[] = {UnaryOp::copy, UnaryOp::relu,      UnaryOp::square,    UnaryOp::reciprocal,
                               UnaryOp::sqrt, UnaryOp::increment, UnaryOp::decrement, UnaryOp::scale};
constexpr UnaryOp kTranscendentals[] = {UnaryOp::exp, UnaryOp::sigmoid, UnaryOp::tanh, UnaryOp::gelu};

bool takes_alpha(UnaryOp op) {
  return op == UnaryOp::increment || op == UnaryOp::decrement || op == UnaryOp::scale;
}

// ---- the test kernel --------------------------------------------------------------------------------

// void kernel(const void* in, void* out, std::int64_t vectors): x0 in, x1 out, x2 vectors (>= 1),
// x3 the pool base. x = op(x) on each 16-byte vector, in place in `x`.
using StreamFn = void (*)(const void*, void*, std::int64_t);

struct StreamKernel {
  std::unique_ptr<CodeBuffer> code;
  StreamFn fn = nullptr;
};

StreamKernel stream_kernel(UnaryOp op, float alpha, DataType compute, VReg x, const std::vector<VReg>& scratch) {
  StreamKernel k{std::make_unique<CodeBuffer>()};
  CodeBuffer& a = *k.code;
  ConstantPool pool;
  ActivationEmitter act(a, pool, x3);
  pool.load_base(a, x3);
  Label loop;
  a.bind(loop);
  a.ldr(x.qreg(), post_ptr(x0, 16));
  act.emit(op, alpha, x, scratch, compute);
  a.str(x.qreg(), post_ptr(x1, 16));
  a.subs(x2, x2, 1);
  a.b(Cond::ne, loop);
  a.ret();
  pool.emit(a);
  k.fn = k.code->finalize<StreamFn>("neon_activation_test_" + weft::tpp::to_string(op));
  return k;
}

const std::vector<VReg> kScratch = {v17, v2, v30, v5, v21, v26};  // v8-v15 avoided: callee-saved

template <class T>
std::vector<T> run(UnaryOp op, float alpha, DataType compute, const std::vector<T>& xs, VReg x = v0,
                   const std::vector<VReg>& scratch = kScratch) {
  constexpr std::size_t lanes = 16 / sizeof(T);
  const std::size_t vectors = (xs.size() + lanes - 1) / lanes;
  std::vector<T> in(vectors * lanes, T(0)), out(vectors * lanes);
  std::copy(xs.begin(), xs.end(), in.begin());
  const StreamKernel k = stream_kernel(op, alpha, compute, x, scratch);
  k.fn(in.data(), out.data(), static_cast<std::int64_t>(vectors));
  out.resize(xs.size());
  return out;
}

template <class T>
std::vector<T> reference(UnaryOp op, float alpha, const std::vector<T>& xs) {
  constexpr DataType type = sizeof(T) == 8 ? DataType::f64 : DataType::f32;
  const auto m = static_cast<std::int64_t>(xs.size());
  std::vector<T> out(xs.size());
  const UnaryDesc d{.op = op, .m = m, .n = 1, .ld_in = m, .ld_out = m, .alpha = alpha, .types = {type, type, type}};
  const UnaryArgs args{xs.data(), out.data()};
  weft::tpp::unary_reference(d, args);
  return out;
}

// ---- inputs -----------------------------------------------------------------------------------------

float bits_to_float(std::uint32_t b) { return std::bit_cast<float>(b); }

std::vector<float> special_floats() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> xs = {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                           -std::numeric_limits<float>::quiet_NaN(), bits_to_float(0x7f800001u),  // signalling NaNs
                           bits_to_float(0xff800001u), bits_to_float(0x7fa00000u), bits_to_float(0x7fc12345u),
                           bits_to_float(0xffffffffu), 1e-45f, -1e-45f, 1e-40f, -1e-40f, 1.17549435e-38f,
                           -1.17549435e-38f, 1.1754942e-38f, 3.40282347e38f, -3.40282347e38f, 1.0f, -1.0f, 0.5f,
                           2.0f, 3.0f, 0.1f, -0.1f};
  // The edges of the transcendentals' formulas (those of activation_accuracy_test.cpp).
  const float edges[] = {88.7228f, 88.72284f, 88.7229f, -87.33655f, -103.97f, -104.0f, -104.5f, 0.55f, -0.55f,
                         0.5499999f, 0.8f, -0.8f, 0.7999999f, -15.0f, -14.1f, 15.0f, 9.01f, -9.01f, 1e-8f, -1e-8f,
                         0.3465736f, -0.3465736f, 89.0f, -100.0f, -110.0f, 17.0f, 20.0f, -30.0f, 1e30f, -1e30f};
  for (float e : edges) {
    xs.push_back(e);
    xs.push_back(std::nextafter(e, 0.0f));
    xs.push_back(std::nextafter(e, inf));
  }
  return xs;
}

// The sample of the whole bit-pattern range (activation_bits.hpp) and the special values.
std::vector<float> whole_range() {
  std::vector<float> xs = weft::test::activation_whole_range();
  for (float s : special_floats()) xs.push_back(s);
  return xs;
}

std::vector<double> f64_inputs() {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> xs = {0.0, -0.0, inf, -inf, std::numeric_limits<double>::quiet_NaN(),
                            -std::numeric_limits<double>::quiet_NaN(), std::bit_cast<double>(0x7ff0000000000001ull),
                            std::bit_cast<double>(0xfff4000000000000ull), std::bit_cast<double>(~0ull),
                            std::numeric_limits<double>::denorm_min(), -std::numeric_limits<double>::denorm_min(),
                            std::numeric_limits<double>::min(), -std::numeric_limits<double>::max(),
                            std::numeric_limits<double>::max(), 1.0, -1.0, 0.1, 3.0, 1e-310, -1e-310};
  // Pseudo-random patterns spread over the whole 64-bit range (a Weyl sequence), and floats.
  std::uint64_t b = 0;
  for (int i = 0; i < 131072; ++i) xs.push_back(std::bit_cast<double>(b += 0x9E3779B97F4A7C15ull));
  std::mt19937 rng(77);
  for (int i = 0; i < 16384; ++i) xs.push_back(static_cast<double>(bits_to_float(static_cast<std::uint32_t>(rng()))));
  return xs;
}

// ---- accuracy bound (as activation_accuracy_test.cpp) --------------------------------------------------

void expect_within_bound(UnaryOp op, std::span<const float> xs, std::span<const float> got, const char* what) {
  double max_rel = 0;
  float worst = 0;
  std::int64_t failures = 0;
  std::string first;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    double rel = 0;
    if (!weft::test::within_activation_bound(weft::test::exact_activation(op, xs[i]), got[i], rel) && failures++ == 0) {
      first = "x = " + std::to_string(xs[i]) + " (bits " + std::to_string(std::bit_cast<std::uint32_t>(xs[i])) +
              ") gave " + std::to_string(got[i]) + ", exact " + std::to_string(weft::test::exact_activation(op, xs[i]));
    }
    if (rel > max_rel) {
      max_rel = rel;
      worst = xs[i];
    }
  }
  std::printf("[ accuracy ] %-8s neon %-12s max rel error %.3g at x = %.9g (%lld violations)\n",
              weft::tpp::to_string(op).c_str(), what, max_rel, static_cast<double>(worst), static_cast<long long>(failures));
  EXPECT_EQ(failures, 0) << weft::tpp::to_string(op) << " " << what << ": first violation at " << first;
}

// ---- tests ------------------------------------------------------------------------------------------

TEST(NeonConstantPool, EntriesDeduplicatedByBitsAlignedAfterTheCode) {
  Assembler a;
  ConstantPool pool;
  EXPECT_TRUE(pool.empty());
  pool.load_base(a, x5);
  a.ret();
  EXPECT_EQ(pool.f32(1.0f), 0);
  EXPECT_EQ(pool.bits32(0x3f800000u), 0);  // the same bits
  EXPECT_EQ(pool.f32(-0.0f), 16);          // not +0's... and +0 is its own entry
  EXPECT_EQ(pool.f32(0.0f), 32);
  EXPECT_EQ(pool.f64(1.0), 48);
  EXPECT_EQ(pool.bits64(0x3ff0000000000000ull), 48);
  EXPECT_EQ(pool.f32(1.0f), 0);
  EXPECT_FALSE(pool.empty());
  pool.emit(a);
  // adr, ret, two nops to 16 bytes, then 4 entries of 4 words.
  const std::vector<std::uint32_t>& w = a.words();
  ASSERT_EQ(w.size(), 4u + 16u);
  EXPECT_EQ(w[0], 0x10000085u);  // adr x5, +16
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(w[4 + static_cast<std::size_t>(i)], 0x3f800000u);
    EXPECT_EQ(w[8 + static_cast<std::size_t>(i)], 0x80000000u);
    EXPECT_EQ(w[12 + static_cast<std::size_t>(i)], 0u);
  }
  EXPECT_EQ(w[16], 0u);
  EXPECT_EQ(w[17], 0x3ff00000u);
  EXPECT_EQ(w[18], 0u);
  EXPECT_EQ(w[19], 0x3ff00000u);
  EXPECT_THROW(pool.f32(2.0f), weft::Error);
  EXPECT_THROW(pool.emit(a), weft::Error);
}

TEST(NeonConstantPool, EmptyPoolWritesNothingButBindsItsLabel) {
  Assembler a;
  ConstantPool pool;
  pool.load_base(a, x1);
  a.ret();
  pool.emit(a);
  ASSERT_EQ(a.words().size(), 2u);  // no padding, no entries; the adr points past the ret
  EXPECT_EQ(a.words()[0], 0x10000041u);
}

TEST(NeonActivation, ScratchCountsAndErrors) {
  for (UnaryOp op : kElementwise) {
    const int need = ActivationEmitter::scratch_vectors(op, DataType::f32);
    EXPECT_GE(need, 0) << weft::tpp::to_string(op);
    EXPECT_LE(need, 6) << weft::tpp::to_string(op);
  }
  EXPECT_EQ(ActivationEmitter::scratch_vectors(UnaryOp::copy, DataType::f32), 0);
  EXPECT_EQ(ActivationEmitter::scratch_vectors(UnaryOp::relu, DataType::f64), 1);
  EXPECT_EQ(ActivationEmitter::scratch_vectors(UnaryOp::exp, DataType::f32), 3);
  EXPECT_EQ(ActivationEmitter::scratch_vectors(UnaryOp::gelu, DataType::f32), 4);
  for (UnaryOp op : kTranscendentals) EXPECT_THROW(ActivationEmitter::scratch_vectors(op, DataType::f64), weft::Error);
  EXPECT_THROW(ActivationEmitter::scratch_vectors(UnaryOp::transpose, DataType::f32), weft::Error);
  EXPECT_THROW(ActivationEmitter::scratch_vectors(UnaryOp::relu, DataType::bf16), weft::Error);
  Assembler a;
  ConstantPool pool;
  ActivationEmitter act(a, pool, x3);
  const VReg two[] = {v1, v2};
  EXPECT_THROW(act.emit(UnaryOp::gelu, 0.0f, v0, two, DataType::f32), weft::Error);
  const VReg aliased[] = {v1, v0, v2, v3};
  EXPECT_THROW(act.emit(UnaryOp::gelu, 0.0f, v0, aliased, DataType::f32), weft::Error);
  const VReg repeated[] = {v1, v2, v1};
  EXPECT_THROW(act.emit(UnaryOp::exp, 0.0f, v0, repeated, DataType::f32), weft::Error);
  EXPECT_THROW(act.emit(UnaryOp::zero, 0.0f, v0, two, DataType::f32), weft::Error);
  EXPECT_EQ(a.size_bytes(), 0u) << "nothing emitted by a refused call";
}

std::vector<float> alphas_for(UnaryOp op) {
  if (!takes_alpha(op)) return {0.0f};
  // Pool entries and fmov immediates (3.0, -0.5), a denormal and an infinity.
  return {0.3f, 3.0f, -0.5f, 1e-40f, -1e30f, std::numeric_limits<float>::infinity()};
}

template <class T>
void expect_bit_exact(UnaryOp op, const std::vector<T>& xs) {
  using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  constexpr DataType type = sizeof(T) == 8 ? DataType::f64 : DataType::f32;
  const std::vector<float> alphas = alphas_for(op);
  for (std::size_t a = 0; a < alphas.size(); ++a) {
    const float alpha = alphas[a];
    // The first alpha over all of xs, the others (time under qemu) over every 7th element and the
    // first 64 and last 128 (the special values: f64_inputs() starts with them, whole_range() ends
    // with them).
    std::vector<T> some;
    if (a > 0) {
      for (std::size_t i = 0; i < xs.size(); ++i)
        if (i % 7 == 0 || i < 64 || i + 128 >= xs.size()) some.push_back(xs[i]);
    }
    const std::vector<T>& x = a == 0 ? xs : some;
    const std::vector<T> got = run(op, alpha, type, x);
    const std::vector<T> want = reference(op, alpha, x);
    std::int64_t bad = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (std::bit_cast<Bits>(got[i]) != std::bit_cast<Bits>(want[i]) && bad++ < 5) {
        ADD_FAILURE() << weft::tpp::to_string(op) << " " << weft::jit::to_string(type) << " alpha " << alpha << ": x bits 0x"
                      << std::hex << std::bit_cast<Bits>(x[i]) << " gave 0x" << std::bit_cast<Bits>(got[i])
                      << ", reference 0x" << std::bit_cast<Bits>(want[i]) << std::dec;
      }
    }
    EXPECT_EQ(bad, 0) << weft::tpp::to_string(op) << " alpha " << alpha;
  }
}

TEST(NeonActivation, ExactOpsF32BitForBitOverTheWholeRange) {
  static const std::vector<float> xs = whole_range();
  for (UnaryOp op : kF64Ops) expect_bit_exact(op, xs);
}

TEST(NeonActivation, ExactOpsF64BitForBit) {
  static const std::vector<double> xs = f64_inputs();
  for (UnaryOp op : kF64Ops) expect_bit_exact(op, xs);
}

// Each transcendental run once over activation_bits_sample() (the whole range, then 400001 points
// of [-20, 20]); the tests below check parts of it.
struct SampleRun {
  std::vector<float> xs, out;
  std::size_t whole = 0;  // xs[0, whole) is the whole-range part
};

const SampleRun& sample_run(UnaryOp op) {
  static std::map<UnaryOp, SampleRun> runs;
  SampleRun& r = runs[op];
  if (r.xs.empty()) {
    r.xs = weft::test::activation_bits_sample();
    r.whole = weft::test::activation_whole_range().size();
    r.out = run(op, 0.0f, DataType::f32, r.xs);
  }
  return r;
}

class NeonTranscendental : public ::testing::TestWithParam<UnaryOp> {};

TEST_P(NeonTranscendental, WholeFloatRangeWithinBound) {
  const SampleRun& r = sample_run(GetParam());
  expect_within_bound(GetParam(), std::span(r.xs).first(r.whole), std::span(r.out).first(r.whole), "whole range");
}

TEST_P(NeonTranscendental, DenseCoreWithinBound) {
  const SampleRun& r = sample_run(GetParam());
  expect_within_bound(GetParam(), std::span(r.xs).subspan(r.whole), std::span(r.out).subspan(r.whole), "[-20, 20]");
}

// The same bits as the x86 kernels (tests/tpp/activation_bits_test.cpp checks those against the same
// hashes).
TEST_P(NeonTranscendental, SameBitsAsTheX86Kernels) {
  const std::uint64_t hash = weft::test::activation_bits_hash(sample_run(GetParam()).out);
  std::printf("[ bits ] %-8s neon   0x%016llx\n", weft::tpp::to_string(GetParam()).c_str(),
              static_cast<unsigned long long>(hash));
  EXPECT_EQ(hash, weft::test::recorded_activation_hash(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Neon, NeonTranscendental, ::testing::ValuesIn(kTranscendentals),
                         [](const auto& param_info) { return weft::tpp::to_string(param_info.param); });

float one(UnaryOp op, float x) { return run(op, 0.0f, DataType::f32, std::vector<float>{x, 1.0f, x, -1.0f, x})[4]; }
std::uint32_t one_bits(UnaryOp op, float x) { return std::bit_cast<std::uint32_t>(one(op, x)); }

// The special values docs/tpp_eltwise.md states (the x86 suite's SpecialValues), on Neon.
TEST(NeonActivation, SpecialValuesAsDocumented) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (UnaryOp op : {UnaryOp::exp, UnaryOp::sigmoid, UnaryOp::tanh, UnaryOp::gelu, UnaryOp::relu, UnaryOp::sqrt,
                     UnaryOp::reciprocal, UnaryOp::square}) {
    EXPECT_TRUE(std::isnan(one(op, nan))) << weft::tpp::to_string(op);
    EXPECT_TRUE(std::isnan(one(op, -nan))) << weft::tpp::to_string(op);
    EXPECT_TRUE(std::isnan(one(op, bits_to_float(0x7f800001u)))) << weft::tpp::to_string(op);
  }
  EXPECT_EQ(one(UnaryOp::exp, inf), inf);
  EXPECT_EQ(one_bits(UnaryOp::exp, -inf), 0u);
  EXPECT_EQ(one(UnaryOp::exp, 0.0f), 1.0f);
  EXPECT_EQ(one(UnaryOp::exp, -0.0f), 1.0f);
  EXPECT_EQ(one(UnaryOp::exp, 89.0f), inf);
  EXPECT_EQ(one_bits(UnaryOp::exp, -110.0f), 0u);
  EXPECT_GT(one(UnaryOp::exp, -100.0f), 0.0f);  // denormal, not flushed
  EXPECT_EQ(one(UnaryOp::sigmoid, inf), 1.0f);
  EXPECT_EQ(one_bits(UnaryOp::sigmoid, -inf), 0u);
  EXPECT_EQ(one(UnaryOp::sigmoid, 0.0f), 0.5f);
  EXPECT_EQ(one(UnaryOp::sigmoid, -0.0f), 0.5f);
  EXPECT_EQ(one(UnaryOp::sigmoid, 20.0f), 1.0f);
  EXPECT_GT(one(UnaryOp::sigmoid, -100.0f), 0.0f);  // e^-100, denormal
  EXPECT_EQ(one(UnaryOp::tanh, inf), 1.0f);
  EXPECT_EQ(one(UnaryOp::tanh, -inf), -1.0f);
  EXPECT_EQ(one(UnaryOp::tanh, 10.0f), 1.0f);
  EXPECT_EQ(one_bits(UnaryOp::tanh, -0.0f), 0x80000000u);
  EXPECT_EQ(one_bits(UnaryOp::tanh, 0.0f), 0u);
  EXPECT_EQ(one(UnaryOp::tanh, 1e-30f), 1e-30f);
  EXPECT_EQ(one(UnaryOp::tanh, 1e-40f), 1e-40f);
  EXPECT_EQ(one(UnaryOp::tanh, -1e-40f), -1e-40f);
  EXPECT_EQ(one(UnaryOp::gelu, inf), inf);
  EXPECT_EQ(one_bits(UnaryOp::gelu, -inf), 0x80000000u);
  EXPECT_EQ(one_bits(UnaryOp::gelu, -0.0f), 0x80000000u);
  EXPECT_EQ(one_bits(UnaryOp::gelu, 0.0f), 0u);
  EXPECT_EQ(one(UnaryOp::gelu, 1e30f), 1e30f);
  EXPECT_EQ(one(UnaryOp::gelu, -30.0f), 0.0f);
  EXPECT_GT(-one(UnaryOp::gelu, -13.8f), 0.0f);  // denormal, rounded once
  EXPECT_EQ(one_bits(UnaryOp::relu, -0.0f), 0u);
  EXPECT_EQ(one(UnaryOp::relu, -inf), 0.0f);
  EXPECT_EQ(one(UnaryOp::relu, inf), inf);
  EXPECT_EQ(one_bits(UnaryOp::relu, bits_to_float(0x7f800001u)), 0x7f800001u);  // a signalling NaN's bits kept
  EXPECT_EQ(one_bits(UnaryOp::relu, bits_to_float(0xff812345u)), 0xff812345u);
  EXPECT_EQ(one(UnaryOp::reciprocal, 0.0f), inf);
  EXPECT_EQ(one(UnaryOp::reciprocal, -0.0f), -inf);
  EXPECT_TRUE(std::isnan(one(UnaryOp::sqrt, -1.0f)));
  EXPECT_EQ(one_bits(UnaryOp::sqrt, -0.0f), 0x80000000u);
}

// ---- registers --------------------------------------------------------------------------------------

// void kernel(const void* in, const void* fill, void* dump): every vector register from fill
// (32 x 16 bytes), x from in, x4..x17 set to known values; emit(op); then every vector register
// and x0..x17 to dump (32 x 16 bytes, then 18 x 8). d8-d15 are saved around it (AAPCS64).
using DumpFn = void (*)(const void*, const void*, void*);

std::uint64_t general_value(unsigned r) { return 0x0123456789000000ull + r * 0x10101ull; }

// The operands' inputs: four lanes whose paths differ (tanh's and gelu's small and large forms,
// x < 0), scaled per vector so that each vector of a group holds other values.
std::vector<float> dump_inputs_f32(std::size_t vectors) {
  const float base[4] = {0.3f, -2.5f, 7.0f, -0.6f};
  std::vector<float> in;
  for (std::size_t u = 0; u < vectors; ++u)
    for (std::size_t i = 0; i < 4; ++i) in.push_back(base[(i + u) % 4] * (1.0f + 0.25f * static_cast<float>(u)));
  return in;
}
std::vector<double> dump_inputs_f64(std::size_t vectors) {
  const double base[2] = {0.3, -2.5};
  std::vector<double> in;
  for (std::size_t u = 0; u < vectors; ++u)
    for (std::size_t i = 0; i < 2; ++i) in.push_back(base[(i + u) % 2] * (1.0 + 0.25 * static_cast<double>(u)));
  return in;
}

// emit() on the operands xs (one vector: the single-vector form) with every other register known.
void expect_only_scratch_clobbered(UnaryOp op, DataType compute, const std::vector<VReg>& xs,
                                   const std::vector<VReg>& scratch) {
  const int n = static_cast<int>(xs.size());
  const int need = ActivationEmitter::scratch_vectors(op, compute, n);
  std::string operands;
  for (VReg x : xs) operands += " v" + std::to_string(x.index);
  SCOPED_TRACE(weft::tpp::to_string(op) + " " + std::string(weft::jit::to_string(compute)) + " x =" + operands);
  const float alpha = takes_alpha(op) ? 0.75f : 0.0f;
  CodeBuffer a;
  ConstantPool pool;
  ActivationEmitter act(a, pool, x3);
  for (unsigned r = 8; r < 16; r += 2) a.stp(DReg(r), DReg(r + 1), pre_ptr(sp, -16));
  pool.load_base(a, x3);
  for (unsigned r = 0; r < 32; ++r) a.ldr(QReg(r), ptr(x1, 16 * r));
  for (std::size_t u = 0; u < xs.size(); ++u) a.ldr(xs[u].qreg(), ptr(x0, static_cast<std::int64_t>(16 * u)));
  for (unsigned r = 4; r <= 17; ++r) a.mov_imm(XReg(r), general_value(r));
  if (n == 1) {
    act.emit(op, alpha, xs[0], scratch, compute);
  } else {
    act.emit(op, alpha, xs, scratch, compute);
  }
  for (unsigned r = 0; r < 32; ++r) a.str(QReg(r), ptr(x2, 16 * r));
  for (unsigned r = 0; r <= 17; ++r) a.str(XReg(r), ptr(x2, 512 + 8 * r));
  for (unsigned r = 14; r >= 8; r -= 2) a.ldp(DReg(r), DReg(r + 1), post_ptr(sp, 16));
  a.ret();
  pool.emit(a);
  const auto fn = a.finalize<DumpFn>("neon_activation_registers");

  std::uint8_t fill[512], dump[512 + 18 * 8];
  for (int i = 0; i < 512; ++i) fill[i] = static_cast<std::uint8_t>(i * 7 + 3);
  const std::vector<float> in_f32 = dump_inputs_f32(xs.size());
  const std::vector<double> in_f64 = dump_inputs_f64(xs.size());
  const void* in = compute == DataType::f64 ? static_cast<const void*>(in_f64.data()) : in_f32.data();
  fn(in, fill, dump);

  for (unsigned r = 0; r < 32; ++r) {
    bool written = false;
    for (int i = 0; i < need; ++i) written = written || scratch[static_cast<std::size_t>(i)].index == r;
    for (VReg x : xs) written = written || x.index == r;
    if (written) continue;
    EXPECT_EQ(std::memcmp(dump + 16 * r, fill + 16 * r, 16), 0) << "v" << r << " clobbered";
  }
  std::uint64_t general[18];
  std::memcpy(general, dump + 512, sizeof general);
  EXPECT_EQ(general[0], reinterpret_cast<std::uint64_t>(in));
  EXPECT_EQ(general[1], reinterpret_cast<std::uint64_t>(static_cast<const void*>(fill)));
  EXPECT_EQ(general[2], reinterpret_cast<std::uint64_t>(static_cast<void*>(dump)));
  for (unsigned r = 4; r <= 17; ++r) EXPECT_EQ(general[r], general_value(r)) << "x" << r << " clobbered";
  // Each operand holds op(its input), as the single-vector streaming kernel computes it.
  const std::vector<double> want_f64 = compute == DataType::f64 ? run(op, alpha, compute, in_f64) : std::vector<double>{};
  const std::vector<float> want_f32 = compute == DataType::f64 ? std::vector<float>{} : run(op, alpha, compute, in_f32);
  for (std::size_t u = 0; u < xs.size(); ++u) {
    const void* want = compute == DataType::f64 ? static_cast<const void*>(want_f64.data() + 2 * u) : want_f32.data() + 4 * u;
    EXPECT_EQ(std::memcmp(dump + 16 * xs[u].index, want, 16), 0) << "x" << u;
  }
}

void expect_only_scratch_clobbered(UnaryOp op, DataType compute, VReg x, const std::vector<VReg>& scratch) {
  expect_only_scratch_clobbered(op, compute, std::vector<VReg>{x}, scratch);
}

TEST(NeonActivation, ClobbersOnlyItsDeclaredScratchRegisters) {
  // Scratch lists longer than needed: the registers past scratch_vectors(op) must survive too.
  const std::vector<VReg> low = {v1, v2, v3, v4, v5, v6};
  const std::vector<VReg> mixed = {v30, v8, v15, v16, v2, v24};
  for (UnaryOp op : kElementwise) {
    expect_only_scratch_clobbered(op, DataType::f32, v0, low);
    expect_only_scratch_clobbered(op, DataType::f32, v31, mixed);
    expect_only_scratch_clobbered(op, DataType::f32, v9, std::vector<VReg>(mixed.rbegin(), mixed.rend()));
  }
  for (UnaryOp op : kF64Ops) {
    expect_only_scratch_clobbered(op, DataType::f64, v0, low);
    expect_only_scratch_clobbered(op, DataType::f64, v31, mixed);
  }
}

// The sequence does not depend on which registers it is given: the same bits with x and the
// scratch registers elsewhere.
TEST(NeonActivation, ResultsIndependentOfTheRegisters) {
  const std::vector<float> xs = weft::test::activation_dense(-20.0f, 20.0f, 4001);
  for (UnaryOp op : kElementwise) {
    const float alpha = takes_alpha(op) ? 0.3f : 0.0f;
    const std::vector<float> a = run(op, alpha, DataType::f32, xs);
    const std::vector<float> b = run(op, alpha, DataType::f32, xs, v31, {v0, v1, v2, v3, v4, v5});
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << weft::tpp::to_string(op);
  }
}

// ---- several vectors at once ----------------------------------------------------------------------

// void kernel(const void* in, void* out, std::int64_t groups): x0 in, x1 out, x2 groups (>= 1), x3
// the pool base. Each group: xs.size() consecutive vectors into xs, one emit() on all of them, stored
// back in order. d8-d15 are saved around it (the registers may be any).
StreamKernel group_kernel(UnaryOp op, float alpha, DataType compute, const std::vector<VReg>& xs,
                          const std::vector<VReg>& scratch) {
  StreamKernel k{std::make_unique<CodeBuffer>()};
  CodeBuffer& a = *k.code;
  ConstantPool pool;
  ActivationEmitter act(a, pool, x3);
  for (unsigned r = 8; r < 16; r += 2) a.stp(DReg(r), DReg(r + 1), pre_ptr(sp, -16));
  pool.load_base(a, x3);
  Label loop;
  a.bind(loop);
  for (VReg x : xs) a.ldr(x.qreg(), post_ptr(x0, 16));
  act.emit(op, alpha, xs, scratch, compute);
  for (VReg x : xs) a.str(x.qreg(), post_ptr(x1, 16));
  a.subs(x2, x2, 1);
  a.b(Cond::ne, loop);
  for (unsigned r = 14; r >= 8; r -= 2) a.ldp(DReg(r), DReg(r + 1), post_ptr(sp, 16));
  a.ret();
  pool.emit(a);
  k.fn = k.code->finalize<StreamFn>("neon_activation_group_test_" + weft::tpp::to_string(op));
  return k;
}

template <class T>
std::vector<T> run_group(UnaryOp op, float alpha, DataType compute, const std::vector<T>& values,
                         const std::vector<VReg>& xs, const std::vector<VReg>& scratch) {
  constexpr std::size_t lanes = 16 / sizeof(T);
  const std::size_t group = lanes * xs.size();
  const std::size_t groups = (values.size() + group - 1) / group;
  std::vector<T> in(groups * group, T(0)), out(groups * group);
  std::copy(values.begin(), values.end(), in.begin());
  const StreamKernel k = group_kernel(op, alpha, compute, xs, scratch);
  k.fn(in.data(), out.data(), static_cast<std::int64_t>(groups));
  out.resize(values.size());
  return out;
}

// Two register layouts for n vectors: operands and slots in consecutive registers, and both
// scattered over the register file (v8-v15 included), in no order.
struct GroupRegisters {
  std::vector<VReg> xs, scratch;
};

std::vector<GroupRegisters> group_layouts(int n) {
  const auto count = static_cast<std::size_t>(n);
  GroupRegisters packed;
  for (unsigned r = 0; r < count; ++r) packed.xs.push_back(VReg(r));
  for (unsigned r = static_cast<unsigned>(n); r < 32; ++r) packed.scratch.push_back(VReg(r));
  GroupRegisters scattered;
  const unsigned operands[] = {29, 3, 12, 18};
  for (std::size_t u = 0; u < count; ++u) scattered.xs.push_back(VReg(operands[u]));
  std::vector<unsigned> rest;
  for (unsigned r = 0; r < 32; ++r)
    if (std::find(operands, operands + count, r) == operands + count) rest.push_back(r);
  std::shuffle(rest.begin(), rest.end(), std::mt19937(1234 + static_cast<unsigned>(n)));
  for (unsigned r : rest) scattered.scratch.push_back(VReg(r));
  return {packed, scattered};
}

template <class T>
void expect_groups_match_single_form(UnaryOp op, const std::vector<T>& values) {
  using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  constexpr DataType type = sizeof(T) == 8 ? DataType::f64 : DataType::f32;
  const float alpha = takes_alpha(op) ? 0.3f : 0.0f;
  const std::vector<T> single = run(op, alpha, type, values);
  for (int n = 1; n <= ActivationEmitter::kMaxVectors; ++n) {
    int layout = 0;
    for (const GroupRegisters& regs : group_layouts(n)) {
      const std::vector<T> got = run_group(op, alpha, type, values, regs.xs, regs.scratch);
      std::int64_t bad = 0;
      for (std::size_t i = 0; i < values.size(); ++i) {
        if (std::bit_cast<Bits>(got[i]) != std::bit_cast<Bits>(single[i]) && bad++ < 3) {
          ADD_FAILURE() << weft::tpp::to_string(op) << " " << weft::jit::to_string(type) << ", " << n
                        << " vectors, layout " << layout << ": x bits 0x" << std::hex << std::bit_cast<Bits>(values[i])
                        << " gave 0x" << std::bit_cast<Bits>(got[i]) << ", one vector at a time 0x"
                        << std::bit_cast<Bits>(single[i]) << std::dec;
        }
      }
      EXPECT_EQ(bad, 0) << weft::tpp::to_string(op) << ", " << n << " vectors, layout " << layout;
      ++layout;
    }
  }
}

// Every 31st pattern of the whole-range sample, [-20, 20] densely, and the special values: each
// lane of each vector of a group sees all of them.
std::vector<float> group_inputs_f32() {
  const std::vector<float> whole = weft::test::activation_whole_range();
  std::vector<float> xs;
  for (std::size_t i = 0; i < whole.size(); i += 31) xs.push_back(whole[i]);
  const std::vector<float> core = weft::test::activation_dense(-20.0f, 20.0f, 20001);
  xs.insert(xs.end(), core.begin(), core.end());
  for (float s : special_floats()) xs.push_back(s);
  return xs;
}

TEST(NeonActivation, SeveralVectorsGiveTheSingleFormsBitsF32) {
  static const std::vector<float> xs = group_inputs_f32();
  for (UnaryOp op : kElementwise) expect_groups_match_single_form(op, xs);
}

TEST(NeonActivation, SeveralVectorsGiveTheSingleFormsBitsF64) {
  const std::vector<double> all = f64_inputs();
  std::vector<double> xs(all.begin(), all.begin() + 20);  // the special values
  for (std::size_t i = 20; i < all.size(); i += 5) xs.push_back(all[i]);
  for (UnaryOp op : kF64Ops) expect_groups_match_single_form(op, xs);
}

TEST(NeonActivation, SeveralVectorsClobberOnlyTheirDeclaredScratchRegisters) {
  for (int n = 2; n <= ActivationEmitter::kMaxVectors; ++n) {
    for (const GroupRegisters& regs : group_layouts(n)) {
      // The scratch lists are longer than needed: the registers past scratch_vectors() must survive.
      for (UnaryOp op : kElementwise) expect_only_scratch_clobbered(op, DataType::f32, regs.xs, regs.scratch);
      for (UnaryOp op : kF64Ops) expect_only_scratch_clobbered(op, DataType::f64, regs.xs, regs.scratch);
    }
  }
}

TEST(NeonActivation, SeveralVectorsScratchCountsAndErrors) {
  for (int n = 1; n <= ActivationEmitter::kMaxVectors; ++n) {
    for (DataType type : {DataType::f32, DataType::f64}) {
      EXPECT_EQ(ActivationEmitter::scratch_vectors(UnaryOp::copy, type, n), 0);
      EXPECT_EQ(ActivationEmitter::scratch_vectors(UnaryOp::sqrt, type, n), 0);
      EXPECT_EQ(ActivationEmitter::scratch_vectors(UnaryOp::relu, type, n), n);
      EXPECT_EQ(ActivationEmitter::scratch_vectors(UnaryOp::reciprocal, type, n), 1);
      EXPECT_EQ(ActivationEmitter::scratch_vectors(UnaryOp::scale, type, n), 1);
    }
    EXPECT_EQ(ActivationEmitter::scratch_vectors(UnaryOp::exp, DataType::f32, n), 3 * n);
    for (UnaryOp op : {UnaryOp::sigmoid, UnaryOp::tanh, UnaryOp::gelu})
      EXPECT_EQ(ActivationEmitter::scratch_vectors(op, DataType::f32, n), 4 * n);
    for (UnaryOp op : kElementwise) {
      EXPECT_EQ(ActivationEmitter::scratch_vectors(op, DataType::f32, 1), ActivationEmitter::scratch_vectors(op, DataType::f32))
          << weft::tpp::to_string(op);
    }
  }
  EXPECT_THROW(ActivationEmitter::scratch_vectors(UnaryOp::exp, DataType::f32, 0), weft::Error);
  EXPECT_THROW(ActivationEmitter::scratch_vectors(UnaryOp::exp, DataType::f32, ActivationEmitter::kMaxVectors + 1),
               weft::Error);
  Assembler a;
  ConstantPool pool;
  ActivationEmitter act(a, pool, x3);
  std::vector<VReg> scratch;
  for (unsigned r = 16; r < 32; ++r) scratch.push_back(VReg(r));
  const std::vector<VReg> five = {v0, v1, v2, v3, v4};
  EXPECT_THROW(act.emit(UnaryOp::relu, 0.0f, five, scratch, DataType::f32), weft::Error);
  const std::vector<VReg> none;
  EXPECT_THROW(act.emit(UnaryOp::relu, 0.0f, none, scratch, DataType::f32), weft::Error);
  const std::vector<VReg> repeated = {v0, v1, v0};
  EXPECT_THROW(act.emit(UnaryOp::square, 0.0f, repeated, scratch, DataType::f32), weft::Error);
  const std::vector<VReg> pair = {v0, v1};
  const std::vector<VReg> overlapping = {v16, v17, v18, v19, v20, v1, v22, v23};
  EXPECT_THROW(act.emit(UnaryOp::gelu, 0.0f, pair, overlapping, DataType::f32), weft::Error);
  const std::vector<VReg> seven(scratch.begin(), scratch.begin() + 7);
  EXPECT_THROW(act.emit(UnaryOp::gelu, 0.0f, pair, seven, DataType::f32), weft::Error);
  EXPECT_THROW(act.emit(UnaryOp::gelu, 0.0f, pair, scratch, DataType::f64), weft::Error);
  EXPECT_EQ(a.size_bytes(), 0u) << "nothing emitted by a refused call";
}

}  // namespace
