#include "activation_emit.hpp"

#include <bit>
#include <cstdint>
#include <string>

#include "activation_coefficients.hpp"
#include "op_properties.hpp"
#include "weft/jit/aarch64/immediates.hpp"
#include "weft/jit/error.hpp"

namespace weft::tpp::neon {
namespace {

using namespace jit::a64;
using jit::DataType;
namespace coef = detail::act_coef;

// Switches over UnaryOp here list every op: a new element-wise op must state its sequence and its
// scratch registers before anything compiles.
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"

// The element-wise ops' sequences. Registers are VReg; the arrangement (4s or 2d) is chosen per
// instruction by the helpers below, so each sequence is written once for both types where it
// exists in both.
class Sequences {
 public:
  Sequences(Assembler& a, ConstantPool& pool, XReg base, bool f64) : a_(a), pool_(pool), base_(base), f64_(f64) {}

  // ---- the ops -----------------------------------------------------------------------------------

  // x > 0 or NaN: x (its bits, a signalling NaN too); else +0. fcmle is false for NaN.
  void relu(VReg x, VReg t) {
    if (f64_) {
      a_.fcmle(t.d2(), x.d2(), 0.0);
    } else {
      a_.fcmle(t.s4(), x.s4(), 0.0);
    }
    a_.bic(x.b16(), x.b16(), t.b16());
  }

  void reciprocal(VReg x, VReg t) {
    splat(t, 1.0);
    fdiv(x, t, x);
  }

  // x = x + alpha, x - alpha, x * alpha (alpha a float, exactly a double in f64).
  void with_alpha(UnaryOp op, VReg x, VReg t, float alpha) {
    splat(t, static_cast<double>(alpha));
    if (op == UnaryOp::increment) fadd(x, x, t);
    else if (op == UnaryOp::decrement) fsub(x, x, t);
    else fmul(x, x, t);
  }

  // x = e^x * 2^bias (f32), in place; x is clamped to [lo, hi] first, so n + bias stays within
  // [-150, 129]. The sequence of the x86 emitter's exp, operation for operation.
  void exp(VReg x, VReg t0, VReg t1, VReg c, float lo = coef::kExpLo, float hi = coef::kExpHi, int bias = 0) {
    splat(c, lo);
    fmax(t0, x, c);  // a NaN stays NaN (x86's vmaxps drops it and poisons r instead)
    splat(c, hi);
    fmin(t0, t0, c);
    splat(c, coef::kLog2e);
    fmul(t1, t0, c);
    a_.frintn(t1.s4(), t1.s4());  // n, to nearest even as vroundps(0)
    splat(c, coef::kLn2Hi);
    a_.fmls(t0.s4(), t1.s4(), c.s4());
    splat(c, coef::kLn2Lo);
    a_.fmls(t0.s4(), t1.s4(), c.s4());  // r
    a_.fcvtzs(t1.s4(), t1.s4());        // n as an integer (exact: n is integral; NaN gives 0)
    if (bias != 0) {
      splat_bits32(c, static_cast<std::uint32_t>(bias));
      a_.add(t1.s4(), t1.s4(), c.s4());
    }
    // e^r = 1 + r (1 + r P(r)): Horner over {1, 1, P0..P5}, as x86's horner + two FMAs with 1.
    const float p[8] = {1.0f, 1.0f, coef::kExpP[0], coef::kExpP[1], coef::kExpP[2],
                        coef::kExpP[3], coef::kExpP[4], coef::kExpP[5]};
    horner(x, c, t0, p);
    // 2^n in two factors 2^(n>>1) and 2^(n - (n>>1)), each a normal float for n in [-150, 129]:
    // the first product is exact, the second rounds once (overflow -> inf, denormals rounded once).
    a_.sshr(t0.s4(), t1.s4(), 1);
    a_.sub(t1.s4(), t1.s4(), t0.s4());
    splat(c, 1.0);  // the bits of 1.0f are 127 << 23: the exponent bias, in place
    a_.shl(t0.s4(), t0.s4(), 23);
    a_.add(t0.s4(), t0.s4(), c.s4());
    fmul(x, x, t0);
    a_.shl(t1.s4(), t1.s4(), 23);
    a_.add(t1.s4(), t1.s4(), c.s4());
    fmul(x, x, t1);
  }

