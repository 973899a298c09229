// The vocabulary of a tensor operation: execution, primitive, dimension and data types and the
// error codes, with the seed documents' names and values (einsum::backend::TensorOperation re-exports
// them). weft's extended primitives take values the seed does not use (10+ unary, 30+ binary).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace weft::tensor {

enum class exec_t : std::uint32_t { seq = 0, prim = 1, shared = 2 };

enum class prim_t : std::uint32_t {
  zero = 0,
  copy = 1,
  relu = 2,
  gemm = 3,
  brgemm = 4,
  // weft: further unary primitives (element-wise, on one input; touches act on the output block)
  square = 10,
  reciprocal = 11,
  sigmoid = 12,
  exp = 13,
  tanh = 14,
  sqrt = 15,
  gelu = 16,
  // weft: binary element-wise primitives, out = in0 op in1 (a stride 0 broadcasts)
  add = 30,
  sub = 31,
  mul = 32,
  div = 33,
  min = 34,
  max = 35,
  none = 99
};

enum class dim_t : std::uint32_t { c = 0, m = 1, n = 2, k = 3, undefined = 99 };

// The element type of all three tensors: IEEE binary32 or binary64. Strides count elements of it.
enum class dtype_t : std::uint32_t { fp32 = 0, fp64 = 1 };

// Bytes per element (4, 8); 0 for a value outside the enum (validate() rejects those).
std::size_t element_size(dtype_t d);

enum class error_t : std::int32_t {
  success = 0,
  err_wrong_dtype = 1,
  err_wrong_dimension = 2,
  err_wrong_primitive = 3,
  err_wrong_first_touch_primitive = 4,
  err_wrong_main_primitive = 5,
  err_wrong_last_touch_primitive = 6,
  err_execution_type_not_supported = 7,
  err_invalid_primitive_configuration = 8,
  err_invalid_first_touch_configuration = 9,
  err_invalid_main_configuration = 10,
  err_invalid_last_touch_configuration = 11,
  err_invalid_execution_order = 12,
  err_invalid_strides = 13,
  // weft
  err_k_dimension_must_not_be_shared = 14,  // two threads would accumulate into one output block
  err_invalid_loop_override = 15,           // a loop_string supplied by a tuner does not fit
};

// Element-wise primitives on one input (usable as first touch, main or last touch).
bool is_unary(prim_t p);
// Element-wise primitives on two inputs (main only).
bool is_binary_elementwise(prim_t p);
bool is_gemm_like(prim_t p);  // gemm or brgemm

std::string to_string(exec_t e);
std::string to_string(prim_t p);
std::string to_string(dim_t d);
std::string to_string(dtype_t d);
std::string to_string(error_t e);

}  // namespace weft::tensor
