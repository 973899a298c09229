// Compatibility with the seed documents' unary primitive interface (the "mini_jit" of the JIT
// tensor-kernel course, there for ARM): same class, enums, generate() and kernel_t, backed by weft's
// unary TPPs. Leading dimensions are passed at call time, in elements.
//
//   mini_jit::Unary unary;
//   if (unary.generate(64, 32, 0, mini_jit::Unary::dtype_t::fp32, mini_jit::Unary::ptype_t::relu) ==
//       mini_jit::Unary::error_t::success) {
//     unary.get_kernel()(a, b, 64, 64);              // b = relu(a), both 64 x 32 column-major
//   }
//
// trans_b = 1 stores B transposed (B is n x m, ld_b >= n): B = op(A)^T. For `zero` A is not read
// (it may be nullptr). fp64 (A and B of doubles) has the same kernels, weft's f64 unary TPPs
// (every ptype, either trans_b). Unsupported requests (m or n = 0, trans_b > 1, an unknown ptype or
// dtype) return an error code, with error_message() saying why, and
// leave no kernel; they never crash. A kernel_t call with b null, a null (except
// for zero), ld_a outside [m, 2^28] or ld_b outside [m, 2^28] ([n, 2^28] with trans_b = 1) throws
// weft::Error naming the argument (the kernel_t is a trampoline that tail-calls C++, so the exception
// unwinds into the caller like any other).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace mini_jit {

class Unary {
 public:
  // a: column-major A (nullptr for zero); b: B; ld_a, ld_b: leading dimensions in elements.
  using kernel_t = void (*)(void const* a, void* b, int64_t ld_a, int64_t ld_b);

  enum class dtype_t : uint32_t { fp32 = 0, fp64 = 1 };
  enum class ptype_t : uint32_t { zero = 0, identity = 1, relu = 2 };
  enum class error_t : int32_t {
    success = 0,
    err_wrong_dtype = 1,
    err_wrong_dimension = 2,
    err_wrong_ptype = 3,
    err_wrong_trans = 4,
  };

  // Generates (or takes from weft's kernel cache) the kernel.
  error_t generate(uint32_t m, uint32_t n, uint32_t trans_b, dtype_t dtype, ptype_t ptype);

  // The kernel from the last successful generate(), or nullptr. This object (or a copy of it) owns
  // the kernel: the pointer is valid until the next generate() or the end of the last such object,
  // whatever weft's bounded kernel cache (WEFT_KERNEL_CACHE_SIZE) drops meanwhile.
  kernel_t get_kernel() const { return kernel_; }

  // Why the last generate() failed ("" after a success).
  const std::string& error_message() const { return error_; }

 private:
  kernel_t kernel_ = nullptr;
  std::shared_ptr<const void> owner_;  // keeps kernel_'s code alive
  std::string error_;
};

}  // namespace mini_jit
