#include "activation_emit.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

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

// The registers of one value in each vector of a group (1..kMaxVectors vectors transformed
// together): one register per vector, or one register all of them read (a constant, loaded once for
// the group).
class Vs {
 public:
  static Vs per_vector(std::span<const VReg> regs) {
    Vs v;
    for (std::size_t i = 0; i < regs.size(); ++i) v.regs_[i] = regs[i];
    return v;
  }
  static Vs shared(VReg r) {
    Vs v;
    v.regs_[0] = r;
    v.shared_ = true;
    return v;
  }
  VReg operator[](int i) const { return regs_[shared_ ? 0 : static_cast<std::size_t>(i)]; }
  bool is_shared() const { return shared_; }
  // The first vector's register, as one the whole group reads: where no vector's value in this
  // slot is live, its first register holds a constant for all of them.
  Vs first() const { return shared(regs_[0]); }

 private:
  std::array<VReg, ActivationEmitter::kMaxVectors> regs_{v0, v0, v0, v0};
  bool shared_ = false;
};

// The element-wise ops' sequences, on a group of n vectors. Each step of a sequence (one helper
// call below) is emitted for every vector before the next step, so the vectors' dependency chains
// interleave; a constant that is only read goes into one shared register, loaded once per step. The
// operations on each lane, and their order, do not depend on n: n = 1 is the single-vector form.
// Registers are VReg; the arrangement (4s or 2d) is chosen per instruction by the helpers below, so
// each sequence is written once for both types where it exists in both.
class Sequences {
 public:
  Sequences(Assembler& a, ConstantPool& pool, XReg base, bool f64, int n)
      : a_(a), pool_(pool), base_(base), f64_(f64), n_(n) {}

  // ---- the ops -----------------------------------------------------------------------------------

  // x > 0 or NaN: x (its bits, a signalling NaN too); else +0. fcmle is false for NaN.
  void relu(Vs x, Vs t) {
    each(t, {x}, [&](int i) { f64_ ? a_.fcmle(t[i].d2(), x[i].d2(), 0.0) : a_.fcmle(t[i].s4(), x[i].s4(), 0.0); });
    bic(x, x, t);
  }

  // k: one register (shared).
  void reciprocal(Vs x, Vs k) {
    splat(k, 1.0);
    fdiv(x, k, x);
  }

  // x = x + alpha, x - alpha, x * alpha (alpha a float, exactly a double in f64); k: one register.
  void with_alpha(UnaryOp op, Vs x, Vs k, float alpha) {
    splat(k, static_cast<double>(alpha));
    if (op == UnaryOp::increment) fadd(x, x, k);
    else if (op == UnaryOp::decrement) fsub(x, x, k);
    else fmul(x, x, k);
  }

  // x = e^x * 2^bias (f32), in place; x is clamped to [lo, hi] first, so n + bias stays within
  // [-150, 129]. The sequence of the x86 emitter's exp, operation for operation. c's first
  // register holds the constants the group shares; the Horner steps use all of c.
  void exp(Vs x, Vs t0, Vs t1, Vs c, float lo = coef::kExpLo, float hi = coef::kExpHi, int bias = 0) {
    const Vs k = c.first();
    splat(k, lo);
    fmax(t0, x, k);  // a NaN stays NaN (x86's vmaxps drops it and poisons r instead)
    splat(k, hi);
    fmin(t0, t0, k);
    splat(k, coef::kLog2e);
    fmul(t1, t0, k);
    each(t1, {t1}, [&](int i) { a_.frintn(t1[i].s4(), t1[i].s4()); });  // n, to nearest even as vroundps(0)
    splat(k, coef::kLn2Hi);
    fmls(t0, t1, k);
    splat(k, coef::kLn2Lo);
    fmls(t0, t1, k);                                                     // r
    each(t1, {t1}, [&](int i) { a_.fcvtzs(t1[i].s4(), t1[i].s4()); });  // n as an integer (exact: n is integral; NaN gives 0)
    if (bias != 0) {
      splat_bits32(k, static_cast<std::uint32_t>(bias));
      add(t1, t1, k);
    }
    // e^r = 1 + r (1 + r P(r)): Horner over {1, 1, P0..P5}, as x86's horner + two FMAs with 1.
    const float p[8] = {1.0f, 1.0f, coef::kExpP[0], coef::kExpP[1], coef::kExpP[2],
                        coef::kExpP[3], coef::kExpP[4], coef::kExpP[5]};
    horner(x, c, t0, p);
    // 2^n in two factors 2^(n>>1) and 2^(n - (n>>1)), each a normal float for n in [-150, 129]:
    // the first product is exact, the second rounds once (overflow -> inf, denormals rounded once).
    each(t0, {t1}, [&](int i) { a_.sshr(t0[i].s4(), t1[i].s4(), 1); });
    sub(t1, t1, t0);
    splat(k, 1.0);  // the bits of 1.0f are 127 << 23: the exponent bias, in place
    shl23(t0);
    add(t0, t0, k);
    fmul(x, x, t0);
    shl23(t1);
    add(t1, t1, k);
    fmul(x, x, t1);
  }

