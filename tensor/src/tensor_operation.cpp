#include "weft/tensor/tensor_operation.hpp"

#include <string>

#include "weft/jit/error.hpp"

namespace einsum::backend {

using weft::tensor::ConfigError;
using weft::tensor::Contraction;

TensorOperation::TensorOperation() = default;
TensorOperation::~TensorOperation() = default;
TensorOperation::TensorOperation(TensorOperation&&) noexcept = default;
TensorOperation& TensorOperation::operator=(TensorOperation&&) noexcept = default;

TensorOperation::error_t TensorOperation::fail(error_t code, std::string message) {
  lowered_.reset();
  error_ = code;
  message_ = to_string(code) + ": " + message;
  return code;
}

TensorOperation::error_t TensorOperation::setup(const Contraction& op, const Options& options) {
  try {
    Contraction lowered = op;
    if (options.optimize) {
      weft::tensor::validate(lowered, {.check_primitives = false});  // input errors first
      weft::tensor::OptimizeOptions o = options.optimizer;
      o.allow_generic_primitives = o.allow_generic_primitives || options.allow_generic_primitives;
      weft::tensor::optimize(lowered, o);
    }
    lowered_ = std::make_unique<weft::tensor::LoweredOperation>(
        lowered, options.loops.loop_string.empty() ? nullptr : &options.loops,
        weft::tensor::ValidationOptions{.allow_generic_primitives = options.allow_generic_primitives});
  } catch (const ConfigError& e) {
    return fail(e.code(), e.what());
  } catch (const weft::Error& e) {
    return fail(error_t::err_invalid_main_configuration, e.what());
  }
  error_ = error_t::success;
  message_.clear();
  return error_;
}

TensorOperation::error_t TensorOperation::setup(
    dtype_t dtype, prim_t prim_first_touch, prim_t prim_main, prim_t prim_last_touch,
    std::span<const dim_t> dim_types, std::span<const exec_t> exec_types,
    std::span<const int64_t> dim_sizes, std::span<const int64_t> strides_in0,
    std::span<const int64_t> strides_in1, std::span<const int64_t> strides_out) {
  try {
    return setup(Contraction::from_config(dtype, prim_first_touch, prim_main, prim_last_touch,
                                          dim_types, exec_types, dim_sizes, strides_in0,
                                          strides_in1, strides_out),
                 Options{});
  } catch (const ConfigError& e) {
    return fail(e.code(), e.what());
  }
}

TensorOperation::error_t TensorOperation::setup_optimized(
    dtype_t dtype, prim_t prim_first_touch, prim_t prim_main, prim_t prim_last_touch,
    std::span<const dim_t> dim_types, std::span<const exec_t> exec_types,
    std::span<const int64_t> dim_sizes, std::span<const int64_t> strides_in0,
    std::span<const int64_t> strides_in1, std::span<const int64_t> strides_out) {
  try {
    Options options;
    options.optimize = true;
    return setup(Contraction::from_config(dtype, prim_first_touch, prim_main, prim_last_touch,
                                          dim_types, exec_types, dim_sizes, strides_in0,
                                          strides_in1, strides_out),
                 options);
  } catch (const ConfigError& e) {
    return fail(e.code(), e.what());
  }
}

void TensorOperation::execute(void const* tensor_in0, void const* tensor_in1, void* tensor_out) const {
  if (!lowered_)
    throw weft::Error("TensorOperation::execute: no successful setup" +
                      (message_.empty() ? std::string() : " (" + message_ + ")"));
  // The kernels behind the operation check nothing; a null tensor would fault inside them.
  const auto main = lowered_->operation().main;
  const bool reads_in0 = main != weft::tensor::prim_t::zero;
  const bool reads_in1 = weft::tensor::is_gemm_like(main) || weft::tensor::is_binary_elementwise(main);
  const char* null = tensor_out == nullptr                     ? "tensor_out"
                     : reads_in0 && tensor_in0 == nullptr ? "tensor_in0"
                     : reads_in1 && tensor_in1 == nullptr ? "tensor_in1"
                                                          : nullptr;
  if (null != nullptr)
    throw weft::Error(std::string("TensorOperation::execute: ") + null + " is null (the main primitive " +
                      weft::tensor::to_string(main) + " uses it)");
  lowered_->execute(tensor_in0, tensor_in1, tensor_out);
}

const weft::tensor::Contraction& TensorOperation::operation() const {
  if (!lowered_) throw weft::Error("TensorOperation::operation: no successful setup");
  return lowered_->operation();
}

std::string TensorOperation::describe() const {
  return lowered_ ? lowered_->describe() : "(not set up: " + message_ + ")";
}

}  // namespace einsum::backend
