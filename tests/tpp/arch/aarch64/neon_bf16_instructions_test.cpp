// The numeric contract of the FEAT_BF16 Neon instructions (groundwork of issue 28's bf16 kernels):
// small kernels made with our assembler run bfdot (vector and .2h[i]), bfmmla, bfmlalb / bfmlalt
// (vector and by element), bfcvtn / bfcvtn2 and bfcvt on fixed-seed random inputs mixed with special
// ones (NaNs quiet and signalling, infinities, zeros, denormals, the largest values, products that
// overflow or underflow, ties), and every result lane must have the bits of a C++ model of the Arm
// ARM pseudocode (DDI 0487, shared/functions/float: BFDotAdd, BFMatMulAdd, BFMulAdd, FPConvertBF)
// for FPCR = 0 (what a kernel runs with: round to nearest even, FZ = 0, DN = 0, AH = 0, EBF = 0).
// Besides, each test prints how often the instruction differs from weft's bf16 BRGEMM contract
// (tpp/include/weft/tpp/brgemm.hpp: per pair acc = fma(A(kk+1), B(kk+1), acc), then
// acc = fma(A(kk), B(kk), acc), IEEE fp32, denormals kept).
//
// The model (the pseudocode, restated):
//  - bfdot / bfmmla (FPCR.EBF = 0, which is all FEAT_BF16 without FEAT_EBF16 has):
//      BFDotAdd(acc, a0, a1, b0, b1) = BFAdd(acc, BFAdd(BFMul(a0, b0), BFMul(a1, b1)))
//    every operation on its own, each nonzero finite result rounded by BFRound: to ODD (the
//    truncated significand with its last bit set when inexact), flushed to a zero of its sign when
//    the exact result is below 2^-126, infinity on overflow. Inputs are unpacked by BFUnpack: a
//    denormal (exponent 0: bf16 operands AND the fp32 accumulator) is a zero of its sign; any NaN,
//    quiet or signalling, gives the default NaN 0x7fc00000 (no payload propagates); inf * 0 and
//    inf - inf give the default NaN; zero + zero keeps a common sign, an exact zero sum of anything
//    else is +0. bfdot: lane i of d = BFDotAdd(d[i], n[2i], n[2i+1], m[2i], m[2i+1]) (m: the pair
//    m.2h[p] for every lane in the indexed form); the 2s form zeroes d's upper 64 bits.
//    bfmmla: d (2x2, d[2i+j]) = BFDotAdd(BFDotAdd(d[2i+j], n[4i], n[4i+1], m[4j], m[4j+1]),
//    n[4i+2], n[4i+3], m[4j+2], m[4j+3]): rows of n times rows of m, k pair 0 then pair 1.
//  - bfmlalb / bfmlalt: BFMulAdd = FPMulAdd(acc, n[2i+s] : 0x0000, m[2i+s] : 0x0000, FPCR) with s = 0
//    (b) or 1 (t), or m.h[lane] for every i: an IEEE fp32 fused multiply-add (one rounding, to
//    nearest even; denormals are values, in and out). NaNs (FPProcessNaNs3): the first signalling
//    NaN of acc, n, m made quiet, else the first quiet one of acc, n, m; a quiet NaN acc with
//    inf * 0 gives the default NaN; inf * 0 or inf - inf otherwise gives the default NaN.
//  - bfcvtn / bfcvtn2 / bfcvt: FPConvertBF(x, FPCR): round to nearest even to bf16 (8-bit
//    significand), denormals in and out kept (FZ = 0), overflow to infinity, a NaN keeps its sign
//    and upper payload and is made quiet: (x >> 16) | 0x0040. bfcvtn zeroes the upper half,
//    bfcvtn2 keeps the lower half, bfcvt zeroes everything above h.
//
// What it finds (qemu-aarch64 7.2, Debian 12: all lanes of every instruction match the model):
//  - bfmlalt then bfmlalb IS weft's BRGEMM contract bit for bit (the fused product of two bf16 is
//    exact; one rounding per step, odd element first), NaN propagation aside.
//  - bfdot and bfmmla are NOT: round to odd, three roundings per pair instead of two, flushed
//    denormals and default NaNs; a BRGEMM on them needs a contract of its own (a tolerance).
//  - bfcvtn differs from jit::to_bfloat16 only on fp32 denormals: to_bfloat16 flushes them to zero
//    (as vcvtneps2bf16), bfcvtn rounds them to bf16 denormals.
//
// How it runs: in weft_tpp_tests, which ctest runs under the toolchain's emulator line
// (cmake/toolchains/aarch64-linux-gnu.cmake: CMAKE_CROSSCOMPILING_EMULATOR = qemu-aarch64 -L /,
// no -cpu). qemu-user 7.2's default CPU for linux-user is its "max" model, which has FEAT_BF16
// (HWCAP2_BF16) but not FEAT_EBF16, so the suite runs there as it does with -cpu max; on a CPU
// without HWCAP2_BF16 every test skips, naming it. By hand:
//   qemu-aarch64 -L / build-a64/tests/weft_tpp_tests --gtest_filter='NeonBf16Instructions.*'
#include <gtest/gtest.h>
#include <sys/auxv.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "weft/jit/aarch64/code_buffer.hpp"
#include "weft/jit/bfloat16.hpp"

