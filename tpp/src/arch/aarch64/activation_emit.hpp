// The Neon activation emitter: one instruction sequence per element-wise op, applied in place to
// one vector register. The unary kernels use it for their element-wise ops and the BRGEMM epilogue
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
//   ...
//   a.ret();
//   pool.emit(a);                                       // the constants go after the code
//
// Contract:
// - `x` is transformed in place (4 floats, or 2 doubles for compute f64); only the first
//   scratch_vectors(op, compute) registers of `scratch` are clobbered: no general register (the
//   pool base is read), no memory but the pool's (read), no flags.
// - Ops: is_elementwise(op) (copy, relu, square, reciprocal, sqrt, exp, sigmoid, tanh, gelu,
//   increment, decrement, scale); `alpha` is the constant of the last three (converted exactly to
//   double in f64). Compute f64: the ops with f64 kernels (op_properties.hpp: all but the four
//   transcendentals). Anything else, too few scratch registers, or a scratch register that is `x`
//   or repeated throws weft::Error.
// - Scratch registers (f32 and f64 alike): copy, square, sqrt: 0; relu, reciprocal, increment,
//   decrement, scale: 1; exp: 3; sigmoid, tanh, gelu: 4. (More than x86's: constants are loaded
//   into a register where x86 takes a memory operand.)
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

  // x = op(x) on 4 floats (compute f32) or 2 doubles (compute f64). Clobbers only the first
  // scratch_vectors(op, compute) registers of `scratch`, no general register, no memory.
  void emit(UnaryOp op, float alpha, jit::a64::VReg x, std::span<const jit::a64::VReg> scratch,
            jit::DataType compute);

  // The scratch vector registers emit() needs for op (at most 6); throws weft::Error for an op that
  // is not element-wise or has no kernel in `compute`.
  static int scratch_vectors(UnaryOp op, jit::DataType compute);

 private:
  jit::a64::Assembler& a_;
  ConstantPool& pool_;
  jit::a64::XReg base_;
};

}  // namespace weft::tpp::neon
