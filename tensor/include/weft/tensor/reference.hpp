// The test oracle: a contraction by plain nested loops over every dimension with the given strides,
// accumulating in double for fp32 and in long double for fp64 (more precision than the result has,
// in either type). Semantics shared with the lowered operation:
//   gemm/brgemm: out = last( first(out) + sum over k dims of in0 * in1 )
//   unary main:  out = last( main(in0) )        (the first touch is overwritten)
//   binary main: out = last( in0 op in1 )
// where first/last are unary primitives applied element-wise to the output (none = identity).
#pragma once

#include "weft/tensor/contraction.hpp"

namespace weft::tensor {

// The overload must match op.dtype (float: fp32, double: fp64); throws ConfigError
// (err_wrong_dtype) otherwise.
void reference_contraction(const Contraction& op, const float* in0, const float* in1, float* out);
void reference_contraction(const Contraction& op, const double* in0, const double* in1, double* out);

// The value of a unary primitive (zero, copy, relu, square, ...) at x, in double; none is the
// identity. Throws ConfigError (err_wrong_primitive) for any other value.
double unary_value(prim_t p, double x);
// The value of a binary element-wise primitive, in double. Throws ConfigError
// (err_wrong_primitive) for a value that is no binary element-wise primitive.
double binary_value(prim_t p, double a, double b);

}  // namespace weft::tensor