namespace {

using namespace weft::jit::a64;

constexpr unsigned long kHwcap2Bf16 = 1ul << 14;  // HWCAP2_BF16 of the Linux arm64 ABI

bool has_bf16() { return (getauxval(AT_HWCAP2) & kHwcap2Bf16) != 0; }

#define SKIP_WITHOUT_BF16() \
  if (!has_bf16()) GTEST_SKIP() << "this CPU lacks FEAT_BF16 (getauxval(AT_HWCAP2) has no HWCAP2_BF16)"

// ---- the model ------------------------------------------------------------------------------------

namespace model {

__extension__ typedef unsigned __int128 u128;  // GCC and Clang; enough for an exact sum of two fp32 products
constexpr std::uint32_t kDefaultNan = 0x7fc00000u;
constexpr std::uint32_t kInf = 0x7f800000u;

std::uint32_t widen(std::uint16_t h) { return static_cast<std::uint32_t>(h) << 16; }
bool is_nan(std::uint32_t u) { return (u & 0x7fffffffu) > kInf; }
bool is_snan(std::uint32_t u) { return is_nan(u) && (u & 0x00400000u) == 0; }
bool is_inf(std::uint32_t u) { return (u & 0x7fffffffu) == kInf; }
bool sign_of(std::uint32_t u) { return (u >> 31) != 0; }
std::uint32_t with_sign(bool negative, std::uint32_t magnitude) { return (negative ? 0x80000000u : 0u) | magnitude; }

// (-1)^negative * magnitude * 2^exponent, exactly; a sum whose smaller term lies far below the
// larger one's bits keeps it as a sticky 1 in the lowest bit (64 zero bits below the larger term
// keep that bit below any rounding position).
struct Exact {
  bool negative;
  u128 magnitude;
  int exponent;
};

// A finite fp32 (denormals are values here; the callers flush them where the pseudocode does).
Exact exact_of(std::uint32_t u) {
  const std::uint32_t biased = (u >> 23) & 0xff, fraction = u & 0x7fffffu;
  if (biased == 0) return {sign_of(u), fraction, -149};
  return {sign_of(u), fraction | 0x800000u, static_cast<int>(biased) - 150};
}

Exact multiply(const Exact& a, const Exact& b) {
  return {a.negative != b.negative, a.magnitude * b.magnitude, a.exponent + b.exponent};  // < 2^48
}

Exact add(Exact a, Exact b) {  // magnitudes below 2^49
  if (a.exponent < b.exponent) std::swap(a, b);
  const int distance = a.exponent - b.exponent;
  u128 big = 0, small = 0;
  int exponent = 0;
  if (distance <= 64) {
    big = a.magnitude << distance;
    small = b.magnitude;
    exponent = b.exponent;
  } else {
    big = a.magnitude << 64;
    const int shift = distance - 64;
    small = shift >= 128 ? 0 : b.magnitude >> shift;
    const u128 lost = shift >= 128 ? b.magnitude : b.magnitude & ((u128{1} << shift) - 1);
    if (lost != 0) small |= 1;
    exponent = a.exponent - 64;
  }
  if (a.negative == b.negative) return {a.negative, big + small, exponent};
  if (big >= small) return {a.negative, big - small, exponent};
  return {b.negative, small - big, exponent};
}

enum class Rounding { odd, nearest_even };

int top_bit(u128 v) {
  const auto high = static_cast<std::uint64_t>(v >> 64);
  return high != 0 ? 127 - std::countl_zero(high) : 63 - std::countl_zero(static_cast<std::uint64_t>(v));
}

// x (nonzero) rounded to fp32. flush_tiny: BFRound's "exponent < -126 gives a zero of the sign"
// (taken on the exact value); otherwise denormal results as IEEE.
std::uint32_t round_f32(const Exact& x, Rounding rounding, bool flush_tiny) {
  const int e = top_bit(x.magnitude) + x.exponent;  // x in [2^e, 2^(e+1))
  if (flush_tiny && e < -126) return with_sign(x.negative, 0);
  int last = std::max(e, -126) - 23;  // the exponent of the result's last significand bit
  const int shift = last - x.exponent;
  u128 kept = 0, rest = 0;
  if (shift <= 0) {
    kept = x.magnitude << -shift;
  } else if (shift >= 128) {
    rest = x.magnitude;
  } else {
    kept = x.magnitude >> shift;
    rest = x.magnitude & ((u128{1} << shift) - 1);
  }
  if (rest != 0) {
    if (rounding == Rounding::odd) {
      kept |= 1;
    } else if (shift < 128) {
      const u128 half = u128{1} << (shift - 1);
      if (rest > half || (rest == half && (kept & 1) != 0)) ++kept;
    }
  }
  if ((kept >> 24) != 0) {  // rounded up to 2^24
    kept >>= 1;
    ++last;
  }
  if (kept < (u128{1} << 23)) return with_sign(x.negative, static_cast<std::uint32_t>(kept));  // denormal
  const int biased = last + 23 + 127;
  if (biased >= 255) return with_sign(x.negative, kInf);
  return with_sign(x.negative,
                   static_cast<std::uint32_t>(biased) << 23 | (static_cast<std::uint32_t>(kept) & 0x7fffffu));
}

// BFUnpack's view: exponent 0 (zero or denormal) is a zero of its sign.
bool bf_zero(std::uint32_t u) { return (u & 0x7f800000u) == 0; }

std::uint32_t bf_mul(std::uint16_t a16, std::uint16_t b16) {
  const std::uint32_t a = widen(a16), b = widen(b16);
  if (is_nan(a) || is_nan(b)) return kDefaultNan;
  const bool negative = sign_of(a) != sign_of(b);
  if ((is_inf(a) && bf_zero(b)) || (bf_zero(a) && is_inf(b))) return kDefaultNan;
  if (is_inf(a) || is_inf(b)) return with_sign(negative, kInf);
  if (bf_zero(a) || bf_zero(b)) return with_sign(negative, 0);
  return round_f32(multiply(exact_of(a), exact_of(b)), Rounding::odd, true);
}

std::uint32_t bf_add(std::uint32_t a, std::uint32_t b) {
  if (is_nan(a) || is_nan(b)) return kDefaultNan;
  if (is_inf(a) && is_inf(b) && sign_of(a) != sign_of(b)) return kDefaultNan;
  if (is_inf(a)) return a;
  if (is_inf(b)) return b;
  const bool zero_a = bf_zero(a), zero_b = bf_zero(b);
  if (zero_a && zero_b) return sign_of(a) == sign_of(b) ? with_sign(sign_of(a), 0) : 0u;
  const Exact sum = zero_a ? exact_of(b) : zero_b ? exact_of(a) : add(exact_of(a), exact_of(b));
  if (sum.magnitude == 0) return 0;  // +0 (round to odd)
  return round_f32(sum, Rounding::odd, true);
}

std::uint32_t bf_dot_add(std::uint32_t acc, std::uint16_t a0, std::uint16_t a1, std::uint16_t b0, std::uint16_t b1) {
  return bf_add(acc, bf_add(bf_mul(a0, b0), bf_mul(a1, b1)));
}

// FPMulAdd(acc, a, b) with FPCR = 0: IEEE fused multiply-add, Arm's NaN rules (see the top).
std::uint32_t fp_mul_add(std::uint32_t acc, std::uint32_t a, std::uint32_t b) {
  auto zero = [](std::uint32_t u) { return (u & 0x7fffffffu) == 0; };
  const bool inf_times_zero = (is_inf(a) && zero(b)) || (zero(a) && is_inf(b));
  if (is_nan(acc) && !is_snan(acc) && !is_snan(a) && !is_snan(b) && inf_times_zero) return kDefaultNan;
  for (std::uint32_t u : {acc, a, b}) {
    if (is_snan(u)) return u | 0x00400000u;
  }
  for (std::uint32_t u : {acc, a, b}) {
    if (is_nan(u)) return u;
  }
  const bool product_negative = sign_of(a) != sign_of(b);
  const bool product_inf = is_inf(a) || is_inf(b), product_zero = zero(a) || zero(b);
  if (inf_times_zero || (is_inf(acc) && product_inf && sign_of(acc) != product_negative)) return kDefaultNan;
  if (is_inf(acc)) return acc;
  if (product_inf) return with_sign(product_negative, kInf);
  if (zero(acc) && product_zero) {
    return sign_of(acc) == product_negative ? acc : 0u;  // opposite zeros: +0 (round to nearest)
  }
  Exact sum = product_zero ? exact_of(acc) : multiply(exact_of(a), exact_of(b));
  if (!product_zero && !zero(acc)) sum = add(exact_of(acc), sum);
  if (sum.magnitude == 0) return 0;
  return round_f32(sum, Rounding::nearest_even, false);
}

std::uint16_t fp_convert_bf(std::uint32_t u) {
  if (is_nan(u)) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);
  // Round to nearest even on the bits: right for denormals too (bf16 is a prefix of fp32), and
  // carries into the exponent up to infinity.
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

}  // namespace model

// ---- kernels and inputs ---------------------------------------------------------------------------

// void kernel(const void* acc, const void* n, const void* m, void* out): q0 = acc, q1 = n, q2 = m,
// one instruction (or two), q0 stored to out.
struct Bf16Kernel : CodeBuffer {
  explicit Bf16Kernel(const std::function<void(Assembler&)>& body) {
    ldr(q0, ptr(x0));
    ldr(q1, ptr(x1));
    ldr(q2, ptr(x2));
    body(*this);
    str(q0, ptr(x3));
    ret();
  }
  using Fn = void (*)(const void*, const void*, const void*, void*);
};

struct Registers {
  std::array<std::uint32_t, 4> acc;  // q0
  std::array<std::uint16_t, 8> n;    // q1 (bfcvt*: read as 4 fp32, see n32())
  std::array<std::uint16_t, 8> m;    // q2
  std::array<std::uint32_t, 4> n32() const { return std::bit_cast<std::array<std::uint32_t, 4>>(n); }
};

std::array<std::uint32_t, 4> run(Bf16Kernel::Fn fn, const Registers& r) {
  std::array<std::uint32_t, 4> out{};
  fn(r.acc.data(), r.n.data(), r.m.data(), out.data());
  return out;
}

// bf16 operands: mostly ordinary values (exponents around 1, products and sums that round), some
// specials, some tiny and huge ones (products that underflow or overflow fp32).
class Inputs {
 public:
  explicit Inputs(std::uint32_t seed) : random_(seed) {}

