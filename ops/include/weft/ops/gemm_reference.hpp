// The straightforward reference of the GEMM operators: plain column-major matrices, double
// accumulation. The checks against it are verification.hpp's.
//
//   gemm_reference(M, N, K, a.data(), b.data(), bias.data(), /*relu=*/true, c.data());
//   gemm_reference(K, N, M, {w.data(), /*transposed=*/true}, dy.data(), nullptr, false, dx.data());
//   gemm_reference(M, N, K, a64.data(), b64.data(), nullptr, false, c64.data());   // f64
#pragma once

#include <cstdint>

#include <weft/ops/verification.hpp>

namespace weft::ops {

// op(X) of a plain column-major matrix of T (float or double): X itself, or (transposed) its
// transpose.
template <class T>
struct GemmOperandOf {
  GemmOperandOf(const T* matrix, bool transposed_ = false) : data(matrix), transposed(transposed_) {}
  const T* data;
  bool transposed;
};
using GemmOperand = GemmOperandOf<float>;

// C(M x N) = act(op(A) (M x K) * op(B) (K x N) + bias), bias per row (length M) or nullptr, act =
// ReLU when `relu`. All column-major with leading dimension = rows: A is stored M x K, or K x M
// when transposed. Accumulates in double.
//
// With `magnitudes` (or nullptr) also the magnitudes a bf16 check's bound scales with
// (verification.hpp), column-major M x N like C: terms(i, j) = sum_k |A(i, k)| |B(k, j)| + |bias[i]|
// and, with chunk_terms > 0, partials(i, j) = sum over c >= 1 with c chunk_terms < K of
// |sum_{k < c chunk_terms} A(i, k) B(k, j)|, the exact running sums a chunked bf16 sum is rounded at.
void gemm_reference(std::int64_t M, std::int64_t N, std::int64_t K, GemmOperand A, GemmOperand B,
                    const float* bias, bool relu, float* C, Bf16Magnitudes* magnitudes = nullptr,
                    std::int64_t chunk_terms = 0);

// The same for the f64 operators' checks, on double matrices, summed in double (the f64 kernels'
// own precision: compare with sum_tolerance_f64).
void gemm_reference(std::int64_t M, std::int64_t N, std::int64_t K, GemmOperandOf<double> A, GemmOperandOf<double> B,
                    const double* bias, bool relu, double* C);

}  // namespace weft::ops
