// The seed documents' BRGEMM interface (a course on JIT tensor kernels), on top of tpp::Brgemm:
//
//   mini_jit::Brgemm gen;
//   if (gen.generate(32, 32, 32, /*br_size=*/8, 0, 0, 0, mini_jit::Brgemm::dtype_t::fp32) !=
//       mini_jit::Brgemm::error_t::success) { std::cerr << gen.error_message(); }
//   mini_jit::Brgemm::kernel_t k = gen.get_kernel();
//   k(a, b, c, /*ld_a=*/32, /*ld_b=*/32, /*ld_c=*/32, /*br_stride_a=*/1024, /*br_stride_b=*/1024);
//
// The kernel computes C += sum_{i < br_size} A_i * B_i, column-major FP32 or FP64 (dtype), strides
// in elements.
// Leading dimensions are given per call: the first call with new ones generates (and caches) a
// weft kernel for them; repeated calls with the same ones cost a few nanoseconds more than
// tpp::Brgemm. Supported: dtype fp32 and fp64, trans_a = trans_b = trans_c = 0. Anything else makes
// generate() return an error_t other than success, with error_message() saying why.
// An invalid kernel_t call (ld_a < m, ld_b < k, ld_c < m, a leading dimension that makes one matrix
// span more than 2 GiB, a, b or c null) throws weft::Error naming the argument instead of computing
// something else: kernel_t is a trampoline that tail-calls C++, so the exception unwinds into the
// caller like any other.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace mini_jit {

class Brgemm {
 public:
  enum class dtype_t : std::uint32_t { fp32 = 0, fp64 = 1 };
  enum class error_t : std::int32_t { success = 0, bad_param = -1, unsupported = -2 };

  using kernel_t = void (*)(void const* a, void const* b, void* c, std::int64_t ld_a, std::int64_t ld_b,
                            std::int64_t ld_c, std::int64_t br_stride_a, std::int64_t br_stride_b);

  Brgemm();
  ~Brgemm();
  Brgemm(const Brgemm&) = delete;
  Brgemm& operator=(const Brgemm&) = delete;

  error_t generate(std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t br_size,
                   std::uint32_t trans_a, std::uint32_t trans_b, std::uint32_t trans_c, dtype_t dtype);

  // The kernel of the last generate(); valid until the next generate() or the end of this object.
  // Throws weft::Error when the last generate() failed or there was none.
  kernel_t get_kernel() const;

  // Why the last generate() failed; empty after a success.
  const std::string& error_message() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  std::string error_;
};

}  // namespace mini_jit