  // E = e^-|x|; 1/(1+E) for x >= 0, E/(1+E) for x < 0 (by the sign bit, as vblendvps).
  void sigmoid(VReg x, VReg s0, VReg s1, VReg s2, VReg s3) {
    a_.fabs(s0.s4(), x.s4());
    a_.fneg(s0.s4(), s0.s4());  // -|x|: the sign bit set, as x86's or
    exp(s0, s1, s2, s3);        // E in (0, 1]
    splat(s1, 1.0);
    fadd(s1, s0, s1);
    splat(s2, 1.0);
    fdiv(s2, s2, s1);  // sigmoid(|x|)
    fmul(s1, s0, s2);  // sigmoid(-|x|)
    sign_mask(x, x);
    a_.bsl(x.b16(), s1.b16(), s2.b16());
  }

  // |x| < 0.55: x + x^3 Q(x^2); else sign(x) (1 - E)/(1 + E), E = e^-2|x|.
  void tanh(VReg x, VReg s0, VReg s1, VReg s2, VReg s3) {
    a_.fabs(s0.s4(), x.s4());
    splat(s1, -2.0);
    fmul(s0, s0, s1);
    exp(s0, s1, s2, s3);  // E
    splat(s1, 1.0);
    fsub(s1, s1, s0);
    splat(s2, 1.0);
    fadd(s0, s0, s2);
    fdiv(s1, s1, s0);  // tanh(|x|)
    fmul(s0, x, x);
    horner(s2, s3, s0, coef::kTanhQ);
    fmul(s2, s2, s0);
    a_.mov(s3.b16(), x.b16());
    a_.fmla(s3.s4(), s2.s4(), x.s4());  // x + x^3 Q (x86: s2 * x + x)
    a_.movi(s0.s4(), 0x80, lsl(24));
    a_.and_(s0.b16(), x.b16(), s0.b16());  // x's sign bit
    a_.orr(s1.b16(), s1.b16(), s0.b16());
    a_.orr(s3.b16(), s3.b16(), s0.b16());  // also keeps tanh(-0) = -0
    a_.fabs(x.s4(), x.s4());
    splat(s2, coef::kTanhSmall);
    fcmgt(x, s2, x);  // |x| < 0.55 (false for NaN)
    a_.bsl(x.b16(), s3.b16(), s1.b16());
  }

  // x Phi(x): see the x86 emitter and docs/tpp_eltwise.md. Phi(-a) is carried times 2^64.
  void gelu(VReg x, VReg s0, VReg s1, VReg s2, VReg s3) {
    const float scale = coef::kGeluScale;
    // Large a: Phi(-a) = e^(-a^2/2) M(w); a^2 = h + l exactly, e^(-(h+l)/2) = e^(-h/2) (1 - l/2).
    gelu_abs(s0, x, s1);
    fmul(s1, s0, s0);
    splat(s2, -0.5);
    fmul(s1, s1, s2);
    exp(s1, s0, s2, s3, -0.5f * coef::kGeluClamp * coef::kGeluClamp - 1.0f, 0.0f, coef::kGeluScaleLog2);
    gelu_abs(s0, x, s2);
    fmul(s2, s0, s0);
    a_.fmls(s2.s4(), s0.s4(), s0.s4());  // h - a*a = -l, exactly
    splat(s3, 0.5);
    fmul(s2, s2, s3);                    // -l/2 (x86: (a*a - h) * -0.5)
    a_.fmla(s1.s4(), s1.s4(), s2.s4());  // e^(-a^2/2) 2^64
    splat(s3, coef::kGeluShift);
    fadd(s2, s0, s3);
    splat(s0, 1.0);
    fdiv(s0, s0, s2);  // w
    horner(s2, s3, s0, coef::kMillsM);
    fmul(s1, s1, s2);  // Phi(-a) 2^64, large-a form
    // Small a: Phi(-a) 2^64 = 2^63 - a P(a^2) 2^64.
    a_.fabs(s0.s4(), x.s4());
    fmul(s2, s0, s0);
    horner(s0, s3, s2, coef::kPhiP, scale);
    a_.fabs(s2.s4(), x.s4());
    splat(s3, 0.5f * scale);
    a_.fmls(s3.s4(), s0.s4(), s2.s4());
    splat(s0, coef::kGeluSmall);
    fcmgt(s0, s0, s2);                      // a < 0.8
    a_.bit(s1.b16(), s3.b16(), s0.b16());   // s1 = Phi(-a) 2^64
    // x >= 0: 1 - Phi(-a), unscaled (>= 1/2); x < 0: Phi(-a) 2^64.
    splat(s0, 1.0);
    splat(s2, 1.0f / scale);
    a_.fmls(s0.s4(), s1.s4(), s2.s4());
    sign_mask(s2, x);
    a_.bif(s1.b16(), s0.b16(), s2.b16());
    // Below -15 the product is -0; clamping x there avoids -inf * 0. fmax keeps a NaN x.
    splat(s0, -coef::kGeluClamp);
    fmax(s0, s0, x);
    fmul(x, s0, s1);
    // Undo the scale where x < 0 (the product has the sign of x, -0 included): one rounding.
    sign_mask(s2, x);
    splat(s0, 1.0);
    splat(s1, 1.0f / scale);
    a_.bsl(s2.b16(), s1.b16(), s0.b16());
    fmul(x, x, s2);
  }

