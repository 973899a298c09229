// The binary TPP emitter: follows a BinaryPlan and writes one kernel `void(const BinaryArgs*)`.
#pragma once

#include <memory>

#include "weft/jit/code_buffer.hpp"
#include "weft/tpp/binary.hpp"

namespace weft::tpp::detail {

// A code buffer holding the kernel (not yet finalized); plan.isa picks Ymm or Zmm code.
std::unique_ptr<weft::jit::CodeBuffer> emit_binary(const BinaryDesc& desc, const BinaryPlan& plan);

// Whether `desc` has bf16 in and out and an op that selects one of its inputs (min, max): its bf16
// results then keep that input's bits (no rounding of the widened value, which would flush bf16
// denormals and quiet signaling NaNs); the kernel and the reference follow this one rule.
bool keeps_bf16_bits(const BinaryDesc& desc);

}  // namespace weft::tpp::detail
