// The TPP families' emitters of the target architecture, as the ISA-neutral family code calls
// them. tpp/src/arch/<arch>/emitters.cpp defines them: the architecture's registration point in
// this layer (docs/extending.md). Each follows a plan made for one of the architecture's ISAs and
// returns the kernel's code, not yet finalized; a plan for an ISA the architecture lacks is a
// weft::Error.
#pragma once

#include <memory>

#include "weft/jit/generated_code.hpp"
#include "weft/tpp/binary.hpp"
#include "weft/tpp/brgemm.hpp"
#include "weft/tpp/unary.hpp"

namespace weft::tpp::detail {

std::unique_ptr<jit::GeneratedCode> emit_kernel(const BrgemmDesc& desc, const BrgemmPlan& plan);
std::unique_ptr<jit::GeneratedCode> emit_kernel(const UnaryDesc& desc, const UnaryPlan& plan);
std::unique_ptr<jit::GeneratedCode> emit_kernel(const BinaryDesc& desc, const BinaryPlan& plan);

}  // namespace weft::tpp::detail
