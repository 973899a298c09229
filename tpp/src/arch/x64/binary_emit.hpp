// The binary TPP emitter: follows a BinaryPlan and writes one kernel `void(const BinaryArgs*)`.
#pragma once

#include <memory>

#include "weft/jit/x64/code_buffer.hpp"
#include "weft/tpp/binary.hpp"

namespace weft::tpp::detail {

// A code buffer holding the kernel (not yet finalized); plan.isa picks Ymm or Zmm code.
std::unique_ptr<weft::jit::x64::CodeBuffer> emit_binary(const BinaryDesc& desc, const BinaryPlan& plan);

}  // namespace weft::tpp::detail