  // E = e^-|x|; 1/(1+E) for x >= 0, E/(1+E) for x < 0 (by the sign bit, as vblendvps).
  void sigmoid(Vs x, Vs s0, Vs s1, Vs s2, Vs s3) {
    fabs(s0, x);
    each(s0, {s0}, [&](int i) { a_.fneg(s0[i].s4(), s0[i].s4()); });  // -|x|: the sign bit set, as x86's or
    exp(s0, s1, s2, s3);                                                // E in (0, 1]
    const Vs one = s3.first();
    splat(one, 1.0);
    fadd(s1, s0, one);
    fdiv(s2, one, s1);  // sigmoid(|x|)
    fmul(s1, s0, s2);   // sigmoid(-|x|)
    sign_mask(x, x);
    bsl(x, s1, s2);
  }

  // |x| < 0.55: x + x^3 Q(x^2); else sign(x) (1 - E)/(1 + E), E = e^-2|x|.
  void tanh(Vs x, Vs s0, Vs s1, Vs s2, Vs s3) {
    fabs(s0, x);
    splat(s1.first(), -2.0);
    fmul(s0, s0, s1.first());
    exp(s0, s1, s2, s3);  // E
    const Vs one = s3.first();
    splat(one, 1.0);
    fsub(s1, one, s0);
    fadd(s0, s0, one);
    fdiv(s1, s1, s0);  // tanh(|x|)
    fmul(s0, x, x);
    horner(s2, s3, s0, coef::kTanhQ);
    fmul(s2, s2, s0);
    each(s3, {x}, [&](int i) { a_.mov(s3[i].b16(), x[i].b16()); });
    fmla(s3, s2, x);  // x + x^3 Q (x86: s2 * x + x)
    const Vs k = s2.first();
    a_.movi(k[0].s4(), 0x80, lsl(24));
    and_(s0, x, k);  // x's sign bit
    orr(s1, s1, s0);
    orr(s3, s3, s0);  // also keeps tanh(-0) = -0
    fabs(x, x);
    splat(k, coef::kTanhSmall);
    fcmgt(x, k, x);  // |x| < 0.55 (false for NaN)
    bsl(x, s3, s1);
  }

  // x Phi(x): see the x86 emitter and docs/tpp_eltwise.md. Phi(-a) is carried times 2^64.
  void gelu(Vs x, Vs s0, Vs s1, Vs s2, Vs s3) {
    const float scale = coef::kGeluScale;
    // Large a: Phi(-a) = e^(-a^2/2) M(w); a^2 = h + l exactly, e^(-(h+l)/2) = e^(-h/2) (1 - l/2).
    gelu_abs(s0, x, s1.first());
    fmul(s1, s0, s0);
    splat(s2.first(), -0.5);
    fmul(s1, s1, s2.first());
    exp(s1, s0, s2, s3, -0.5f * coef::kGeluClamp * coef::kGeluClamp - 1.0f, 0.0f, coef::kGeluScaleLog2);
    gelu_abs(s0, x, s2.first());
    fmul(s2, s0, s0);
    fmls(s2, s0, s0);  // h - a*a = -l, exactly
    splat(s3.first(), 0.5);
    fmul(s2, s2, s3.first());  // -l/2 (x86: (a*a - h) * -0.5)
    fmla(s1, s1, s2);          // e^(-a^2/2) 2^64
    splat(s3.first(), coef::kGeluShift);
    fadd(s2, s0, s3.first());
    splat(s3.first(), 1.0);
    fdiv(s0, s3.first(), s2);  // w
    horner(s2, s3, s0, coef::kMillsM);
    fmul(s1, s1, s2);  // Phi(-a) 2^64, large-a form
    // Small a: Phi(-a) 2^64 = 2^63 - a P(a^2) 2^64.
    fabs(s0, x);
    fmul(s2, s0, s0);
    horner(s0, s3, s2, coef::kPhiP, scale);
    fabs(s2, x);
    splat(s3, 0.5f * scale);  // per vector: the addend fmls accumulates into
    fmls(s3, s0, s2);
    splat(s0, coef::kGeluSmall);  // per vector: no register is free for a shared one
    fcmgt(s0, s0, s2);            // a < 0.8
    bit(s1, s3, s0);              // s1 = Phi(-a) 2^64
    // x >= 0: 1 - Phi(-a), unscaled (>= 1/2); x < 0: Phi(-a) 2^64.
    splat(s0, 1.0);
    splat(s2.first(), 1.0f / scale);
    fmls(s0, s1, s2.first());
    sign_mask(s2, x);
    bif(s1, s0, s2);
    // Below -15 the product is -0; clamping x there avoids -inf * 0. fmax keeps a NaN x.
    splat(s3.first(), -coef::kGeluClamp);
    fmax(s0, s3.first(), x);
    fmul(x, s0, s1);
    // Undo the scale where x < 0 (the product has the sign of x, -0 included): one rounding.
    sign_mask(s2, x);
    splat(s0.first(), 1.0);
    splat(s1.first(), 1.0f / scale);
    bsl(s2, s1.first(), s0.first());
    fmul(x, x, s2);
  }