  std::uint16_t bf16() {
    const unsigned pick = below(100);
    const auto sign = static_cast<std::uint16_t>(below(2) << 15);
    if (pick < 70) return sign | static_cast<std::uint16_t>((112 + below(32)) << 7 | below(128));
    if (pick < 80) {
      static constexpr std::uint16_t kSpecial[] = {0x0000, 0x7f80, 0x7fc0, 0x7f81, 0x7fa5, 0x0001,
                                                   0x007f, 0x0040, 0x0080, 0x7f7f, 0x3f80, 0xffc1};
      return sign ^ kSpecial[below(std::size(kSpecial))];
    }
    if (pick < 90) return sign | static_cast<std::uint16_t>((1 + below(30)) << 7 | below(128));  // products < 2^-126
    return sign | static_cast<std::uint16_t>((200 + below(54)) << 7 | below(128));               // products > 2^127
  }

  std::uint32_t f32() {
    const unsigned pick = below(100);
    const std::uint32_t sign = below(2) << 31;
    if (pick < 75) return sign | (112 + below(32)) << 23 | below(1u << 23);
    static constexpr std::uint32_t kSpecial[] = {0x00000000, 0x7f800000, 0x7fc00000, 0x7f800001, 0x7fa5a5a5,
                                                 0x00000001, 0x00400000, 0x007fffff, 0x00800000, 0x7f7fffff,
                                                 0x3f800000, 0x3f808000, 0x3f818000, 0x7f7f8000, 0x00018000};
    if (pick < 90) return sign ^ kSpecial[below(std::size(kSpecial))];
    return sign | below(0xff) << 23 | below(1u << 23);  // any finite exponent
  }

