// The unary TPP emitter: follows a UnaryPlan and writes one kernel `void(const UnaryArgs*)`.
#pragma once

#include <memory>

#include "weft/jit/x64/code_buffer.hpp"
#include "weft/tpp/unary.hpp"

namespace weft::tpp::detail {

// A code buffer holding the kernel (not yet finalized); plan.isa picks Ymm (avx2) or Zmm (avx512) code.
std::unique_ptr<weft::jit::x64::CodeBuffer> emit_unary(const UnaryDesc& desc, const UnaryPlan& plan);

}  // namespace weft::tpp::detail
