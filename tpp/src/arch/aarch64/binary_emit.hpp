// The Neon binary TPP emitter: one kernel `void(const BinaryArgs*)` per descriptor, with the
// results of binary_reference bit for bit (every op, broadcast and data type; min / max by the rule
// of weft/tpp/min_max_relu.hpp, their NaN the all-ones one). It follows the shared plan's lanes,
// flat layout, rows and columns; the plan's unroll and non-temporal choice are x86's and ignored.
#pragma once

#include <memory>

#include "weft/jit/aarch64/code_buffer.hpp"
#include "weft/tpp/binary.hpp"

namespace weft::tpp::neon {

// Emits (does not finalize) the kernel; works on any host. plan.isa must be Isa::neon.
std::unique_ptr<jit::a64::CodeBuffer> emit_binary(const BinaryDesc& desc, const BinaryPlan& plan);

}  // namespace weft::tpp::neon
