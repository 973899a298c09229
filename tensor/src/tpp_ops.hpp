// Which TPP op computes each element-wise tensor primitive (private to tensor/src, and its tests).
#pragma once

#include "weft/tensor/contraction.hpp"
#include "weft/tpp/binary.hpp"
#include "weft/tpp/unary.hpp"

namespace weft::tensor::detail {

// Throw ConfigError (err_wrong_primitive) for a value that is no unary (binary element-wise)
// primitive: a primitive without its TPP op is an error, never another op's result.
tpp::UnaryOp unary_tpp_op(prim_t p);
tpp::BinaryOp binary_tpp_op(prim_t p);

}  // namespace weft::tensor::detail
