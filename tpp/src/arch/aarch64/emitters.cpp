// AArch64's TPP emitters (tpp/src/emitters.hpp). The Neon emitters are being written (issue 27);
// until a family has one, the architecture offers no ISA for it (jit/arch/aarch64: the ISA list is
// empty), so TPPs run their portable references, and asking for generated code is this error.
#include "emitters.hpp"

#include <string>

#include "weft/jit/cpu.hpp"
#include "weft/jit/error.hpp"

namespace weft::tpp::detail {
namespace {

[[noreturn]] void no_emitter(const char* family, jit::Isa isa) {
  throw Error(std::string(family) + ": no AArch64 code generator for ISA " + std::string(jit::to_string(isa)) +
              " in this build");
}

}  // namespace

std::unique_ptr<jit::GeneratedCode> emit_kernel(const BrgemmDesc&, const BrgemmPlan& plan) {
  no_emitter("brgemm", plan.isa);
}

std::unique_ptr<jit::GeneratedCode> emit_kernel(const UnaryDesc&, const UnaryPlan& plan) {
  no_emitter("unary TPP", plan.isa);
}

std::unique_ptr<jit::GeneratedCode> emit_kernel(const BinaryDesc&, const BinaryPlan& plan) {
  no_emitter("binary TPP", plan.isa);
}

}  // namespace weft::tpp::detail
