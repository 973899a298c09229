// The straightforward reference of the GEMM samples: plain column-major matrices, double
// accumulation. The checks against it are verification.hpp's.
#pragma once

#include <cstdint>

#include "verification.hpp"

namespace weft::samples {

// op(X) of a plain column-major matrix: X itself, or (transposed) its transpose.
struct GemmOperand {
  GemmOperand(const float* matrix, bool transposed_ = false) : data(matrix), transposed(transposed_) {}
  const float* data;
  bool transposed;
};

// C(M x N) = act(op(A) (M x K) * op(B) (K x N) + bias), bias per row (length M) or nullptr, act =
// ReLU when `relu`. All column-major with leading dimension = rows: A is stored M x K, or K x M
// when transposed. Accumulates in double. With `magnitude` (M x N, or nullptr) also writes each
// element's sum of |terms|, sum_k |A(i, k)| |B(k, j)| + |bias[i]|, which scales the rounding error
// of the sum (bf16_error_bound).
void gemm_reference(std::int64_t M, std::int64_t N, std::int64_t K, GemmOperand A, GemmOperand B,
                    const float* bias, bool relu, float* C, double* magnitude = nullptr);

}  // namespace weft::samples
