// The Neon activation emitter: one instruction sequence per element-wise op, applied in place to
// one vector register or to a group of up to four, interleaved. The unary kernels use it for their element-wise ops and the BRGEMM epilogue
// for its fused activation, so both compute the same bits. It is the port of the x86 emitter
// (tpp/src/arch/x64/activation_emit.hpp): the same algorithms, coefficients
// (activation_coefficients.hpp) and FMA sequence, so the results are those of the x86 kernels.
//
//   ConstantPool pool;                                  // one per kernel
//   pool.load_base(a, x15);                             // in the prologue
//   ActivationEmitter act(a, pool, x15);
//   const VReg scratch[] = {v28, v29, v30, v31};
//   int need = ActivationEmitter::scratch_vectors(UnaryOp::gelu, jit::DataType::f32);  // 4
//   act.emit(UnaryOp::gelu, 0.0f, v0, scratch, jit::DataType::f32);  // v0 = gelu(v0); v28-v31 clobbered
//   const VReg xs[] = {v0, v1, v2, v3};                 // four vectors at once:
//   need = ActivationEmitter::scratch_vectors(UnaryOp::gelu, jit::DataType::f32, 4);  // 16
//   act.emit(UnaryOp::gelu, 0.0f, xs, sixteen_scratch, jit::DataType::f32);
//   ...
//   a.ret();
//   pool.emit(a);                                       // the constants go after the code
//
// Contract:
// - `x` is transformed in place (4 floats, or 2 doubles for compute f64); only the first
//   scratch_vectors(op, compute) registers of `scratch` are clobbered: no general register (the
//   pool base is read), no memory but the pool's (read), no flags.
// - Several vectors at once (up to kMaxVectors): emit(op, alpha, xs, scratch, compute) applies the
//   same sequence to each, its steps interleaved (step s for xs[0], xs[1], ... before step s + 1),
//   so that the vectors' long dependency chains overlap in the core's window instead of following
//   each other. Per lane it is the same operations in the same order: the same bits as one vector
//   at a time. Constants that are only read (clamps, ln 2, masks, a Horner sum's first coefficient)
//   go into one register for the group; addends that an fmla accumulates into (Horner's other
//   coefficients) are loaded per vector. The one-vector emit() is this with a group of one.
// - Ops: is_elementwise(op) (copy, relu, square, reciprocal, sqrt, exp, sigmoid, tanh, gelu,
//   increment, decrement, scale); `alpha` is the constant of the last three (converted exactly to
//   double in f64). Compute f64: the ops with f64 kernels (op_properties.hpp: all but the four
//   transcendentals). Anything else, too few scratch registers, or a scratch register that is an
//   operand or repeated throws weft::Error.
// - Scratch registers (f32 and f64 alike) for n vectors: copy, square, sqrt: 0; reciprocal,
//   increment, decrement, scale: 1 (the constant, shared); relu: n; exp: 3n; sigmoid, tanh, gelu: 4n.
//   (More than x86's: constants are loaded into a register where x86 takes a memory operand.)
//
// How it differs from x86, and why the results do not:
// - Constants come from the ConstantPool (ldr q from pool_base + offset), or fmov #imm where the
//   value is one of its immediates (1.0, 0.5, -2.0, 3.0, 15.0, ...).
// - FMA: x86's acc = acc * v + c is fmla into the register holding c (the same fused operation),
//   so Horner alternates between two registers; a - b * c is fmls.
// - Selections are compare masks (fcmgt, or sshr #31 for the sign bit, as vblendvps reads it)
//   with bsl / bit / bif.
// - relu is fcmle #0 + bic: fmax(x, 0) would give the same values, but it quiets a signalling NaN,
//   whose bits relu must keep (bf16 selects_input ops store the input's bits).
// - exp: fmax / fmin propagate a NaN where x86's clamp loses it, so the NaN reaches r by itself
//   (x86 poisons r with the unordered mask). NaN results are NaN; their payload is not specified.
#pragma once

#include <span>

#include "constant_pool.hpp"
#include "weft/jit/aarch64/assembler.hpp"
#include "weft/jit/data_type.hpp"
#include "weft/tpp/unary.hpp"

namespace weft::tpp::neon {

class ActivationEmitter {
 public:
  ActivationEmitter(jit::a64::Assembler& a, ConstantPool& pool, jit::a64::XReg pool_base);

  // The most vectors one emit() transforms together.
  static constexpr int kMaxVectors = 4;

  // x = op(x) on 4 floats (compute f32) or 2 doubles (compute f64). Clobbers only the first
  // scratch_vectors(op, compute) registers of `scratch`, no general register, no memory.
  void emit(UnaryOp op, float alpha, jit::a64::VReg x, std::span<const jit::a64::VReg> scratch,
            jit::DataType compute);

  // xs[i] = op(xs[i]) for 1..kMaxVectors vectors, each lane with the same operations in the same
  // order as the single-vector form (which is this with one vector), so with the same bits. The
  // instructions are interleaved step by step (each step of the sequence for every vector before
  // the next), so the vectors' dependency chains overlap, and a constant that is only read is loaded
  // once for all of them. Clobbers only the first scratch_vectors(op, compute, xs.size()) registers
  // of `scratch`, no general register, no memory.
  void emit(UnaryOp op, float alpha, std::span<const jit::a64::VReg> xs, std::span<const jit::a64::VReg> scratch,
            jit::DataType compute);

  // The scratch vector registers emit() needs for op on `vectors` vectors (1..kMaxVectors; one
  // vector: at most 6); throws weft::Error for an op that is not element-wise or has no kernel in
  // `compute`, or a count of vectors out of range.
  static int scratch_vectors(UnaryOp op, jit::DataType compute, int vectors = 1);

 private:
  jit::a64::Assembler& a_;
  ConstantPool& pool_;
  jit::a64::XReg base_;
};

}  // namespace weft::tpp::neon
