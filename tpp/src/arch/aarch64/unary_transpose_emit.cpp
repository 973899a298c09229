// PLACEHOLDER until branch neon-transpose is merged: its unary_transpose_emit.cpp replaces this file
// (same name on purpose: the merge conflicts here and takes theirs). The entry points exist so
// that emit_unary links; they emit nothing and say so.
#include "unary_transpose_emit.hpp"

#include <string>

#include "weft/jit/error.hpp"

namespace weft::tpp::neon {

std::unique_ptr<jit::a64::CodeBuffer> emit_unary_transpose(const UnaryDesc& desc, const UnaryPlan&) {
  throw Error("neon unary " + to_string(desc) + ": the Neon transpose kernels are not merged into this branch yet");
}

std::unique_ptr<jit::a64::CodeBuffer> emit_unary_vnni2(const UnaryDesc& desc, const UnaryPlan&) {
  throw Error("neon unary " + to_string(desc) + ": the Neon VNNI-2 kernels are not merged into this branch yet");
}

}  // namespace weft::tpp::neon