  unsigned below(unsigned n) { return std::uniform_int_distribution<unsigned>(0, n - 1)(random_); }

 private:
  std::mt19937 random_;
};

Registers random_registers(Inputs& in) {
  Registers r{};
  for (auto& a : r.acc) a = in.f32();
  for (auto& h : r.n) h = in.bf16();
  for (auto& h : r.m) h = in.bf16();
  return r;
}

// Ties on purpose: acc = 1.x, and one product exactly half (or a quarter) of acc's last place.
Registers tie_registers(Inputs& in) {
  Registers r = random_registers(in);
  for (int i = 0; i < 4; ++i) {
    r.acc[i] = (in.below(2) << 31) | 0x3f800000u | in.below(1u << 23);
    r.n[2 * i] = 0x3f80;                                                // 1.0
    r.m[2 * i] = static_cast<std::uint16_t>((103 - in.below(2)) << 7);  // 2^-24 or 2^-25
    r.n[2 * i + 1] = in.below(2) ? 0x0000 : r.n[2 * i + 1];
  }
  return r;
}

std::string hex32(std::uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof text, "%08x", v);
  return text;
}
// The messages append piece by piece: `" " + hex32(...)` trips GCC 12's false -Wstringop-overflow
// (GCC bug 105329) with GoogleTest's precompiled header.
std::string describe(const Registers& r) {
  std::string s = "acc";
  for (auto a : r.acc) s.append(" ").append(hex32(a));
  s += " | n";
  for (auto h : r.n) s.append(" ").append(hex32(h).substr(4));
  s += " | m";
  for (auto h : r.m) s.append(" ").append(hex32(h).substr(4));
  return s;
}

