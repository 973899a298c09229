// The shared activation emitter: one instruction sequence per element-wise op, applied in place to
// one vector register. The unary TPPs use it for all their element-wise ops, and BRGEMM uses it for
// its fused epilogue on the accumulators, so both compute bit-identical results.
//
// Usage (inside an emitter derived from weft::jit::x64::CodeBuffer):
//
//   ConstantTable consts(VecTraits<Ymm>::bytes);        // from vec_traits.hpp; one per kernel
//   ActivationEmitter<Ymm> act(*this, consts);
//   Ymm scratch[] = {ymm13, ymm14, ymm15};
//   int need = activation_scratch(UnaryOp::gelu);        // 3: pass at least this many
//   act.emit(UnaryOp::gelu, 0.0f, ymm0, scratch);        // ymm0 = gelu(ymm0); ymm13-15 clobbered
//   ...
//   ret();
//   consts.emit(*this);                                  // the constants go after the code
//
// Contract:
// - `x` is transformed in place; only the scratch registers passed (the first `need` of them) and,
//   for Zmm, opmask k7 are clobbered; no general-purpose register, no memory, no flags beyond what
//   vector instructions touch. Constants are memory operands rip-relative to the table, so the
//   epilogue needs no base register and no broadcast register.
// - Ops accepted: is_elementwise(op) (copy, relu, square, reciprocal, sqrt, exp, sigmoid, tanh, gelu,
//   increment, decrement, scale). `alpha` is the constant of increment/decrement/scale.
// - Scratch registers needed (Ymm and Zmm alike): copy, square, sqrt, increment, decrement, scale: 0;
//   relu, reciprocal: 1; exp: 2; sigmoid, tanh, gelu: 3. With 12 accumulators out of 16 ymm, every op
//   fits in a BRGEMM epilogue.
// - Zmm code is AVX-512F only (no DQ): logic ops are vpandd/vpord, selections use k7.
//
// How each op is computed, and its measured accuracy, is in docs/tpp_eltwise.md; in short:
// - exp: clamp to [-104, 89]; n = round(x log2 e); r = x - n ln2_hi - n ln2_lo (Cody-Waite, FMA);
//   e^r = 1 + r + r^2 P5(r) (minimax); scale by 2^(n>>1) then 2^(n - (n>>1)) so that overflow gives
//   inf and the denormal range is rounded once. NaN is carried by poisoning r.
// - sigmoid: E = e^-|x| (never overflows); 1/(1+E) for x >= 0, E/(1+E) for x < 0: no cancellation,
//   and denormal results come out of exp correctly.
// - tanh: |x| < 0.55: x + x^3 Q4(x^2) (no cancellation near 0); else sign(x) (1-E)/(1+E) with
//   E = e^-2|x| (saturates to +-1 exactly from |x| ~ 9).
// - gelu: x Phi(x) with Phi(-a) = 1/2 - a P5(a^2) for a = |x| < 0.8, else
//   Phi(-a) = e^(-a^2/2) M8(1/(a+3)) where a^2 is split exactly (h + l, FMA) so the large exponent
//   loses nothing, and M8 a minimax fit of the Mills ratio on [0.8, 15]; then x (1 - Phi(-a)) for
//   x >= 0 and x Phi(-a) for x < 0: no cancellation on either side. Phi(-a) is carried times 2^64
//   so it stays normal, and the x < 0 product is rounded once (denormal results included).
// Measured max relative errors over the whole float range: exp 7e-8, sigmoid 1.9e-7, tanh 1.6e-7,
// gelu 3.8e-7 (tests/tpp/activation_accuracy_test.cpp).
#pragma once

#include <span>
#include <string>

#include <xbyak/xbyak.h>

#include "activation_coefficients.hpp"
#include "op_properties.hpp"
#include "vec_traits.hpp"
#include "weft/jit/error.hpp"
#include "weft/tpp/unary.hpp"

namespace weft::tpp::detail {

// Switches over UnaryOp in this header list every op: a new op must state its instruction sequence
// (or that it has none) before anything compiles; its scratch registers are in op_properties.hpp.
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"

template <class Vmm>
class ActivationEmitter {
 public:
  ActivationEmitter(Xbyak::CodeGenerator& gen, ConstantTable& consts) : g_(gen), c_(consts) {}

