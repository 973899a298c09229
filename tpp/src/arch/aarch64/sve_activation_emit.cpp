#include "sve_activation_emit.hpp"

#include <array>
#include <bit>
#include <cstddef>
#include <initializer_list>
#include <string>

#include "activation_coefficients.hpp"
#include "weft/jit/aarch64/immediates.hpp"
#include "weft/jit/error.hpp"

namespace weft::tpp::sve {

using namespace jit::a64;
namespace coef = detail::act_coef;

std::int64_t WordPool::bits32(std::uint32_t v) {
  if (emitted_) throw Error("sve word pool: an entry is asked for after the pool was emitted");
  const auto found = offsets_.find(v);
  if (found != offsets_.end()) return found->second;
  const auto offset = static_cast<std::int64_t>(words_.size()) * 4;
  if (offset > 252) throw Error("sve word pool: more than 64 entries (ld1rw reaches 252 bytes)");
  words_.push_back(v);
  offsets_.emplace(v, offset);
  return offset;
}

std::int64_t WordPool::f32(float v) { return bits32(std::bit_cast<std::uint32_t>(v)); }

void WordPool::load_base(Assembler& a, XReg base) { a.adr(base, label_); }

void WordPool::emit(Assembler& a) {
  if (emitted_) throw Error("sve word pool: emitted twice");
  emitted_ = true;
  a.bind(label_);
  for (std::uint32_t w : words_) a.data(w);
}

namespace {

// The registers of one value in each vector of a group, or one register they all read (as Neon's).
class Vs {
 public:
  static Vs per_vector(std::span<const ZReg> regs) {
    Vs v;
    for (std::size_t i = 0; i < regs.size(); ++i) v.regs_[i] = regs[i];
    return v;
  }
  static Vs shared(ZReg r) {
    Vs v;
    v.regs_[0] = r;
    v.shared_ = true;
    return v;
  }
  ZReg operator[](int i) const { return regs_[shared_ ? 0 : static_cast<std::size_t>(i)]; }
  bool is_shared() const { return shared_; }
  Vs first() const { return shared(regs_[0]); }

 private:
  std::array<ZReg, ActivationEmitter::kMaxVectors> regs_{z0, z0, z0, z0};
  bool shared_ = false;
};

// The per-vector predicates of a group (one each).
using Ps = std::span<const PReg>;

ZS s(ZReg r) { return r.s(); }

// The sequences of activation_emit.cpp's Sequences (exp, sigmoid, tanh, gelu), step for step; the
// comments there explain them. Here only what SVE does differently is commented.
class Sequences {
 public:
  Sequences(Assembler& a, WordPool& pool, XReg base, PReg all, int n)
      : a_(a), pool_(pool), base_(base), all_(all), n_(n) {}

  void exp(Vs x, Vs t0, Vs t1, Vs c, float lo = coef::kExpLo, float hi = coef::kExpHi, int bias = 0) {
    const Vs k = c.first();
    // t0 = max(lo, x): lo in each vector's t0 (a load, not a vector-pipe copy of x for the
    // destructive fmax). FMAX is commutative here: lo is neither zero nor NaN; a NaN x gives x
    // quieted either way.
    splat(t0, lo);
    fmax(t0, t0, x);
    splat(k, hi);
    fmin(t0, t0, k);
    splat(k, coef::kLog2e);
    fmul(t1, t0, k);
    each(t1, {t1}, [&](int i) { a_.frintn(s(t1[i]), all_.m(), s(t1[i])); });
    splat(k, coef::kLn2Hi);
    fmls(t0, t1, k);
    splat(k, coef::kLn2Lo);
    fmls(t0, t1, k);
    each(t1, {t1}, [&](int i) { a_.fcvtzs(s(t1[i]), all_.m(), s(t1[i])); });
    if (bias != 0) {
      if (bias < -128 || bias > 127) throw Error("sve activation emitter: internal: exp bias out of range");
      a_.dup(s(k[0]), bias);
      add(t1, t1, k);
    }
    const float p[8] = {1.0f, 1.0f, coef::kExpP[0], coef::kExpP[1], coef::kExpP[2],
                        coef::kExpP[3], coef::kExpP[4], coef::kExpP[5]};
    horner(x, c, t0, p);
    each(t0, {t1}, [&](int i) { a_.asr(s(t0[i]), s(t1[i]), 1); });
    sub(t1, t1, t0);
    // Neon multiplies by 2^(n>>1) and 2^(n - (n>>1)) built as exponent bits (shl #23, add 1.0's
    // bits): for n + bias in [-150, 129] both are normal floats, so each product is the exact
    // product rounded once, which is what fscale gives (and x NaN: x quieted; a power 2^0: x).
    fscale(x, t0);
    fscale(x, t1);
  }

