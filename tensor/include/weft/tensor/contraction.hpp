// The IR of one tensor operation: a list of dimensions, each with a type (c, m, n, k), an execution
// type (seq, shared, prim), a size and a stride (in elements) per tensor; plus the data type and the
// three primitives. The optimizer passes rewrite it; lowering turns it into a loop nest + TPPs.
//
//   Contraction op = Contraction::from_config(dtype_t::fp32, prim_t::none, prim_t::gemm,
//                                             prim_t::none, dim_types, exec_types, sizes,
//                                             strides_in0, strides_in1, strides_out);
//   validate(op);   // throws ConfigError{error_t, "what is wrong with which dimension"}
//
// Dimensions are listed outermost first: the order of the seq/shared dimensions is the loop order;
// the position of prim dimensions does not matter.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "weft/jit/error.hpp"
#include "weft/tensor/types.hpp"

namespace weft::tensor {

struct Dim {
  dim_t type = dim_t::c;
  exec_t exec = exec_t::seq;
  std::int64_t size = 1;
  std::int64_t stride_in0 = 0;
  std::int64_t stride_in1 = 0;
  std::int64_t stride_out = 0;
  // A remainder (ragged split): 0 for a dimension whose iterations all cover whole blocks. Else this
  // is the outer (seq/shared) part of a split whose inner part is a prim dimension, its partner: the
  // other dimension of the same type with stride(this) == size(partner) * stride(partner) in every
  // tensor. The last iteration covers only `last_block` (1 .. size(partner) - 1) elements of the
  // partner, so the pair spans (size - 1) * size(partner) + last_block. GEMM-like operations only;
  // the lowering runs tail kernels for the last blocks.
  std::int64_t last_block = 0;
  bool operator==(const Dim&) const = default;
};

struct Contraction {
  dtype_t dtype = dtype_t::fp32;
  prim_t first_touch = prim_t::none;
  prim_t main = prim_t::none;
  prim_t last_touch = prim_t::none;
  std::vector<Dim> dims;
  // Lowering hint (pack_operands sets it): the main primitive reads in0's block from a per-thread
  // contiguous copy (column-major, leading dimension = the prim m size), made when the block a
  // call reads differs from the one the thread copied last. The copy is exact, so the result does
  // not change; it only takes effect for gemm/brgemm on the BRGEMM TPP (describe() says so).
  bool pack_in0 = false;

  bool operator==(const Contraction&) const = default;

  // Throws ConfigError (err_wrong_dimension) when the spans differ in length. strides_in1 may be
  // empty for a unary operation (read as zeros).
  static Contraction from_config(dtype_t dtype, prim_t prim_first_touch, prim_t prim_main,
                                 prim_t prim_last_touch, std::span<const dim_t> dim_types,
                                 std::span<const exec_t> exec_types,
                                 std::span<const std::int64_t> dim_sizes,
                                 std::span<const std::int64_t> strides_in0,
                                 std::span<const std::int64_t> strides_in1,
                                 std::span<const std::int64_t> strides_out);

  bool is_binary() const { return is_gemm_like(main) || is_binary_elementwise(main); }
  // Multiply-adds x 2 for GEMM-like operations, elements of the output otherwise.
  double flops() const;
  // One line per dimension, for logs, error messages and docs.
  std::string describe() const;
};

class ConfigError : public weft::Error {
 public:
  ConfigError(error_t code, const std::string& message) : weft::Error(message), code_(code) {}
  error_t code() const { return code_; }

 private:
  error_t code_;
};

struct ValidationOptions {
  // Accept GEMM prim dimensions whose strides the BRGEMM TPP cannot take (M not unit-stride in in0
  // and out, or K not unit-stride in in1) and run them through a portable strided kernel. Unary
  // prim dimensions that fit no TPP layout likewise run through a portable loop.
  bool allow_generic_primitives = false;
  // false: skip the checks of the prim dims (for configurations the optimizer will complete).
  bool check_primitives = true;
};

// Checks everything lowering relies on; throws ConfigError naming the problem and the dimension.
void validate(const Contraction& op, const ValidationOptions& options = {});

// "dimension 3 (k, size 32)" -- how messages name a dimension.
std::string name_dimension(const Contraction& op, std::size_t index);

}  // namespace weft::tensor
