// The SVE element-wise TPP emitters: unary and binary kernels `void(const UnaryArgs*)` /
// `void(const BinaryArgs*)` for the plans of the SVE ISAs (plan.isa sve*, its vector length
// isa_traits(plan.isa).vector_bytes: the code is valid at that vector length only), with the
// references' results bit for bit.
//
// Scope (supports(); anything else goes to the Neon emitter, planned for Isa::neon):
// - binary add, sub, mul, div, min, max with every broadcast (none, row, col, scalar); min / max
//   are IEEE 754-2019 minimum / maximum (SVE's fmin / fmax), their NaN turned into the all-ones NaN
//   of min_max_relu.hpp as the Neon emitter does;
// - unary zero, copy, relu without a mask (fcmle #0 into a predicate, +0 selected there: -0 and
//   -inf give +0, NaN kept with its bits), square, reciprocal (IEEE division), sqrt, increment,
//   decrement, scale, and the transcendentals exp, sigmoid, tanh, gelu (f32 arithmetic: the
//   sequences of sve_activation_emit.hpp, the Neon kernels' bits), not transpose_out. Leading dimensions from the descriptor or, where it has
//   0, from UnaryArgs (0 there: every column reads A's first);
// - types: f32 throughout; bf16 in and / or out with f32 arithmetic (widened on load: the bits
//   shifted up 16; rounded on store exactly as jit::to_bfloat16 in integer steps, ties to even,
//   NaN quieted, exponent-0 values to the signed zero; not bfcvt, which differs on denormals; bf16
//   in and out with an op that selects an input keeps that input's bits, as the references do);
//   f64 throughout.
//
// Layout: the shared plan's (flat, rows, cols, full vectors, tail). Each column runs steps of 4
// full vectors under an all-true predicate (p0; a loop when there are two or more), the remaining
// full vectors, then the tail under a whilelt predicate (p1, set once): nothing past a column is
// read or written. With bf16 data the unit is a chunk of two f32 vectors (one vector of bf16:
// ld1h + zip1 / zip2, uzp2 + st1h; a bf16 copy: ld1h + st1h), steps of two chunks. Every load and op of a step precedes its
// stores (C may alias A or B).
#pragma once

#include <memory>

#include "weft/jit/aarch64/code_buffer.hpp"
#include "weft/tpp/binary.hpp"
#include "weft/tpp/unary.hpp"

namespace weft::tpp::sve {

bool supports(const UnaryDesc& desc);
bool supports(const BinaryDesc& desc);

// The kernel of `desc` following `plan` (plan_unary / plan_binary for an SVE ISA whose element-wise
// kernels are its own); not finalized. Throws weft::Error when supports(desc) is false or the plan
// is not for an SVE ISA.
std::unique_ptr<jit::a64::CodeBuffer> emit_unary(const UnaryDesc& desc, const UnaryPlan& plan);
std::unique_ptr<jit::a64::CodeBuffer> emit_binary(const BinaryDesc& desc, const BinaryPlan& plan);

}  // namespace weft::tpp::sve