  void sigmoid(Vs x, Vs s0, Vs s1, Vs s2, Vs s3, Ps p) {
    splat_bits32(s1.first(), 0x80000000u);
    orr(s0, x, s1.first());  // -|x| (Neon: fabs, fneg): the sign bit set, NaNs' payloads kept
    exp(s0, s1, s2, s3);
    const Vs one = s3.first();
    splat(one, 1.0);
    fadd(s1, s0, one);
    splat(s2, 1.0);  // each vector's dividend: fdiv is destructive
    fdiv(s2, s2, s1);
    fmul(s1, s0, s2);
    // Neon: bsl(x = sign mask, s1, s2). fcmlt #0 differs from the sign bit only at -0 (both are
    // 1/2 there: E = 1) and NaN (both are E's NaN, the input's quieted: the same bits).
    each_p(p, {x}, [&](int i) { a_.fcmlt(p[static_cast<std::size_t>(i)].s(), all_.z(), s(x[i]), 0.0); });
    sel(x, p, s1, s2);
  }

  void tanh(Vs x, Vs s0, Vs s1, Vs s2, Vs s3, Ps p) {
    fabs(s0, x);
    splat(s1.first(), -2.0);
    fmul(s0, s0, s1.first());
    exp(s0, s1, s2, s3);
    const Vs one = s3.first();
    splat(one, 1.0);
    fsub(s1, one, s0);
    fadd(s0, s0, one);
    fdiv(s1, s1, s0);
    fmul(s0, x, x);
    horner(s2, s3, s0, coef::kTanhQ);
    fmul(s2, s2, s0);
    // Neon: mov s3 = x; fmla s3 += s2 * x. fmad s2 = s2 * x + x is the same fused operation (addend
    // x, product s2 * x in that order), left in s2: s3 holds the constants from here.
    each(s2, {s2, x}, [&](int i) { a_.fmad(s(s2[i]), all_.m(), s(x[i]), s(x[i])); });
    const Vs k = s3.first();
    splat_bits32(k, 0x80000000u);
    and_(s0, x, k);
    orr(s1, s1, s0);
    orr(s2, s2, s0);
    fabs(x, x);
    splat(k, coef::kTanhSmall);
    each_p(p, {k, x}, [&](int i) { a_.fcmgt(p[static_cast<std::size_t>(i)].s(), all_.z(), s(k[i]), s(x[i])); });
    sel(x, p, s2, s1);  // Neon: bsl(x = |x| < 0.55 mask, s3, s1)
  }

  void gelu(Vs x, Vs s0, Vs s1, Vs s2, Vs s3, Ps p) {
    const float scale = coef::kGeluScale;
    gelu_abs(s0, x, s1.first());
    fmul(s1, s0, s0);
    splat(s2.first(), -0.5);
    fmul(s1, s1, s2.first());
    exp(s1, s0, s2, s3, -0.5f * coef::kGeluClamp * coef::kGeluClamp - 1.0f, 0.0f, coef::kGeluScaleLog2);
    gelu_abs(s0, x, s2.first());
    fmul(s2, s0, s0);
    fmls(s2, s0, s0);
    splat(s3.first(), 0.5);
    fmul(s2, s2, s3.first());
    fmla(s1, s1, s2);
    splat(s3.first(), coef::kGeluShift);
    fadd(s2, s0, s3.first());
    splat(s0, 1.0);  // each vector's dividend: fdiv is destructive
    fdiv(s0, s0, s2);
    horner(s2, s3, s0, coef::kMillsM);
    fmul(s1, s1, s2);
    fabs(s0, x);
    fmul(s2, s0, s0);
    horner(s0, s3, s2, coef::kPhiP, scale);
    fabs(s2, x);
    splat(s3, 0.5f * scale);
    fmls(s3, s0, s2);
    splat(s0, coef::kGeluSmall);
    each_p(p, {s0, s2}, [&](int i) { a_.fcmgt(p[static_cast<std::size_t>(i)].s(), all_.z(), s(s0[i]), s(s2[i])); });
    sel(s1, p, s3, s1);  // Neon: bit(s1, s3, s0 = a < 0.8 mask)
    splat(s0, 1.0);
    splat(s2.first(), 1.0f / scale);
    fmls(s0, s1, s2.first());
    sign_clear(p, s2, x);
    sel(s1, p, s0, s1);  // Neon: bif(s1, s0, s2 = sign mask)
    splat(s0, -coef::kGeluClamp);  // each vector's: fmax is destructive (-15 first, as Neon's)
    fmax(s0, s0, x);
    fmul(x, s0, s1);
    // Neon takes the sign of this product; it is the input's (max(-15, x) times s1 >= 0, never NaN
    // for a non-NaN x; a NaN x: its quieted NaN, the first operand's), so p still holds it.
    splat(s0.first(), 1.0);
    splat(s1.first(), 1.0f / scale);
    each(s2, {s0.first(), s1.first()},
         [&](int i) { a_.sel(s(s2[i]), p[static_cast<std::size_t>(i)], s(s0[0]), s(s1[0])); });
    fmul(x, x, s2);
  }

