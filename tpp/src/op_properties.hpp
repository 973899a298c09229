// What each element-wise TPP op is, in one table that the ISA-neutral code (validation, plans,
// references) and the emitters read alike, instead of a list per file: whether a unary op is
// element-wise, takes alpha, is a reduction or a VNNI-2 move, has f64 kernels, selects one of its
// inputs (then bf16 in and out keeps that input's bits), and how many scratch vector registers the
// activation emitter needs for it.
//
// ISA-neutral: no Xbyak, no emitter header (tests/tpp/neutral_sources_test.cpp keeps the plans and
// references that include this free of both).
#pragma once

#include "weft/jit/data_type.hpp"
#include "weft/tpp/binary.hpp"
#include "weft/tpp/unary.hpp"

namespace weft::tpp::detail {

struct UnaryOpProperties {
  bool elementwise = false;    // B(i, j) = f(A(i, j)): may run flat, fuse into BRGEMM, take transpose_out
  bool takes_alpha = false;    // the descriptor's alpha is its constant
  bool reduction = false;      // one output per row or column
  bool vnni = false;           // a VNNI-2 layout move (bf16 only)
  bool f64_kernel = false;     // has f64 kernels: the exact and correctly rounded ops, one instruction each
  bool selects_input = false;  // the result is one of its inputs or +0 (a NaN from max: the all-ones one)
  int activation_scratch = 0;  // scratch vector registers ActivationEmitter::emit needs for it
};

// Switches over the ops list every one (no default, -Wswitch an error): a new op states its
// properties here before anything compiles.
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"

constexpr UnaryOpProperties unary_op_properties(UnaryOp op) {
  switch (op) {
    case UnaryOp::zero: return {.f64_kernel = true, .selects_input = true};
    case UnaryOp::copy: return {.elementwise = true, .f64_kernel = true, .selects_input = true};
    case UnaryOp::relu:
      return {.elementwise = true, .f64_kernel = true, .selects_input = true, .activation_scratch = 1};
    case UnaryOp::relu_bwd: return {.f64_kernel = true, .selects_input = true};
    case UnaryOp::square: return {.elementwise = true, .f64_kernel = true};
    case UnaryOp::reciprocal: return {.elementwise = true, .f64_kernel = true, .activation_scratch = 1};
    case UnaryOp::sqrt: return {.elementwise = true, .f64_kernel = true};
    case UnaryOp::exp: return {.elementwise = true, .activation_scratch = 2};
    case UnaryOp::sigmoid:
    case UnaryOp::tanh:
    case UnaryOp::gelu: return {.elementwise = true, .activation_scratch = 3};
    case UnaryOp::increment:
    case UnaryOp::decrement:
    case UnaryOp::scale: return {.elementwise = true, .takes_alpha = true, .f64_kernel = true};
    case UnaryOp::transpose: return {.f64_kernel = true, .selects_input = true};
    case UnaryOp::reduce_rows_sum:
    case UnaryOp::reduce_cols_sum: return {.reduction = true, .f64_kernel = true};
    case UnaryOp::reduce_rows_max:
    case UnaryOp::reduce_cols_max: return {.reduction = true, .f64_kernel = true, .selects_input = true};
    case UnaryOp::vnni2_pack:
    case UnaryOp::vnni2_unpack: return {.vnni = true, .selects_input = true};
  }
  return {};  // not an enumerator: validate() rejects the descriptor before anything else runs
}

// Whether the binary op's result is one of its inputs (min, max).
constexpr bool selects_input(BinaryOp op) {
  switch (op) {
    case BinaryOp::add:
    case BinaryOp::sub:
    case BinaryOp::mul:
    case BinaryOp::div: return false;
    case BinaryOp::min:
    case BinaryOp::max: return true;
  }
  return false;
}

#pragma GCC diagnostic pop

constexpr int activation_scratch(UnaryOp op) { return unary_op_properties(op).activation_scratch; }

// Whether `desc` has bf16 in and out and an op that selects one of its inputs: its bf16 results
// then keep that input's bits (no rounding of the widened value, which would flush bf16 denormals
// and quiet signaling NaNs). The kernels and the references follow this one rule.
inline bool keeps_bf16_bits(const UnaryDesc& desc) {
  return desc.types.in == jit::DataType::bf16 && desc.types.out == jit::DataType::bf16 &&
         unary_op_properties(desc.op).selects_input;
}
inline bool keeps_bf16_bits(const BinaryDesc& desc) {
  return desc.types.in == jit::DataType::bf16 && desc.types.out == jit::DataType::bf16 && selects_input(desc.op);
}

}  // namespace weft::tpp::detail
