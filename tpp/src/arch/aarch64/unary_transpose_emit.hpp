// The Neon transposing unary kernels (owner: the transpose part of issue 27): transpose, an
// element-wise op with transpose_out, vnni2_pack and vnni2_unpack. emit_unary (unary_emit.hpp)
// dispatches these descriptors here.
#pragma once

#include <memory>

#include "weft/jit/aarch64/code_buffer.hpp"
#include "weft/tpp/unary.hpp"

namespace weft::tpp::neon {

// desc.op == transpose, or an element-wise op with transpose_out; vnni2_pack / vnni2_unpack.
std::unique_ptr<jit::a64::CodeBuffer> emit_unary_transpose(const UnaryDesc& desc, const UnaryPlan& plan);
std::unique_ptr<jit::a64::CodeBuffer> emit_unary_vnni2(const UnaryDesc& desc, const UnaryPlan& plan);

}  // namespace weft::tpp::neon