 private:
  // ---- one step, for every vector of the group -----------------------------------------------------
  void fmul(Vs d, Vs n, Vs m) { each(d, {n, m}, [&](int i) { a_.fmul(s(d[i]), s(n[i]), s(m[i])); }); }
  void fadd(Vs d, Vs n, Vs m) { each(d, {n, m}, [&](int i) { a_.fadd(s(d[i]), s(n[i]), s(m[i])); }); }
  void fsub(Vs d, Vs n, Vs m) { each(d, {n, m}, [&](int i) { a_.fsub(s(d[i]), s(n[i]), s(m[i])); }); }
  // The destructive forms: d = n op m, n copied into d first (d may not be m unless it is n).
  template <class Op>
  void destructive(Vs d, Vs n, Vs m, Op op) {
    each(d, {n, m}, [&](int i) {
      if (d[i].index != n[i].index) {
        if (d[i].index == m[i].index) throw Error("sve activation emitter: internal: destructive d = m");
        a_.mov(d[i].d(), n[i].d());
      }
      op(d[i], m[i]);
    });
  }
  void fdiv(Vs d, Vs n, Vs m) {
    destructive(d, n, m, [&](ZReg dd, ZReg mm) { a_.fdiv(s(dd), all_.m(), s(dd), s(mm)); });
  }
  void fmax(Vs d, Vs n, Vs m) {
    destructive(d, n, m, [&](ZReg dd, ZReg mm) { a_.fmax(s(dd), all_.m(), s(dd), s(mm)); });
  }
  void fmin(Vs d, Vs n, Vs m) {
    destructive(d, n, m, [&](ZReg dd, ZReg mm) { a_.fmin(s(dd), all_.m(), s(dd), s(mm)); });
  }
  void fmla(Vs d, Vs n, Vs m) { each(d, {d, n, m}, [&](int i) { a_.fmla(s(d[i]), all_.m(), s(n[i]), s(m[i])); }); }
  void fmls(Vs d, Vs n, Vs m) { each(d, {d, n, m}, [&](int i) { a_.fmls(s(d[i]), all_.m(), s(n[i]), s(m[i])); }); }
  void fabs(Vs d, Vs n) { each(d, {n}, [&](int i) { a_.fabs(s(d[i]), all_.m(), s(n[i])); }); }
  void add(Vs d, Vs n, Vs m) { each(d, {n, m}, [&](int i) { a_.add(s(d[i]), s(n[i]), s(m[i])); }); }
  void sub(Vs d, Vs n, Vs m) { each(d, {n, m}, [&](int i) { a_.sub(s(d[i]), s(n[i]), s(m[i])); }); }
  void fscale(Vs x, Vs e) { each(x, {x, e}, [&](int i) { a_.fscale(s(x[i]), all_.m(), s(x[i]), s(e[i])); }); }
  void and_(Vs d, Vs n, Vs m) { each(d, {n, m}, [&](int i) { a_.and_(d[i].d(), n[i].d(), m[i].d()); }); }
  void orr(Vs d, Vs n, Vs m) { each(d, {n, m}, [&](int i) { a_.orr(d[i].d(), n[i].d(), m[i].d()); }); }
  // d = p ? n : m per vector.
  void sel(Vs d, Ps p, Vs n, Vs m) {
    each(d, {n, m}, [&](int i) { a_.sel(s(d[i]), p[static_cast<std::size_t>(i)], s(n[i]), s(m[i])); });
  }
  // p = the lanes of x whose sign bit is clear (t: scratch, the arithmetic shift by 31: +0 or all
  // ones, a NaN, which compares unequal to 0). Neon's sign mask (sshr #31) is t itself.
  void sign_clear(Ps p, Vs t, Vs x) {
    each(t, {x}, [&](int i) { a_.asr(s(t[i]), s(x[i]), 31); });
    each_p(p, {t}, [&](int i) { a_.fcmeq(p[static_cast<std::size_t>(i)].s(), all_.z(), s(t[i]), 0.0); });
  }