  // x = op(x). Throws weft::Error for ops that are not element-wise or too few scratch registers.
  void emit(UnaryOp op, float alpha, const Vmm& x, std::span<const Vmm> scratch) {
    if (!is_elementwise(op)) {
      throw weft::Error("activation emitter: " + to_string(op) + " is not an element-wise op");
    }
    if (static_cast<int>(scratch.size()) < activation_scratch(op)) {
      throw weft::Error("activation emitter: " + to_string(op) + " needs " +
                        std::to_string(activation_scratch(op)) + " scratch registers, got " +
                        std::to_string(scratch.size()));
    }
    switch (op) {
      case UnaryOp::copy: return;
      case UnaryOp::relu: return relu(x, scratch[0]);
      case UnaryOp::square: g_.vmulps(x, x, x); return;
      case UnaryOp::reciprocal:
        g_.vmovaps(scratch[0], c_.splat(1.0f));
        g_.vdivps(x, scratch[0], x);
        return;
      case UnaryOp::sqrt: g_.vsqrtps(x, x); return;
      case UnaryOp::exp: return exp(x, scratch[0], scratch[1]);
      case UnaryOp::sigmoid: return sigmoid(x, scratch[0], scratch[1], scratch[2]);
      case UnaryOp::tanh: return tanh(x, scratch[0], scratch[1], scratch[2]);
      case UnaryOp::gelu: return gelu(x, scratch[0], scratch[1], scratch[2]);
      case UnaryOp::increment: g_.vaddps(x, x, c_.splat(alpha)); return;
      case UnaryOp::decrement: g_.vsubps(x, x, c_.splat(alpha)); return;
      case UnaryOp::scale: g_.vmulps(x, x, c_.splat(alpha)); return;
      // Not element-wise (is_elementwise rejected them above). Listed, with no default, so that
      // a new element-wise op without its sequence here is a compile error, never a silent copy.
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
    throw weft::Error("activation emitter: no instruction sequence for " + to_string(op));
  }

  // The ReLU predicate (x > 0 or NaN) as all-ones lanes in `pass`, for kernels that also need it as
  // a bit mask (Ymm only; Zmm kernels compare into an opmask themselves).
  void relu_predicate(const Vmm& pass, const Vmm& x) { g_.vcmpps(pass, x, c_.splat(0.0f), kNotLessEqualUnordered); }

 private:
  static constexpr int kLessThanOrdered = 1;
  static constexpr int kUnordered = 3;
  static constexpr int kNotLessEqualUnordered = 6;
  static constexpr bool kZmm = VecTraits<Vmm>::is_zmm;

  const Xbyak::Opmask& k7() const {
    static const Xbyak::Opmask k(7);
    return k;
  }

  void vand(const Vmm& d, const Vmm& a, const Xbyak::Operand& b) {
    if constexpr (kZmm) g_.vpandd(d, a, b); else g_.vandps(d, a, b);
  }
  void vor(const Vmm& d, const Vmm& a, const Xbyak::Operand& b) {
    if constexpr (kZmm) g_.vpord(d, a, b); else g_.vorps(d, a, b);
  }
  void round_nearest(const Vmm& d, const Vmm& s) {
    if constexpr (kZmm) g_.vrndscaleps(d, s, 0); else g_.vroundps(d, s, 0);
  }
  // d = sign bit of sel set ? when_set : when_clear.
  void select_by_sign(const Vmm& d, const Vmm& when_clear, const Vmm& when_set, const Vmm& sel) {
    if constexpr (kZmm) {
      g_.vptestmd(k7(), sel, c_.splat_bits(0x80000000u));
      g_.vblendmps(d | k7(), when_clear, when_set);
    } else {
      g_.vblendvps(d, when_clear, when_set, sel);
    }
  }
  // d = v < limit ? when_true : when_false; clobbers v.
  void select_less(const Vmm& d, const Vmm& when_false, const Vmm& when_true, const Vmm& v, float limit) {
    if constexpr (kZmm) {
      g_.vcmpps(k7(), v, c_.splat(limit), kLessThanOrdered);
      g_.vblendmps(d | k7(), when_false, when_true);
    } else {
      g_.vcmpps(v, v, c_.splat(limit), kLessThanOrdered);
      g_.vblendvps(d, when_false, when_true, v);
    }
  }

  void relu(const Vmm& x, const Vmm& t) {
    // max(x, 0) would turn NaN into 0 or -0 into -0; the predicate keeps NaN and gives +0 for -0.
    if constexpr (kZmm) {
      (void)t;
      g_.vcmpps(k7(), x, c_.splat(0.0f), kNotLessEqualUnordered);
      g_.vmovaps(x | k7() | Xbyak::util::T_z, x);
    } else {
      relu_predicate(t, x);
      g_.vandps(x, x, t);
    }
  }

  // Horner: acc = ((c[last] v + c[last-1]) v + ...) v + c[0].
  // Horner: acc = (((c[last] v + c[last-1]) v + ...) v + c[0]) * scale (scale a power of 2: exact).
  template <std::size_t K>
  void horner(const Vmm& acc, const Vmm& v, const float (&c)[K], float scale = 1.0f) {
    g_.vmovaps(acc, c_.splat(c[K - 1] * scale));
    for (std::size_t i = K - 1; i-- > 0;) g_.vfmadd213ps(acc, v, c_.splat(c[i] * scale));
  }

  // x = e^x * 2^bias; x is clamped to [lo, hi] first, so n + bias must stay within [-150, 129].
  void exp(const Vmm& x, const Vmm& t0, const Vmm& t1, float lo = act_coef::kExpLo,
           float hi = act_coef::kExpHi, int bias = 0) {
    using namespace act_coef;
    g_.vmaxps(t0, x, c_.splat(lo));  // NaN becomes lo here; r is poisoned below
    g_.vminps(t0, t0, c_.splat(hi));
    g_.vmulps(t1, t0, c_.splat(kLog2e));
    round_nearest(t1, t1);  // n
    g_.vfnmadd231ps(t0, t1, c_.splat(kLn2Hi));
    g_.vfnmadd231ps(t0, t1, c_.splat(kLn2Lo));  // r
    g_.vcvtps2dq(t1, t1);
    if (bias != 0) g_.vpaddd(t1, t1, c_.splat_int(bias));
    if constexpr (kZmm) {
      g_.vcmpps(k7(), x, x, kUnordered);
      g_.vaddps(t0 | k7(), x, x);
    } else {
      g_.vcmpps(x, x, x, kUnordered);
      g_.vorps(t0, t0, x);  // all-ones is a NaN
    }
    horner(x, t0, kExpP);
    g_.vfmadd213ps(x, t0, c_.splat(1.0f));
    g_.vfmadd213ps(x, t0, c_.splat(1.0f));  // e^r
    // 2^n in two factors, each a normal float for n in [-150, 129].
    g_.vpsrad(t0, t1, 1);
    g_.vpsubd(t1, t1, t0);
    g_.vpaddd(t0, t0, c_.splat_int(127));
    g_.vpslld(t0, t0, 23);
    g_.vmulps(x, x, t0);  // exact: stays normal
    g_.vpaddd(t1, t1, c_.splat_int(127));
    g_.vpslld(t1, t1, 23);
    g_.vmulps(x, x, t1);  // the one rounding (overflow -> inf, denormals rounded once)
  }

  void sigmoid(const Vmm& x, const Vmm& s0, const Vmm& s1, const Vmm& s2) {
    vor(s0, x, c_.splat_bits(0x80000000u));  // -|x|
    exp(s0, s1, s2);                          // E = e^-|x| in (0, 1]
    g_.vaddps(s1, s0, c_.splat(1.0f));
    g_.vmovaps(s2, c_.splat(1.0f));
    g_.vdivps(s2, s2, s1);   // 1 / (1 + E): sigmoid(|x|)
    g_.vmulps(s1, s0, s2);   // E / (1 + E): sigmoid(-|x|)
    select_by_sign(x, s2, s1, x);
  }

  void tanh(const Vmm& x, const Vmm& s0, const Vmm& s1, const Vmm& s2) {
    using namespace act_coef;
    vand(s0, x, c_.splat_bits(0x7fffffffu));
    g_.vmulps(s0, s0, c_.splat(-2.0f));
    exp(s0, s1, s2);  // E = e^-2|x|
    g_.vmovaps(s1, c_.splat(1.0f));
    g_.vsubps(s1, s1, s0);
    g_.vaddps(s0, s0, c_.splat(1.0f));
    g_.vdivps(s1, s1, s0);  // tanh(|x|) = (1 - E) / (1 + E)
    g_.vmulps(s0, x, x);
    horner(s2, s0, kTanhQ);
    g_.vmulps(s2, s2, s0);
    g_.vfmadd213ps(s2, x, x);  // x + x^3 Q(x^2)
    vand(s0, x, c_.splat_bits(0x80000000u));
    vor(s1, s1, s0);
    vor(s2, s2, s0);  // x + x^3 Q has the sign of x; this also keeps tanh(-0) = -0
    vand(s0, x, c_.splat_bits(0x7fffffffu));
    select_less(x, s1, s2, s0, kTanhSmall);
  }

  // s = min(|x|, clamp): NaN becomes the clamp, which is harmless because x itself carries the NaN
  // into the final product.
  void gelu_abs(const Vmm& s, const Vmm& x) {
    vand(s, x, c_.splat_bits(0x7fffffffu));
    g_.vminps(s, s, c_.splat(act_coef::kGeluClamp));
  }

  // Phi(-a) is carried scaled by 2^64 (exactly: exp's exponent bias and scaled coefficients) so
  // that it stays a normal float down to a = 15, and the x < 0 product is rounded once at the end,
  // also where it is denormal.
  void gelu(const Vmm& x, const Vmm& s0, const Vmm& s1, const Vmm& s2) {
    using namespace act_coef;
    // Large a: Phi(-a) = e^(-a^2/2) M(w). a^2 = h + l exactly; e^(-(h+l)/2) = e^(-h/2) (1 - l/2).
    gelu_abs(s0, x);
    g_.vmulps(s1, s0, s0);
    g_.vmulps(s1, s1, c_.splat(-0.5f));
    exp(s1, s0, s2, -0.5f * kGeluClamp * kGeluClamp - 1.0f, 0.0f, kGeluScaleLog2);
    gelu_abs(s0, x);
    g_.vmulps(s2, s0, s0);
    g_.vfmsub231ps(s2, s0, s0);  // l = a*a - h
    g_.vmulps(s2, s2, c_.splat(-0.5f));
    g_.vfmadd231ps(s1, s1, s2);  // e^(-a^2/2) 2^64
    g_.vaddps(s2, s0, c_.splat(kGeluShift));
    g_.vmovaps(s0, c_.splat(1.0f));
    g_.vdivps(s0, s0, s2);  // w
    horner(s2, s0, kMillsM);
    g_.vmulps(s1, s1, s2);  // Phi(-a) 2^64, large-a form
    // Small a: Phi(-a) 2^64 = 2^63 - a P(a^2) 2^64.
    vand(s0, x, c_.splat_bits(0x7fffffffu));
    g_.vmulps(s2, s0, s0);
    horner(s0, s2, kPhiP, kGeluScale);
    vand(s2, x, c_.splat_bits(0x7fffffffu));
    g_.vfnmadd213ps(s0, s2, c_.splat(0.5f * kGeluScale));
    select_less(s1, s1, s0, s2, kGeluSmall);  // s1 = Phi(-a) 2^64
    // x >= 0: 1 - Phi(-a), unscaled (>= 1/2); x < 0: Phi(-a) 2^64.
    g_.vmovaps(s0, c_.splat(1.0f));
    g_.vfnmadd231ps(s0, s1, c_.splat(1.0f / kGeluScale));
    select_by_sign(s1, s0, s1, x);
    // Below -15 the product is -0; clamping x there avoids -inf * 0. vmaxps returns its second
    // operand when either is NaN, so NaN survives.
    g_.vmovaps(s0, c_.splat(-kGeluClamp));
    g_.vmaxps(s0, s0, x);
    g_.vmulps(x, s0, s1);
    // Undo the scale where x < 0 (the product has the sign of x, -0 included): one rounding.
    g_.vmovaps(s0, c_.splat(1.0f));
    g_.vmovaps(s1, c_.splat(1.0f / kGeluScale));
    select_by_sign(s0, s0, s1, x);
    g_.vmulps(x, x, s0);
  }

  Xbyak::CodeGenerator& g_;
  ConstantTable& c_;
};

#pragma GCC diagnostic pop

}  // namespace weft::tpp::detail
