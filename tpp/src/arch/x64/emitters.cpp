// x86-64's TPP emitters (tpp/src/emitters.hpp): AVX2 and AVX-512 code through Xbyak.
#include "emitters.hpp"

#include "binary_emit.hpp"
#include "brgemm_emit.hpp"
#include "unary_emit.hpp"

namespace weft::tpp::detail {

std::unique_ptr<jit::GeneratedCode> emit_kernel(const BrgemmDesc& desc, const BrgemmPlan& plan) {
  return emit_brgemm(desc, plan);
}

std::unique_ptr<jit::GeneratedCode> emit_kernel(const UnaryDesc& desc, const UnaryPlan& plan) {
  return emit_unary(desc, plan);
}

std::unique_ptr<jit::GeneratedCode> emit_kernel(const BinaryDesc& desc, const BinaryPlan& plan) {
  return emit_binary(desc, plan);
}

}  // namespace weft::tpp::detail