  template <class Emit>
  void each(Vs d, std::initializer_list<Vs> sources, Emit emit) {
    if (d.is_shared()) throw Error("sve activation emitter: internal: a shared register as a step's result");
    for (int i = 0; i < n_; ++i) {
      for (const Vs& src : sources) {
        for (int j = i + 1; j < n_; ++j) {
          if (d[i].index == src[j].index) {
            throw Error("sve activation emitter: internal: vector " + std::to_string(i) + " overwrites z" +
                        std::to_string(d[i].index) + ", which vector " + std::to_string(j) + " still reads");
          }
        }
      }
      emit(i);
    }
  }
  template <class Emit>
  void each_p(Ps, std::initializer_list<Vs>, Emit emit) {
    for (int i = 0; i < n_; ++i) emit(i);
  }

  void splat(Vs d, double value) {
    const auto f = static_cast<float>(value);
    if (d.is_shared() && jit::a64::encode_fp_imm8(static_cast<double>(f))) {
      a_.fdup(s(d[0]), static_cast<double>(f));
      return;
    }
    const std::int64_t entry = pool_.f32(f);
    for (int i = 0; i < (d.is_shared() ? 1 : n_); ++i) a_.ld1rw(s(d[i]), all_.z(), ptr(base_, entry));
  }
  void splat(Vs d, float value) { splat(d, static_cast<double>(value)); }
  void splat_bits32(Vs k, std::uint32_t bits) { a_.ld1rw(s(k[0]), all_.z(), ptr(base_, pool_.bits32(bits))); }

  void gelu_abs(Vs sv, Vs x, Vs k) {
    fabs(sv, x);
    splat(k, coef::kGeluClamp);
    fmin(sv, sv, k);
  }

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
  WordPool& pool_;
  XReg base_;
  PReg all_;
  int n_;
};

}  // namespace

ActivationEmitter::ActivationEmitter(Assembler& a, WordPool& pool, XReg pool_base, PReg all)
    : a_(a), pool_(pool), base_(pool_base), all_(all) {}

bool ActivationEmitter::covers(UnaryOp op) {
  return op == UnaryOp::exp || op == UnaryOp::sigmoid || op == UnaryOp::tanh || op == UnaryOp::gelu;
}

int ActivationEmitter::scratch_vectors(UnaryOp op, int vectors) {
  if (!covers(op)) throw Error("sve activation emitter: no sequence for " + to_string(op));
  if (vectors < 1 || vectors > kMaxVectors) {
    throw Error("sve activation emitter: " + std::to_string(vectors) + " vectors at once: 1 to " +
                std::to_string(kMaxVectors));
  }
  return (op == UnaryOp::exp ? 3 : 4) * vectors;
}

void ActivationEmitter::emit(UnaryOp op, std::span<const ZReg> xs, std::span<const ZReg> scratch,
                             std::span<const PReg> preds) {
  const int n = static_cast<int>(xs.size());
  const int need = scratch_vectors(op, n);
  if (static_cast<int>(scratch.size()) < need || static_cast<int>(preds.size()) < n) {
    throw Error("sve activation emitter: " + to_string(op) + " on " + std::to_string(n) + " vectors needs " +
                std::to_string(need) + " scratch registers and " + std::to_string(n) + " predicates");
  }
  Sequences q(a_, pool_, base_, all_, n);
  const Vs x = Vs::per_vector(xs);
  auto slot = [&](int k) {
    return Vs::per_vector(scratch.subspan(static_cast<std::size_t>(k * n), static_cast<std::size_t>(n)));
  };
  const Ps p = preds.subspan(0, static_cast<std::size_t>(n));
  switch (op) {
    case UnaryOp::exp: return q.exp(x, slot(0), slot(1), slot(2));
    case UnaryOp::sigmoid: return q.sigmoid(x, slot(0), slot(1), slot(2), slot(3), p);
    case UnaryOp::tanh: return q.tanh(x, slot(0), slot(1), slot(2), slot(3), p);
    case UnaryOp::gelu: return q.gelu(x, slot(0), slot(1), slot(2), slot(3), p);
    default: break;
  }
  throw Error("sve activation emitter: no sequence for " + to_string(op));
}

}  // namespace weft::tpp::sve