using Model = std::function<std::array<std::uint32_t, 4>(const Registers&)>;

struct Tally {
  int runs = 0, model_mismatches = 0;
  int reference_differences = 0;  // lanes (4 a run)
};

// Runs `cases` random (and tie) register sets through the kernel; every lane must equal the model.
// `reference` (optional): weft's BRGEMM contract for the same inputs, counted, not required.
Tally check(const char* what, const std::function<void(Assembler&)>& body, const Model& expected, std::uint32_t seed,
            const Model& reference = nullptr, int cases = 3000) {
  Bf16Kernel kernel(body);
  const auto fn = kernel.finalize<Bf16Kernel::Fn>(what);
  Inputs in(seed);
  Tally t;
  for (int c = 0; c < cases; ++c, ++t.runs) {
    const Registers r = c % 4 == 3 ? tie_registers(in) : random_registers(in);
    const auto got = run(fn, r);
    const auto want = expected(r);
    if (got != want) {
      if (++t.model_mismatches <= 8) {
        std::string lanes;
        for (int i = 0; i < 4; ++i) {
          lanes.append(" ").append(hex32(got[i]));
          if (got[i] != want[i]) lanes.append("(model ").append(hex32(want[i])).append(")");
        }
        ADD_FAILURE() << what << ": " << describe(r) << "\n  got" << lanes;
      }
    }
    if (reference) {
      const auto ref = reference(r);
      for (int i = 0; i < 4; ++i) t.reference_differences += got[i] != ref[i];
    }
  }
  std::printf(
      "[ bf16 ] %-28s %d runs, %d differ from the model%s\n", what, t.runs, t.model_mismatches,
      reference
          ? (", " + std::to_string(t.reference_differences) + " of the lanes from weft's fma-pair reference").c_str()
          : "");
  return t;
}

// weft's BRGEMM order for one lane: acc = fma(n[odd], m[odd], acc), then fma(n[even], m[even], acc).
std::uint32_t reference_pair(std::uint32_t acc, std::uint16_t n0, std::uint16_t n1, std::uint16_t m0,
                             std::uint16_t m1) {
  using namespace model;
  return fp_mul_add(fp_mul_add(acc, widen(n1), widen(m1)), widen(n0), widen(m0));
}

// ---- the tests ------------------------------------------------------------------------------------

TEST(NeonBf16Instructions, BfdotVectorRoundsToOddWithFlushedDenormalsAndDefaultNans) {
  SKIP_WITHOUT_BF16();
  const auto model4 = [](const Registers& r) {
    std::array<std::uint32_t, 4> out{};
    for (int i = 0; i < 4; ++i)
      out[i] = model::bf_dot_add(r.acc[i], r.n[2 * i], r.n[2 * i + 1], r.m[2 * i], r.m[2 * i + 1]);
    return out;
  };
  const auto reference4 = [](const Registers& r) {
    std::array<std::uint32_t, 4> out{};
    for (int i = 0; i < 4; ++i)
      out[i] = reference_pair(r.acc[i], r.n[2 * i], r.n[2 * i + 1], r.m[2 * i], r.m[2 * i + 1]);
    return out;
  };
  const Tally t = check(
      "bfdot.4s", [](Assembler& a) { a.bfdot(v0.s4(), v1.h8(), v2.h8()); }, model4, 1, reference4);
  EXPECT_GT(t.reference_differences, 0) << "bfdot was expected to differ from the fma-pair reference";
  // The 2s form: lanes 0 and 1, the upper half zeroed.
  check(
      "bfdot.2s", [](Assembler& a) { a.bfdot(v0.s2(), v1.h4(), v2.h4()); },
      [&](const Registers& r) {
        auto out = model4(r);
        out[2] = out[3] = 0;
        return out;
      },
      2);
}

TEST(NeonBf16Instructions, BfdotByElementTakesOnePairForEveryLane) {
  SKIP_WITHOUT_BF16();
  for (unsigned pair = 0; pair < 4; ++pair) {
    const auto model_pair = [pair](const Registers& r) {
      std::array<std::uint32_t, 4> out{};
      for (int i = 0; i < 4; ++i) {
        out[i] = model::bf_dot_add(r.acc[i], r.n[2 * i], r.n[2 * i + 1], r.m[2 * pair], r.m[2 * pair + 1]);
      }
      return out;
    };
    check(("bfdot.4s.elem [" + std::to_string(pair) + "]").c_str(),
          [pair](Assembler& a) { a.bfdot(v0.s4(), v1.h8(), v2.h2(pair)); }, model_pair, 10 + pair, nullptr, 800);
    check(("bfdot.2s.elem [" + std::to_string(pair) + "]").c_str(),
          [pair](Assembler& a) { a.bfdot(v0.s2(), v1.h4(), v2.h2(pair)); },
          [&](const Registers& r) {
            auto out = model_pair(r);
            out[2] = out[3] = 0;
            return out;
          },
          20 + pair, nullptr, 800);
  }
}

