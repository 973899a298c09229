// The Neon unary kernels that move elements across rows and columns: transpose (B = A^T), any
// element-wise op with transpose_out (B = op(A)^T, the op applied by ActivationEmitter as in the
// kernels that do not transpose), and the VNNI-2 layout moves vnni2_pack / vnni2_unpack. The unary
// dispatcher (emit_unary) calls these for those descriptors.
//
// Transposes move square blocks of one vector per column: 4 x 4 floats, 2 x 2 doubles, 8 x 8 bf16
// (trn1 / trn2 rounds on growing element sizes). A block whose types differ (bf16 <-> f32) or whose op
// computes goes through the compute type (4 x 4 floats, 2 x 2 doubles) with ElementIo's conversions;
// one that only moves bits (in == out, transpose or copy) moves them as they are. VNNI-2 interleaves
// two columns with zip1 / zip2 (.8h for bf16; .4s for f32, rounded to bf16 as stored) and splits them
// with uzp1 / uzp2. Edge blocks and row tails move only the elements that exist (raw_moves.hpp).
// Results are unary_reference's bit for bit (transcendentals with transpose_out: as the op's kernel).
#pragma once

#include <memory>

#include "weft/jit/aarch64/code_buffer.hpp"
#include "weft/tpp/unary.hpp"

namespace weft::tpp::neon {

// desc.op == transpose, or an element-wise op with transpose_out. Emits (does not finalize) the
// kernel `void(const UnaryArgs*)`; throws weft::Error for another descriptor.
std::unique_ptr<jit::a64::CodeBuffer> emit_unary_transpose(const UnaryDesc& desc, const UnaryPlan& plan);

// desc.op == vnni2_pack (in bf16 or f32, out bf16) or vnni2_unpack (bf16); throws weft::Error otherwise.
std::unique_ptr<jit::a64::CodeBuffer> emit_unary_vnni2(const UnaryDesc& desc, const UnaryPlan& plan);

}  // namespace weft::tpp::neon