  void fmul(VReg d, VReg n, VReg m) { f64_ ? a_.fmul(d.d2(), n.d2(), m.d2()) : a_.fmul(d.s4(), n.s4(), m.s4()); }
  void fadd(VReg d, VReg n, VReg m) { f64_ ? a_.fadd(d.d2(), n.d2(), m.d2()) : a_.fadd(d.s4(), n.s4(), m.s4()); }
  void fsub(VReg d, VReg n, VReg m) { f64_ ? a_.fsub(d.d2(), n.d2(), m.d2()) : a_.fsub(d.s4(), n.s4(), m.s4()); }
  void fdiv(VReg d, VReg n, VReg m) { f64_ ? a_.fdiv(d.d2(), n.d2(), m.d2()) : a_.fdiv(d.s4(), n.s4(), m.s4()); }
  void fsqrt(VReg x) { f64_ ? a_.fsqrt(x.d2(), x.d2()) : a_.fsqrt(x.s4(), x.s4()); }

 private:
  void fmax(VReg d, VReg n, VReg m) { a_.fmax(d.s4(), n.s4(), m.s4()); }
  void fmin(VReg d, VReg n, VReg m) { a_.fmin(d.s4(), n.s4(), m.s4()); }
  void fcmgt(VReg d, VReg n, VReg m) { a_.fcmgt(d.s4(), n.s4(), m.s4()); }

  // Every lane = value: fmov #imm when the value is one of its immediates, else a pool entry.
  void splat(VReg v, double value) {
    if (!f64_) value = static_cast<float>(value);
    if (jit::a64::encode_fp_imm8(value)) {
      f64_ ? a_.fmov(v.d2(), value) : a_.fmov(v.s4(), value);
      return;
    }
    a_.ldr(v.qreg(), ptr(base_, f64_ ? pool_.f64(value) : pool_.f32(static_cast<float>(value))));
  }
  void splat(VReg v, float value) { splat(v, static_cast<double>(value)); }
  void splat_bits32(VReg v, std::uint32_t bits) {
    if (bits <= 0xff) {
      a_.movi(v.s4(), bits);
      return;
    }
    a_.ldr(v.qreg(), ptr(base_, pool_.bits32(bits)));
  }

  // All ones in the lanes whose sign bit is set (a NaN's too, as vblendvps reads it).
  void sign_mask(VReg d, VReg x) { a_.sshr(d.s4(), x.s4(), 31); }

  // s = min(|x|, 15); a NaN stays NaN (x itself carries it into the final product anyway).
  void gelu_abs(VReg s, VReg x, VReg c) {
    a_.fabs(s.s4(), x.s4());
    splat(c, coef::kGeluClamp);
    fmin(s, s, c);
  }

  // result = (((c[K-1] v + c[K-2]) v + ...) v + c[0]) with each coefficient times `scale` (a power
  // of 2: exact). Each step is fmla into the register just loaded with the next coefficient (x86's
  // acc = acc * v + c, the same fused operation), so the steps alternate between `result` and
  // `other`, starting where the last step lands in `result`.
  template <std::size_t K>
  void horner(VReg result, VReg other, VReg v, const float (&c)[K], float scale = 1.0f) {
    const std::size_t steps = K - 1;
    VReg acc = steps % 2 == 0 ? result : other;
    splat(acc, c[K - 1] * scale);
    for (std::size_t i = K - 1; i-- > 0;) {
      const VReg next = acc.index == result.index ? other : result;
      splat(next, c[i] * scale);
      a_.fmla(next.s4(), acc.s4(), v.s4());
      acc = next;
    }
  }