TEST(NeonBf16Instructions, BfmmlaChainsTwoDotAddsPerOutput) {
  SKIP_WITHOUT_BF16();
  const auto model_mm = [](const Registers& r) {
    std::array<std::uint32_t, 4> out{};
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2; ++j) {
        std::uint32_t sum = r.acc[2 * i + j];
        for (int k = 0; k < 2; ++k) {
          sum = model::bf_dot_add(sum, r.n[4 * i + 2 * k], r.n[4 * i + 2 * k + 1], r.m[4 * j + 2 * k],
                                  r.m[4 * j + 2 * k + 1]);
        }
        out[2 * i + j] = sum;
      }
    }
    return out;
  };
  const auto reference_mm = [](const Registers& r) {
    std::array<std::uint32_t, 4> out{};
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2; ++j) {
        std::uint32_t sum = r.acc[2 * i + j];
        for (int k = 0; k < 2; ++k) {
          sum = reference_pair(sum, r.n[4 * i + 2 * k], r.n[4 * i + 2 * k + 1], r.m[4 * j + 2 * k],
                               r.m[4 * j + 2 * k + 1]);
        }
        out[2 * i + j] = sum;
      }
    }
    return out;
  };
  const Tally t = check(
      "bfmmla.4s", [](Assembler& a) { a.bfmmla(v0.s4(), v1.h8(), v2.h8()); }, model_mm, 30, reference_mm);
  EXPECT_GT(t.reference_differences, 0);
}

TEST(NeonBf16Instructions, BfmlalbAndBfmlaltAreIeeeFusedMultiplyAdds) {
  SKIP_WITHOUT_BF16();
  for (unsigned top = 0; top < 2; ++top) {
    const auto model_vector = [top](const Registers& r) {
      std::array<std::uint32_t, 4> out{};
      for (int i = 0; i < 4; ++i)
        out[i] = model::fp_mul_add(r.acc[i], model::widen(r.n[2 * i + top]), model::widen(r.m[2 * i + top]));
      return out;
    };
    check(
        top ? "bfmlalt.4s" : "bfmlalb.4s",
        [top](Assembler& a) {
          if (top)
            a.bfmlalt(v0.s4(), v1.h8(), v2.h8());
          else
            a.bfmlalb(v0.s4(), v1.h8(), v2.h8());
        },
        model_vector, 40 + top);
    for (unsigned lane = 0; lane < 8; ++lane) {
      const auto model_lane = [top, lane](const Registers& r) {
        std::array<std::uint32_t, 4> out{};
        for (int i = 0; i < 4; ++i)
          out[i] = model::fp_mul_add(r.acc[i], model::widen(r.n[2 * i + top]), model::widen(r.m[lane]));
        return out;
      };
      check(((top ? "bfmlalt.4s.elem [" : "bfmlalb.4s.elem [") + std::to_string(lane) + "]").c_str(),
            [top, lane](Assembler& a) {
              if (top)
                a.bfmlalt(v0.s4(), v1.h8(), v2.h(lane));
              else
                a.bfmlalb(v0.s4(), v1.h8(), v2.h(lane));
            },
            model_lane, 50 + 10 * top + lane, nullptr, 400);
    }
  }
}

// bfmlalt then bfmlalb: the odd element of each pair first, as weft's BRGEMM reference sums.
TEST(NeonBf16Instructions, BfmlaltThenBfmlalbIsTheBrgemmReferenceContract) {
  SKIP_WITHOUT_BF16();
  const auto reference4 = [](const Registers& r) {
    std::array<std::uint32_t, 4> out{};
    for (int i = 0; i < 4; ++i)
      out[i] = reference_pair(r.acc[i], r.n[2 * i], r.n[2 * i + 1], r.m[2 * i], r.m[2 * i + 1]);
    return out;
  };
  const Tally t = check(
      "bfmlalt+bfmlalb",
      [](Assembler& a) {
        a.bfmlalt(v0.s4(), v1.h8(), v2.h8());
        a.bfmlalb(v0.s4(), v1.h8(), v2.h8());
      },
      reference4, 70, reference4, 5000);
  EXPECT_EQ(t.reference_differences, 0);
}

