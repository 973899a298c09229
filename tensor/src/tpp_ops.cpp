// The switches list every prim_t and have no default: a primitive added to prim_t stops the build
// here until it is mapped (or listed as no op of that kind), instead of computing a copy or an add.
#include "tpp_ops.hpp"

#include <string>

#pragma GCC diagnostic error "-Wswitch"

namespace weft::tensor::detail {

namespace {
[[noreturn]] void no_tpp_op(prim_t p, const char* kind) {
  throw ConfigError(error_t::err_wrong_primitive,
                    to_string(p) + " is no " + kind + " primitive: no " + kind + " TPP op computes it");
}
}  // namespace

tpp::UnaryOp unary_tpp_op(prim_t p) {
  switch (p) {
    case prim_t::zero: return tpp::UnaryOp::zero;
    case prim_t::copy: return tpp::UnaryOp::copy;
    case prim_t::relu: return tpp::UnaryOp::relu;
    case prim_t::square: return tpp::UnaryOp::square;
    case prim_t::reciprocal: return tpp::UnaryOp::reciprocal;
    case prim_t::sigmoid: return tpp::UnaryOp::sigmoid;
    case prim_t::exp: return tpp::UnaryOp::exp;
    case prim_t::tanh: return tpp::UnaryOp::tanh;
    case prim_t::sqrt: return tpp::UnaryOp::sqrt;
    case prim_t::gelu: return tpp::UnaryOp::gelu;
    case prim_t::gemm:
    case prim_t::brgemm:
    case prim_t::add:
    case prim_t::sub:
    case prim_t::mul:
    case prim_t::div:
    case prim_t::min:
    case prim_t::max:
    case prim_t::none:
      break;
  }
  no_tpp_op(p, "unary");
}

tpp::BinaryOp binary_tpp_op(prim_t p) {
  switch (p) {
    case prim_t::add: return tpp::BinaryOp::add;
    case prim_t::sub: return tpp::BinaryOp::sub;
    case prim_t::mul: return tpp::BinaryOp::mul;
    case prim_t::div: return tpp::BinaryOp::div;
    case prim_t::min: return tpp::BinaryOp::min;
    case prim_t::max: return tpp::BinaryOp::max;
    case prim_t::zero:
    case prim_t::copy:
    case prim_t::relu:
    case prim_t::square:
    case prim_t::reciprocal:
    case prim_t::sigmoid:
    case prim_t::exp:
    case prim_t::tanh:
    case prim_t::sqrt:
    case prim_t::gelu:
    case prim_t::gemm:
    case prim_t::brgemm:
    case prim_t::none:
      break;
  }
  no_tpp_op(p, "binary");
}

}  // namespace weft::tensor::detail
