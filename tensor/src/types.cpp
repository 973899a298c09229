#include "weft/tensor/types.hpp"

namespace weft::tensor {

bool is_unary(prim_t p) {
  switch (p) {
    case prim_t::zero: case prim_t::copy: case prim_t::relu: case prim_t::square:
    case prim_t::reciprocal: case prim_t::sigmoid: case prim_t::exp: case prim_t::tanh:
    case prim_t::sqrt: case prim_t::gelu:
      return true;
    default:
      return false;
  }
}

bool is_binary_elementwise(prim_t p) {
  switch (p) {
    case prim_t::add: case prim_t::sub: case prim_t::mul: case prim_t::div: case prim_t::min:
    case prim_t::max:
      return true;
    default:
      return false;
  }
}

bool is_gemm_like(prim_t p) { return p == prim_t::gemm || p == prim_t::brgemm; }

std::string to_string(exec_t e) {
  switch (e) {
    case exec_t::seq: return "seq";
    case exec_t::prim: return "prim";
    case exec_t::shared: return "shared";
  }
  return "exec_t(" + std::to_string(static_cast<std::uint32_t>(e)) + ")";
}

std::string to_string(prim_t p) {
  switch (p) {
    case prim_t::zero: return "zero";
    case prim_t::copy: return "copy";
    case prim_t::relu: return "relu";
    case prim_t::gemm: return "gemm";
    case prim_t::brgemm: return "brgemm";
    case prim_t::square: return "square";
    case prim_t::reciprocal: return "reciprocal";
    case prim_t::sigmoid: return "sigmoid";
    case prim_t::exp: return "exp";
    case prim_t::tanh: return "tanh";
    case prim_t::sqrt: return "sqrt";
    case prim_t::gelu: return "gelu";
    case prim_t::add: return "add";
    case prim_t::sub: return "sub";
    case prim_t::mul: return "mul";
    case prim_t::div: return "div";
    case prim_t::min: return "min";
    case prim_t::max: return "max";
    case prim_t::none: return "none";
  }
  return "prim_t(" + std::to_string(static_cast<std::uint32_t>(p)) + ")";
}

std::string to_string(dim_t d) {
  switch (d) {
    case dim_t::c: return "c";
    case dim_t::m: return "m";
    case dim_t::n: return "n";
    case dim_t::k: return "k";
    case dim_t::undefined: return "undefined";
  }
  return "dim_t(" + std::to_string(static_cast<std::uint32_t>(d)) + ")";
}

std::size_t element_size(dtype_t d) {
  switch (d) {
    case dtype_t::fp32: return 4;
    case dtype_t::fp64: return 8;
  }
  return 0;
}

std::string to_string(dtype_t d) {
  switch (d) {
    case dtype_t::fp32: return "fp32";
    case dtype_t::fp64: return "fp64";
  }
  return "dtype_t(" + std::to_string(static_cast<std::uint32_t>(d)) + ")";
}

std::string to_string(error_t e) {
  switch (e) {
    case error_t::success: return "success";
    case error_t::err_wrong_dtype: return "err_wrong_dtype";
    case error_t::err_wrong_dimension: return "err_wrong_dimension";
    case error_t::err_wrong_primitive: return "err_wrong_primitive";
    case error_t::err_wrong_first_touch_primitive: return "err_wrong_first_touch_primitive";
    case error_t::err_wrong_main_primitive: return "err_wrong_main_primitive";
    case error_t::err_wrong_last_touch_primitive: return "err_wrong_last_touch_primitive";
    case error_t::err_execution_type_not_supported: return "err_execution_type_not_supported";
    case error_t::err_invalid_primitive_configuration: return "err_invalid_primitive_configuration";
    case error_t::err_invalid_first_touch_configuration:
      return "err_invalid_first_touch_configuration";
    case error_t::err_invalid_main_configuration: return "err_invalid_main_configuration";
    case error_t::err_invalid_last_touch_configuration:
      return "err_invalid_last_touch_configuration";
    case error_t::err_invalid_execution_order: return "err_invalid_execution_order";
    case error_t::err_invalid_strides: return "err_invalid_strides";
    case error_t::err_k_dimension_must_not_be_shared: return "err_k_dimension_must_not_be_shared";
    case error_t::err_invalid_loop_override: return "err_invalid_loop_override";
  }
  return "error_t(" + std::to_string(static_cast<std::int32_t>(e)) + ")";
}

}  // namespace weft::tensor
