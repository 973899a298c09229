// The Neon unary TPP kernels: one `void(const UnaryArgs*)` per descriptor, for every op but the
// transposing ones and VNNI-2 (unary_transpose_emit.hpp), in every type validate() admits (f32;
// bf16 in and/or out, computed in f32; f64). Results are bit for bit unary_reference's, the
// transcendentals (exp, sigmoid, tanh, gelu) within the accuracy of docs/tpp_eltwise.md:
// - element-wise ops and zero: columns (or one flat column) in steps of 4 vectors, then the rest
//   of a column in whole and partial vectors that never touch memory past it; the op's sequence
//   is ActivationEmitter's (the same as BRGEMM's epilogue);
// - relu with ReluMask::bitmask writes the mask as it goes (bit i % 8 of byte i / 8 of each
//   column, bits past m zero); relu_bwd passes the gradient where the forward input passed ReLU
//   (x > 0 or NaN, from aux) or where its mask bit is set;
// - reductions add in double in the reference's order (reduce_rows: column by column, vectors
//   along M; reduce_cols: row by row, columns across lanes via 4 x 4 or 2 x 2 transposes) and round
//   once; max reductions use fmax (+0 above -0) and turn any NaN into the all-ones NaN of
//   min_max_relu.hpp.
// Leading dimensions come from the descriptor or, where it has 0, from UnaryArgs (0 there: every
// column reads A's first).
#pragma once

#include <memory>

#include "weft/jit/aarch64/code_buffer.hpp"
#include "weft/tpp/unary.hpp"

namespace weft::tpp::neon {

// The kernel of `desc` following `plan` (plan_unary(desc, Isa::neon)); not finalized. Throws
// weft::Error for a descriptor validate() rejects.
std::unique_ptr<jit::a64::CodeBuffer> emit_unary(const UnaryDesc& desc, const UnaryPlan& plan);

}  // namespace weft::tpp::neon