TEST(NeonBf16Instructions, BfcvtnRoundsToNearestEvenKeepingDenormals) {
  SKIP_WITHOUT_BF16();
  // n holds 4 fp32; the result's bf16 lanes packed in pairs into out's 32-bit words.
  const auto convert = [](const Registers& r) {
    std::array<std::uint16_t, 8> h{};
    const auto n = r.n32();
    for (int i = 0; i < 4; ++i) h[i] = model::fp_convert_bf(n[i]);
    return h;
  };
  const auto fill_f32 = [](Registers& r, Inputs& in) {
    std::array<std::uint32_t, 4> n{};
    for (auto& v : n) v = in.f32();
    r.n = std::bit_cast<std::array<std::uint16_t, 8>>(n);
  };
  Bf16Kernel low([](Assembler& a) { a.bfcvtn(v0.h4(), v1.s4()); });
  Bf16Kernel high([](Assembler& a) { a.bfcvtn2(v0.h8(), v1.s4()); });
  Bf16Kernel scalar([](Assembler& a) { a.bfcvt(h0, s1); });
  const auto low_fn = low.finalize<Bf16Kernel::Fn>("bfcvtn"), high_fn = high.finalize<Bf16Kernel::Fn>("bfcvtn2"),
             scalar_fn = scalar.finalize<Bf16Kernel::Fn>("bfcvt");
  Inputs in(80);
  int mismatches = 0, to_bfloat16_differences = 0, denormal_differences = 0;
  for (int c = 0; c < 4000; ++c) {
    Registers r = random_registers(in);
    fill_f32(r, in);
    const auto h = convert(r);
    const auto acc16 = std::bit_cast<std::array<std::uint16_t, 8>>(r.acc);
    const auto got_low = std::bit_cast<std::array<std::uint16_t, 8>>(run(low_fn, r));
    const auto got_high = std::bit_cast<std::array<std::uint16_t, 8>>(run(high_fn, r));
    const auto got_scalar = std::bit_cast<std::array<std::uint16_t, 8>>(run(scalar_fn, r));
    const std::array<std::uint16_t, 8> want_low{h[0], h[1], h[2], h[3], 0, 0, 0, 0};
    const std::array<std::uint16_t, 8> want_high{acc16[0], acc16[1], acc16[2], acc16[3], h[0], h[1], h[2], h[3]};
    const std::array<std::uint16_t, 8> want_scalar{h[0], 0, 0, 0, 0, 0, 0, 0};
    if (got_low != want_low || got_high != want_high || got_scalar != want_scalar) {
      if (++mismatches <= 8) ADD_FAILURE() << "bfcvtn/bfcvtn2/bfcvt differ from the model: " << describe(r);
    }
    const auto n = r.n32();
    for (int i = 0; i < 4; ++i) {
      if (h[i] != weft::jit::to_bfloat16(std::bit_cast<float>(n[i])).bits) {
        ++to_bfloat16_differences;
        if ((n[i] & 0x7f800000u) == 0) ++denormal_differences;
      }
    }
  }
  std::printf(
      "[ bf16 ] bfcvtn/bfcvtn2/bfcvt: 4000 runs, %d differ from the model; of 16000 lanes %d differ from "
      "jit::to_bfloat16, %d of them fp32 denormals\n",
      mismatches, to_bfloat16_differences, denormal_differences);
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(to_bfloat16_differences, denormal_differences) << "bfcvtn and to_bfloat16 differ beyond denormals";
  EXPECT_GT(denormal_differences, 0);
}