  // ---- one step, for every vector of the group -----------------------------------------------------

  void fmul(Vs d, Vs n, Vs m) {
    each(d, {n, m}, [&](int i) { f64_ ? a_.fmul(d[i].d2(), n[i].d2(), m[i].d2()) : a_.fmul(d[i].s4(), n[i].s4(), m[i].s4()); });
  }
  void fadd(Vs d, Vs n, Vs m) {
    each(d, {n, m}, [&](int i) { f64_ ? a_.fadd(d[i].d2(), n[i].d2(), m[i].d2()) : a_.fadd(d[i].s4(), n[i].s4(), m[i].s4()); });
  }
  void fsub(Vs d, Vs n, Vs m) {
    each(d, {n, m}, [&](int i) { f64_ ? a_.fsub(d[i].d2(), n[i].d2(), m[i].d2()) : a_.fsub(d[i].s4(), n[i].s4(), m[i].s4()); });
  }
  void fdiv(Vs d, Vs n, Vs m) {
    each(d, {n, m}, [&](int i) { f64_ ? a_.fdiv(d[i].d2(), n[i].d2(), m[i].d2()) : a_.fdiv(d[i].s4(), n[i].s4(), m[i].s4()); });
  }
  void fsqrt(Vs x) {
    each(x, {x}, [&](int i) { f64_ ? a_.fsqrt(x[i].d2(), x[i].d2()) : a_.fsqrt(x[i].s4(), x[i].s4()); });
  }

 private:
  // f32 only (the transcendentals).
  void fmax(Vs d, Vs n, Vs m) { each(d, {n, m}, [&](int i) { a_.fmax(d[i].s4(), n[i].s4(), m[i].s4()); }); }
  void fmin(Vs d, Vs n, Vs m) { each(d, {n, m}, [&](int i) { a_.fmin(d[i].s4(), n[i].s4(), m[i].s4()); }); }
  void fcmgt(Vs d, Vs n, Vs m) { each(d, {n, m}, [&](int i) { a_.fcmgt(d[i].s4(), n[i].s4(), m[i].s4()); }); }
  void fmla(Vs d, Vs n, Vs m) { each(d, {d, n, m}, [&](int i) { a_.fmla(d[i].s4(), n[i].s4(), m[i].s4()); }); }
  void fmls(Vs d, Vs n, Vs m) { each(d, {d, n, m}, [&](int i) { a_.fmls(d[i].s4(), n[i].s4(), m[i].s4()); }); }
  void fabs(Vs d, Vs n) { each(d, {n}, [&](int i) { a_.fabs(d[i].s4(), n[i].s4()); }); }
  void add(Vs d, Vs n, Vs m) { each(d, {n, m}, [&](int i) { a_.add(d[i].s4(), n[i].s4(), m[i].s4()); }); }
  void sub(Vs d, Vs n, Vs m) { each(d, {n, m}, [&](int i) { a_.sub(d[i].s4(), n[i].s4(), m[i].s4()); }); }
  void shl23(Vs x) { each(x, {x}, [&](int i) { a_.shl(x[i].s4(), x[i].s4(), 23); }); }
  // All ones in the lanes whose sign bit is set (a NaN's too, as vblendvps reads it).
  void sign_mask(Vs d, Vs x) { each(d, {x}, [&](int i) { a_.sshr(d[i].s4(), x[i].s4(), 31); }); }
  // Bitwise (any arrangement).
  void and_(Vs d, Vs n, Vs m) { each(d, {n, m}, [&](int i) { a_.and_(d[i].b16(), n[i].b16(), m[i].b16()); }); }
  void orr(Vs d, Vs n, Vs m) { each(d, {n, m}, [&](int i) { a_.orr(d[i].b16(), n[i].b16(), m[i].b16()); }); }
  void bic(Vs d, Vs n, Vs m) { each(d, {n, m}, [&](int i) { a_.bic(d[i].b16(), n[i].b16(), m[i].b16()); }); }
  void bsl(Vs d, Vs n, Vs m) { each(d, {d, n, m}, [&](int i) { a_.bsl(d[i].b16(), n[i].b16(), m[i].b16()); }); }
  void bit(Vs d, Vs n, Vs m) { each(d, {d, n, m}, [&](int i) { a_.bit(d[i].b16(), n[i].b16(), m[i].b16()); }); }
  void bif(Vs d, Vs n, Vs m) { each(d, {d, n, m}, [&](int i) { a_.bif(d[i].b16(), n[i].b16(), m[i].b16()); }); }

