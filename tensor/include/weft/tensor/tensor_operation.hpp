// The seed documents' tensor-operation backend, on weft's loops and TPPs:
//
//   using einsum::backend::TensorOperation;
//   using dt = TensorOperation::dim_t;  using ex = TensorOperation::exec_t;
//   TensorOperation op;
//   std::array dims{dt::m, dt::n, dt::k, dt::m, dt::n, dt::k};
//   std::array exec{ex::seq, ex::seq, ex::prim, ex::prim, ex::prim, ex::prim};
//   std::array<int64_t, 6> sizes{32, 32, 8, 32, 32, 32};
//   std::array<int64_t, 6> s0{8192, 0, 1024, 1, 0, 32}, s1{0, 8192, 1024, 0, 32, 1},
//                          so{32768, 1024, 0, 1, 32, 0};
//   if (op.setup(TensorOperation::dtype_t::fp32, TensorOperation::prim_t::zero,
//                TensorOperation::prim_t::brgemm, TensorOperation::prim_t::relu,
//                dims, exec, sizes, s0, s1, so) != TensorOperation::error_t::success)
//     std::cerr << op.error_message() << '\n';      // names the problem and the dimension
//   op.execute(a, b, c);
//
// setup_optimized() takes the same configuration with every dimension seq and runs the optimizer
// passes (fusion, splitting, primitive identification, reordering, parallelization) first.
// A unary main primitive whose in0 and out are contiguous along different dims writes its result
// transposed, on the unary TPPs' transposing forms (docs/tensor.md, "Transposed outputs").
// Strides are in elements of the dtype: fp32 (float tensors) or fp64 (double tensors; the same
// lowering on the TPPs' f64 kernels; sigmoid, exp, tanh and gelu have none and are refused at setup,
// see docs/tensor.md "Data types").
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "weft/tensor/contraction.hpp"
#include "weft/tensor/lowering.hpp"
#include "weft/tensor/passes.hpp"
#include "weft/tensor/types.hpp"

namespace einsum::backend {

class TensorOperation {
 public:
  using exec_t = weft::tensor::exec_t;
  using prim_t = weft::tensor::prim_t;
  using dim_t = weft::tensor::dim_t;
  using dtype_t = weft::tensor::dtype_t;
  using error_t = weft::tensor::error_t;

  struct Options {
    bool optimize = false;                  // run the optimizer passes before lowering
    weft::tensor::OptimizeOptions optimizer{};
    bool allow_generic_primitives = false;  // see weft::tensor::ValidationOptions
    weft::tensor::LoweringOverride loops{};  // a tuner's loop_string (empty: generated)
  };

  TensorOperation();
  ~TensorOperation();
  TensorOperation(TensorOperation&&) noexcept;
  TensorOperation& operator=(TensorOperation&&) noexcept;

  error_t setup(dtype_t dtype, prim_t prim_first_touch, prim_t prim_main, prim_t prim_last_touch,
                std::span<const dim_t> dim_types, std::span<const exec_t> exec_types,
                std::span<const int64_t> dim_sizes, std::span<const int64_t> strides_in0,
                std::span<const int64_t> strides_in1, std::span<const int64_t> strides_out);

  // The same, with every dimension given as seq: the optimizer chooses prims, order and threads.
  error_t setup_optimized(dtype_t dtype, prim_t prim_first_touch, prim_t prim_main,
                          prim_t prim_last_touch, std::span<const dim_t> dim_types,
                          std::span<const exec_t> exec_types, std::span<const int64_t> dim_sizes,
                          std::span<const int64_t> strides_in0,
                          std::span<const int64_t> strides_in1,
                          std::span<const int64_t> strides_out);

  // weft's entry: an IR value and options.
  error_t setup(const weft::tensor::Contraction& op, const Options& options);

  // Tensors of the dtype given to setup (float* for fp32, double* for fp64). in1 = nullptr for
  // unary operations (in0 too for zero). Throws weft::Error when setup has not succeeded or a tensor
  // the operation uses is nullptr.
  void execute(void const* tensor_in0, void const* tensor_in1, void* tensor_out) const;

  // Empty after success; otherwise what is wrong and with which dimension.
  const std::string& error_message() const { return message_; }
  error_t error() const { return error_; }
  // The operation as lowered (after the optimizer, when it ran, and batch folding), and its loop nest.
  const weft::tensor::Contraction& operation() const;
  std::string describe() const;

 private:
  error_t fail(error_t code, std::string message);

  std::unique_ptr<weft::tensor::LoweredOperation> lowered_;
  error_t error_ = error_t::success;
  std::string message_;
};

}  // namespace einsum::backend
