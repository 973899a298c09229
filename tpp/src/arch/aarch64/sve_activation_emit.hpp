// The SVE activation emitter: the transcendental element-wise ops (exp, sigmoid, tanh, gelu; f32)
// on one to four z registers at once, in place, with the SAME BITS as the Neon activation emitter
// (activation_emit.hpp), hence as the x86 kernels: per lane the same operations in the same order
// with the same roundings (fused where Neon fuses: fmla / fmls; the rest separate), the same
// coefficients (activation_coefficients.hpp). What differs is only how values move:
// - constants: fdup where the value is an fmov immediate and one register serves the group, else
//   ld1rw from a WordPool (4-byte entries after the code; ld1rw reaches 64 of them from one base);
// - Neon's mask selections (bsl / bit / bif on fcmgt or sshr #31 masks) are sel on a predicate:
//   fcmgt into a predicate, or "sign bit clear" as fcmeq #0.0 of the arithmetic shift by 31 (0 or
//   all ones: a NaN, never equal);
// - exp's scaling by 2^(n>>1) and 2^(n - (n>>1)) is fscale (Neon's exponent-bits powers are normal
//   numbers there: each product is rounded once either way);
// - SVE's destructive forms (fdiv, fmax, fmin): a constant first operand is loaded into each
//   vector's register, not copied there by a vector-pipe mov (exp's clamp as max(lo, x), FMAX
//   being commutative for a lo that is neither zero nor NaN); tanh's mov + fmla is one fmad (the
//   same fused operation); sigmoid's fabs + fneg one orr with the sign bit, its sign choice fcmlt #0
//   (different from the sign bit at -0 and NaN only, where both candidates hold the same bits).
// Lanes are computed under an all-true predicate: lanes past a tail compute anything.
//
// Contract: emit(op, xs, scratch, preds) transforms xs (1..kMaxVectors registers) in place;
// clobbers only the first scratch_vectors(op, xs.size()) registers of `scratch` and the first
// xs.size() predicates of `preds`; reads the pool base; no memory but the pool's.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "weft/jit/aarch64/assembler.hpp"
#include "weft/tpp/unary.hpp"

namespace weft::tpp::sve {

// 32-bit constants for ld1rw (ptr(base, 0..252)): at most 64 entries, deduplicated by bits.
class WordPool {
 public:
  std::int64_t bits32(std::uint32_t v);  // byte offset of the entry
  std::int64_t f32(float v);
  void load_base(jit::a64::Assembler& a, jit::a64::XReg base);  // adr base, <pool>
  void emit(jit::a64::Assembler& a);                              // after the last instruction

 private:
  std::vector<std::uint32_t> words_;
  std::map<std::uint32_t, std::int64_t> offsets_;
  jit::a64::Label label_;
  bool emitted_ = false;
};

class ActivationEmitter {
 public:
  static constexpr int kMaxVectors = 4;

  // all: an all-true predicate of the s lanes (p0..p7).
  ActivationEmitter(jit::a64::Assembler& a, WordPool& pool, jit::a64::XReg pool_base, jit::a64::PReg all);

  static bool covers(UnaryOp op);  // exp, sigmoid, tanh, gelu
  // exp: 3 per vector; sigmoid, tanh, gelu: 4. Throws weft::Error for another op.
  static int scratch_vectors(UnaryOp op, int vectors);

  void emit(UnaryOp op, std::span<const jit::a64::ZReg> xs, std::span<const jit::a64::ZReg> scratch,
            std::span<const jit::a64::PReg> preds);

 private:
  jit::a64::Assembler& a_;
  WordPool& pool_;
  jit::a64::XReg base_;
  jit::a64::PReg all_;
};

}  // namespace weft::tpp::sve