  // emit(i) for each vector i of the group, in order. A result may not overwrite a register a later
  // vector of the same step still reads (a shared constant in the slot being written): that would
  // be a mistake in the sequences above, caught here for every group size the tests emit.
  template <class Emit>
  void each(Vs d, std::initializer_list<Vs> sources, Emit emit) {
    if (d.is_shared()) throw Error("neon activation emitter: internal: a shared register as a step's result");
    for (int i = 0; i < n_; ++i) {
      for (const Vs& s : sources) {
        for (int j = i + 1; j < n_; ++j) {
          if (d[i].index == s[j].index) {
            throw Error("neon activation emitter: internal: vector " + std::to_string(i) + " overwrites v" +
                        std::to_string(d[i].index) + ", which vector " + std::to_string(j) + " still reads");
          }
        }
      }
      emit(i);
    }
  }

  // Every lane = value, in the shared register or in each vector's. A shared constant is fmov #imm
  // when the value is one of its immediates (one vector-pipe instruction for the group), else a pool
  // entry; each vector's own copy (an addend that fmla accumulates into) is always a pool entry: the
  // loads go to the load pipes, idle beside the vector pipes the sequences keep busy.
  void splat(Vs d, double value) {
    if (!f64_) value = static_cast<float>(value);
    if (d.is_shared() && jit::a64::encode_fp_imm8(value)) {
      f64_ ? a_.fmov(d[0].d2(), value) : a_.fmov(d[0].s4(), value);
      return;
    }
    const std::int64_t entry = f64_ ? pool_.f64(value) : pool_.f32(static_cast<float>(value));
    for (int i = 0; i < (d.is_shared() ? 1 : n_); ++i) a_.ldr(d[i].qreg(), ptr(base_, entry));
  }
  void splat(Vs d, float value) { splat(d, static_cast<double>(value)); }
  void splat_bits32(Vs k, std::uint32_t bits) {
    if (bits <= 0xff) {
      a_.movi(k[0].s4(), bits);
      return;
    }
    a_.ldr(k[0].qreg(), ptr(base_, pool_.bits32(bits)));
  }

  // s = min(|x|, 15); a NaN stays NaN (x itself carries it into the final product anyway).
  void gelu_abs(Vs s, Vs x, Vs k) {
    fabs(s, x);
    splat(k, coef::kGeluClamp);
    fmin(s, s, k);
  }

  // result = (((c[K-1] v + c[K-2]) v + ...) v + c[0]) with each coefficient times `scale` (a power
  // of 2: exact). Each step is fmla into the registers just loaded with the next coefficient (x86's
  // acc = acc * v + c, the same fused operation; the addend is the result, so each vector loads its
  // own), so the steps alternate between `result` and `other`, starting where the last step lands
  // in `result`. The highest coefficient is only read: one register (the first of its slot, whose
  // vectors' registers the second step writes) for the group.
  template <std::size_t K>
  void horner(Vs result, Vs other, Vs v, const float (&c)[K], float scale = 1.0f) {
    const std::size_t steps = K - 1;
    bool in_result = steps % 2 == 0;
    Vs acc = (in_result ? result : other).first();
    splat(acc, c[K - 1] * scale);
    for (std::size_t i = K - 1; i-- > 0;) {
      const Vs next = in_result ? other : result;
      splat(next, c[i] * scale);
      fmla(next, acc, v);
      acc = next;
      in_result = !in_result;
    }
  }

