// AArch64's TPP emitters (tpp/src/emitters.hpp): Neon code from our A64 assembler for every
// family, SVE code for the f32 / f64 BRGEMM of the SVE ISAs and for the f32 / f64 element-wise
// kernels of sve256 / sve512 (and their _bf16). The BRGEMMs follow their own plans
// (neon_brgemm_plan.hpp, sve_brgemm_plan.hpp); unary and binary kernels read the shared plans'
// layout (lanes, flat, rows, tails), planned for IsaTraits::elementwise: Neon on neon*, sve128*,
// the ISA itself on sve256* / sve512*. What the SVE element-wise emitter does not support
// (sve::supports) is planned again for Neon and runs Neon's code. A plan for another
// architecture's ISA is a weft::Error.
#include "emitters.hpp"

#include <algorithm>
#include <memory>
#include <string>

#include "binary_emit.hpp"
#include "brgemm_emit.hpp"
#include "sve_eltwise_emit.hpp"
#include "sve_brgemm_emit.hpp"
#include "sve_brgemm_plan.hpp"
#include "unary_emit.hpp"
#include "weft/jit/architecture.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/jit/error.hpp"
#include "weft/jit/isa_traits.hpp"

namespace weft::tpp::detail {
namespace {

[[noreturn]] void no_emitter(const char* family, jit::Isa isa) {
  throw Error(std::string(family) + ": no AArch64 code generator for ISA " + std::string(jit::to_string(isa)) +
              " in this build");
}

// Whether the build offers `isa` (jit/arch/aarch64/src/architecture.cpp).
bool offered(jit::Isa isa) {
  const auto& isas = jit::target_architecture().isas;
  return std::find(isas.begin(), isas.end(), isa) != isas.end();
}

}  // namespace

// The Neon emitter follows its own plan (neon::plan_neon_brgemm, from the descriptor) and ignores
// the shared plan's panels, which plan_brgemm shapes for x86's register files and tails. Every
// AArch64 ISA runs it for what its own emitters lack.
std::unique_ptr<jit::GeneratedCode> emit_kernel(const BrgemmDesc& desc, const BrgemmPlan& plan) {
  if (!offered(plan.isa)) no_emitter("brgemm", plan.isa);
  const jit::IsaTraits& traits = jit::isa_traits(plan.isa);
  // SVE at the ISA's vector length for f32 and f64 (sve::supports); bf16 runs the Neon kernel, on
  // bfdot or bfmmla (the Neon plan's choice per shape) where the ISA has BF16 (neon_bf16,
  // sve*_bf16: SVE's own bfmmla / bfdot model no faster, docs/tpp_brgemm.md), else widened to fp32.
  if (traits.tail == jit::TailPolicy::predicate && sve::supports(desc))
    return std::make_unique<sve::BrgemmEmitter>(desc, traits.vector_bytes);
  return std::make_unique<neon::BrgemmEmitter>(desc, traits.bf16_dot);
}

// A plan of an SVE ISA (its element-wise kernels its own) runs SVE code where sve::supports the
// descriptor, else the Neon kernel planned for Isa::neon (transposes, VNNI-2, bitmasks, the
// transcendentals, bf16 data).
std::unique_ptr<jit::GeneratedCode> emit_kernel(const UnaryDesc& desc, const UnaryPlan& plan) {
  if (plan.isa == jit::Isa::neon) return neon::emit_unary(desc, plan);
  if (offered(plan.isa) && jit::isa_traits(plan.isa).tail == jit::TailPolicy::predicate) {
    if (sve::supports(desc)) return sve::emit_unary(desc, plan);
    return neon::emit_unary(desc, plan_unary(desc, jit::Isa::neon));
  }
  no_emitter("unary TPP", plan.isa);
}

std::unique_ptr<jit::GeneratedCode> emit_kernel(const BinaryDesc& desc, const BinaryPlan& plan) {
  if (plan.isa == jit::Isa::neon) return neon::emit_binary(desc, plan);
  if (offered(plan.isa) && jit::isa_traits(plan.isa).tail == jit::TailPolicy::predicate) {
    if (sve::supports(desc)) return sve::emit_binary(desc, plan);
    return neon::emit_binary(desc, plan_binary(desc, jit::Isa::neon));
  }
  no_emitter("binary TPP", plan.isa);
}

}  // namespace weft::tpp::detail
