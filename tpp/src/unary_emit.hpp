// The unary TPP emitter: follows a UnaryPlan and writes one kernel `void(const UnaryArgs*)`.
#pragma once

#include <memory>

#include "weft/jit/code_buffer.hpp"
#include "weft/tpp/unary.hpp"

namespace weft::tpp::detail {

// A code buffer holding the kernel (not yet finalized); plan.isa picks Ymm (avx2) or Zmm (avx512) code.
std::unique_ptr<weft::jit::CodeBuffer> emit_unary(const UnaryDesc& desc, const UnaryPlan& plan);

// Whether `desc` has bf16 in and out and an op whose result is one of its inputs (or +0): zero, copy,
// relu, relu_bwd, transpose, the max reductions, vnni2. Its bf16 results then keep the input's bits
// (no rounding of the widened value, which would flush bf16 denormals and quiet signaling NaNs):
// the kernel and the reference follow this one rule.
bool keeps_bf16_bits(const UnaryDesc& desc);

}  // namespace weft::tpp::detail