  Assembler& a_;
  ConstantPool& pool_;
  XReg base_;
  bool f64_;
  int n_;  // vectors in the group
};

// The scratch registers of each op for a group of n vectors, or -1 where emit() has no sequence
// (f64: only the ops with f64 kernels). Registers per vector where each vector keeps values of its
// own; one for the group where the op only needs a constant.
int scratch_or_none(UnaryOp op, bool f64, int n) {
  switch (op) {
    case UnaryOp::copy:
    case UnaryOp::square:
    case UnaryOp::sqrt: return 0;
    case UnaryOp::relu: return n;
    case UnaryOp::reciprocal:
    case UnaryOp::increment:
    case UnaryOp::decrement:
    case UnaryOp::scale: return 1;
    case UnaryOp::exp: return f64 ? -1 : 3 * n;
    case UnaryOp::sigmoid:
    case UnaryOp::tanh:
    case UnaryOp::gelu: return f64 ? -1 : 4 * n;
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

int ActivationEmitter::scratch_vectors(UnaryOp op, DataType compute, int vectors) {
  const bool f64 = is_f64(op, compute);
  if (vectors < 1 || vectors > kMaxVectors) {
    throw Error("neon activation emitter: " + to_string(op) + " on " + std::to_string(vectors) +
                " vectors at once: 1 to " + std::to_string(kMaxVectors));
  }
  const int need = scratch_or_none(op, f64, vectors);
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
  emit(op, alpha, std::span<const VReg>(&x, 1), scratch, compute);
}

void ActivationEmitter::emit(UnaryOp op, float alpha, std::span<const VReg> xs, std::span<const VReg> scratch,
                             DataType compute) {
  const int n = static_cast<int>(xs.size());
  const int need = scratch_vectors(op, compute, n);
  if (static_cast<int>(scratch.size()) < need) {
    throw Error("neon activation emitter: " + to_string(op) + " on " + std::to_string(n) + " vectors needs " +
                std::to_string(need) + " scratch registers, got " + std::to_string(scratch.size()));
  }
  // The operands, then the scratch registers in use: each register once.
  std::vector<VReg> used(xs.begin(), xs.end());
  used.insert(used.end(), scratch.begin(), scratch.begin() + need);
  for (std::size_t i = 0; i < used.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (used[j].index == used[i].index) {
        throw Error("neon activation emitter: " + to_string(op) + ": v" + std::to_string(used[i].index) +
                    (i < xs.size() ? " is given twice as an operand" : " is an operand or given twice as scratch"));
      }
    }
  }
  Sequences s(a_, pool_, base_, compute == DataType::f64, n);
  const Vs x = Vs::per_vector(xs);
  // Slot k: scratch[k n .. k n + n), one register per vector (n = 1: scratch[k], as listed).
  auto slot = [&](int k) { return Vs::per_vector(scratch.subspan(static_cast<std::size_t>(k * n), static_cast<std::size_t>(n))); };
  const auto one = [&] { return Vs::shared(scratch[0]); };
  switch (op) {
    case UnaryOp::copy: return;
    case UnaryOp::relu: return s.relu(x, slot(0));
    case UnaryOp::square: return s.fmul(x, x, x);
    case UnaryOp::reciprocal: return s.reciprocal(x, one());
    case UnaryOp::sqrt: return s.fsqrt(x);
    case UnaryOp::exp: return s.exp(x, slot(0), slot(1), slot(2));
    case UnaryOp::sigmoid: return s.sigmoid(x, slot(0), slot(1), slot(2), slot(3));
    case UnaryOp::tanh: return s.tanh(x, slot(0), slot(1), slot(2), slot(3));
    case UnaryOp::gelu: return s.gelu(x, slot(0), slot(1), slot(2), slot(3));
    case UnaryOp::increment:
    case UnaryOp::decrement:
    case UnaryOp::scale: return s.with_alpha(op, x, one(), alpha);
    default: break;  // scratch_vectors() threw for every other op
  }
  throw Error("neon activation emitter: no instruction sequence for " + to_string(op));
}

}  // namespace weft::tpp::neon