  Assembler& a_;
  ConstantPool& pool_;
  XReg base_;
  bool f64_;
};

// The scratch registers of each op, or -1 where emit() has no sequence (f64: only the ops with f64
// kernels).
int scratch_or_none(UnaryOp op, bool f64) {
  switch (op) {
    case UnaryOp::copy:
    case UnaryOp::square:
    case UnaryOp::sqrt: return 0;
    case UnaryOp::relu:
    case UnaryOp::reciprocal:
    case UnaryOp::increment:
    case UnaryOp::decrement:
    case UnaryOp::scale: return 1;
    case UnaryOp::exp: return f64 ? -1 : 3;
    case UnaryOp::sigmoid:
    case UnaryOp::tanh:
    case UnaryOp::gelu: return f64 ? -1 : 4;
    case UnaryOp::zero:
    case UnaryOp::relu_bwd:
    case UnaryOp::transpose:
    case UnaryOp::reduce_rows_sum:
    case UnaryOp::reduce_rows_max:
    case UnaryOp::reduce_cols_sum:
    case UnaryOp::reduce_cols_max:
    case UnaryOp::vnni2_pack:
    case UnaryOp::vnni2_unpack: break;
  }
  return -1;
}

#pragma GCC diagnostic pop

bool is_f64(UnaryOp op, DataType compute) {
  if (compute == DataType::f32) return false;
  if (compute == DataType::f64) return true;
  throw Error("neon activation emitter: " + to_string(op) + " computed in " + std::string(jit::to_string(compute)) +
              ": the compute type is f32 or f64");
}

}  // namespace

ActivationEmitter::ActivationEmitter(Assembler& a, ConstantPool& pool, XReg pool_base)
    : a_(a), pool_(pool), base_(pool_base) {}

int ActivationEmitter::scratch_vectors(UnaryOp op, DataType compute) {
  const bool f64 = is_f64(op, compute);
  const int need = scratch_or_none(op, f64);
  if (need < 0) {
    throw Error("neon activation emitter: " + to_string(op) +
                (is_elementwise(op) ? " has no " + std::string(jit::to_string(compute)) + " kernel"
                                    : std::string(" is not an element-wise op")));
  }
  // f64 kernels exist exactly for the ops op_properties.hpp says; the two tables must agree.
  if (f64 && !detail::unary_op_properties(op).f64_kernel) {
    throw Error("neon activation emitter: " + to_string(op) + " has no f64 kernel");
  }
  return need;
}

void ActivationEmitter::emit(UnaryOp op, float alpha, VReg x, std::span<const VReg> scratch, DataType compute) {
  const int need = scratch_vectors(op, compute);
  if (static_cast<int>(scratch.size()) < need) {
    throw Error("neon activation emitter: " + to_string(op) + " needs " + std::to_string(need) +
                " scratch registers, got " + std::to_string(scratch.size()));
  }
  for (int i = 0; i < need; ++i) {
    const unsigned r = scratch[static_cast<std::size_t>(i)].index;
    bool repeated = r == x.index;
    for (int j = 0; j < i; ++j) repeated = repeated || scratch[static_cast<std::size_t>(j)].index == r;
    if (repeated) {
      throw Error("neon activation emitter: " + to_string(op) + ": scratch register v" + std::to_string(r) +
                  " is the operand or given twice");
    }
  }
  Sequences s(a_, pool_, base_, compute == DataType::f64);
  auto t = [&](int i) { return scratch[static_cast<std::size_t>(i)]; };
  switch (op) {
    case UnaryOp::copy: return;
    case UnaryOp::relu: return s.relu(x, t(0));
    case UnaryOp::square: return s.fmul(x, x, x);
    case UnaryOp::reciprocal: return s.reciprocal(x, t(0));
    case UnaryOp::sqrt: return s.fsqrt(x);
    case UnaryOp::exp: return s.exp(x, t(0), t(1), t(2));
    case UnaryOp::sigmoid: return s.sigmoid(x, t(0), t(1), t(2), t(3));
    case UnaryOp::tanh: return s.tanh(x, t(0), t(1), t(2), t(3));
    case UnaryOp::gelu: return s.gelu(x, t(0), t(1), t(2), t(3));
    case UnaryOp::increment:
    case UnaryOp::decrement:
    case UnaryOp::scale: return s.with_alpha(op, x, t(0), alpha);
    default: break;  // scratch_vectors() threw for every other op
  }
  throw Error("neon activation emitter: no instruction sequence for " + to_string(op));
}

}  // namespace weft::tpp::neon