// A few fixed cases with their results stated by hand, so that the model's reading of the
// pseudocode is visible; the CPU must give the same (lane 0; the other lanes hold zeros).
TEST(NeonBf16Instructions, HandPickedCases) {
  SKIP_WITHOUT_BF16();
  Bf16Kernel dot([](Assembler& a) { a.bfdot(v0.s4(), v1.h8(), v2.h8()); });
  Bf16Kernel fma_pair([](Assembler& a) {
    a.bfmlalt(v0.s4(), v1.h8(), v2.h8());
    a.bfmlalb(v0.s4(), v1.h8(), v2.h8());
  });
  Bf16Kernel fma_even([](Assembler& a) { a.bfmlalb(v0.s4(), v1.h8(), v2.h8()); });
  Bf16Kernel convert([](Assembler& a) { a.bfcvtn(v0.h4(), v1.s4()); });
  const auto dot_fn = dot.finalize<Bf16Kernel::Fn>("bfdot"), pair_fn = fma_pair.finalize<Bf16Kernel::Fn>("bfmlal"),
             even_fn = fma_even.finalize<Bf16Kernel::Fn>("bfmlalb"),
             convert_fn = convert.finalize<Bf16Kernel::Fn>("bfcvtn");
  struct Case {
    const char* what;
    Bf16Kernel::Fn fn;
    std::uint32_t acc;
    std::uint16_t n0, n1, m0, m1;
    std::uint32_t model;  // what the model says, written out
  };
  const Case cases[] = {
      // 1 + 2^-24 (a tie in fp32): bfdot rounds to odd, 1 + 2^-23; the fma pair rounds to even, 1.
      {"bfdot tie", dot_fn, 0x3f800000u, 0x3f80, 0, 0x3380, 0, 0x3f800001u},
      {"fma pair tie", pair_fn, 0x3f800000u, 0x3f80, 0, 0x3380, 0, 0x3f800000u},
      // A denormal accumulator is a zero for bfdot (+0 + 0 * 0 = +0); the fma keeps it.
      {"bfdot denormal acc", dot_fn, 0x00000001u, 0, 0, 0, 0, 0x00000000u},
      {"fma pair denormal acc", pair_fn, 0x00000001u, 0, 0, 0, 0, 0x00000001u},
      // Any NaN gives bfdot's default NaN (payloads, signalling NaNs); the fma propagates it, quiet.
      {"bfdot NaN acc", dot_fn, 0xffa5a5a5u, 0x3f80, 0, 0x3f80, 0, 0x7fc00000u},
      {"bfdot sNaN n", dot_fn, 0x3f800000u, 0x7f81, 0, 0x3f80, 0, 0x7fc00000u},
      {"fma sNaN acc", even_fn, 0xffa5a5a5u, 0x3f80, 0, 0x3f80, 0, 0xffe5a5a5u},
      {"fma qNaN acc", even_fn, 0xffe5a5a5u, 0x3f80, 0, 0x3f80, 0, 0xffe5a5a5u},
      // The signalling NaN of n wins over a quiet accumulator, made quiet.
      {"fma sNaN n", even_fn, 0x7fc00000u, 0x7f81, 0, 0x3f80, 0, 0x7fc10000u},
      // 2^-70 * 2^-70: bfdot flushes the product; the fma keeps 2^-140 (a denormal).
      {"bfdot tiny product", dot_fn, 0u, 0x1c80, 0, 0x1c80, 0, 0u},
      {"fma tiny product", even_fn, 0u, 0x1c80, 0, 0x1c80, 0, 0x00000200u},
      // x - x = +0 (both); -0 + (-0 * 0) + (-0 * 0) = -0 (both).
      {"bfdot x - x", dot_fn, 0xbf800000u, 0x3f80, 0, 0x3f80, 0, 0u},
      {"bfdot -0", dot_fn, 0x80000000u, 0x8000, 0x8000, 0x0000, 0x0000, 0x80000000u},
      {"fma pair -0", pair_fn, 0x80000000u, 0x8000, 0x8000, 0x0000, 0x0000, 0x80000000u},
      // inf * 0: the default NaN.
      {"bfdot inf * 0", dot_fn, 0x3f800000u, 0x7f80, 0, 0x0000, 0, 0x7fc00000u},
      {"fma inf * 0", even_fn, 0x3f800000u, 0x7f80, 0, 0x0000, 0, 0x7fc00000u},
  };
  for (const Case& c : cases) {
    const std::uint32_t by_model = c.fn == dot_fn    ? model::bf_dot_add(c.acc, c.n0, c.n1, c.m0, c.m1)
                                   : c.fn == pair_fn ? reference_pair(c.acc, c.n0, c.n1, c.m0, c.m1)
                                                     : model::fp_mul_add(c.acc, model::widen(c.n0), model::widen(c.m0));
    EXPECT_EQ(hex32(by_model), hex32(c.model)) << c.what << ": the model";
    Registers r{};
    r.acc[0] = c.acc;
    r.n[0] = c.n0;
    r.n[1] = c.n1;
    r.m[0] = c.m0;
    r.m[1] = c.m1;
    EXPECT_EQ(hex32(run(c.fn, r)[0]), hex32(c.model)) << c.what << ": the CPU";
  }
  // bfcvtn: a denormal rounds to a bf16 denormal (0x00018000 = 1.5 * 2^-133, a tie between 0x0001
  // and 0x0002, to even); jit::to_bfloat16 flushes it. Ties of normals to even, a signalling NaN quiet.
  Registers r{};
  r.n = std::bit_cast<std::array<std::uint16_t, 8>>(
      std::array<std::uint32_t, 4>{0x00018000u, 0x3f808000u, 0x3f818000u, 0x7f810000u});
  EXPECT_EQ(model::fp_convert_bf(0x00018000u), 0x0002);
  EXPECT_EQ(weft::jit::to_bfloat16(std::bit_cast<float>(0x00018000u)).bits, 0x0000);
  const auto got = std::bit_cast<std::array<std::uint16_t, 8>>(run(convert_fn, r));
  EXPECT_EQ(got, (std::array<std::uint16_t, 8>{0x0002, 0x3f80, 0x3f82, 0x7fc1, 0, 0, 0, 0}));
}

}  // namespace
