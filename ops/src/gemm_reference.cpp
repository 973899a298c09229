#include <weft/ops/gemm_reference.hpp>

#include <cmath>
#include <vector>

#include "weft/tpp/min_max_relu.hpp"

namespace weft::ops {
namespace {

// The plain `rows x cols` matrix of `op`: a copy when it is stored transposed, so that the
// reference's loops keep walking columns.
template <class T>
const T* plain(const GemmOperandOf<T>& op, std::int64_t rows, std::int64_t cols, std::vector<T>& copy) {
  if (!op.transposed) return op.data;
  copy.resize(static_cast<std::size_t>(rows * cols));
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < cols; ++c)
    for (std::int64_t r = 0; r < rows; ++r) copy[static_cast<std::size_t>(c * rows + r)] = op.data[r * cols + c];
  return copy.data();
}

template <class T>
void reference(std::int64_t M, std::int64_t N, std::int64_t K, GemmOperandOf<T> A_op, GemmOperandOf<T> B_op,
               const T* bias, bool relu, T* C, Bf16Magnitudes* magnitudes, std::int64_t chunk_terms) {
  std::vector<T> a_copy, b_copy;
  const T* A = plain(A_op, M, K, a_copy);
  const T* B = plain(B_op, K, N, b_copy);
  const auto elements = static_cast<std::size_t>(M * N);
  if (magnitudes != nullptr) {
    magnitudes->terms.assign(elements, 0.0);
    magnitudes->partials.assign(chunk_terms > 0 ? elements : 0, 0.0);
  }
#pragma omp parallel
  {
    std::vector<double> column(static_cast<std::size_t>(M)), running;
#pragma omp for schedule(static)
    for (std::int64_t j = 0; j < N; ++j) {
      for (std::int64_t i = 0; i < M; ++i) column[i] = bias != nullptr ? bias[i] : 0.0;
      for (std::int64_t k = 0; k < K; ++k) {
        const double b = B[j * K + k];
        const T* a = A + k * M;
        for (std::int64_t i = 0; i < M; ++i) column[i] += static_cast<double>(a[i]) * b;
      }
      for (std::int64_t i = 0; i < M; ++i) {
        const double v = relu ? tpp::relu(column[i]) : column[i];
        C[j * M + i] = static_cast<T>(v);
      }
      if (magnitudes == nullptr) continue;
      // A second sweep rather than more accumulators in the loop above: the f32 checks keep their
      // speed. The running sums start without the bias, which the kernels add in the last call.
      double* terms = magnitudes->terms.data() + j * M;
      double* partials = chunk_terms > 0 ? magnitudes->partials.data() + j * M : nullptr;
      running.assign(static_cast<std::size_t>(M), 0.0);
      for (std::int64_t i = 0; i < M; ++i) terms[i] = bias != nullptr ? std::fabs(static_cast<double>(bias[i])) : 0.0;
      for (std::int64_t k = 0; k < K; ++k) {
        if (partials != nullptr && k > 0 && k % chunk_terms == 0)
          for (std::int64_t i = 0; i < M; ++i) partials[i] += std::fabs(running[i]);
        const double b = B[j * K + k];
        const T* a = A + k * M;
        for (std::int64_t i = 0; i < M; ++i) {
          running[i] += static_cast<double>(a[i]) * b;
          terms[i] += std::fabs(static_cast<double>(a[i]) * b);
        }
      }
    }
  }
}

}  // namespace

void gemm_reference(std::int64_t M, std::int64_t N, std::int64_t K, GemmOperand A, GemmOperand B,
                    const float* bias, bool relu, float* C, Bf16Magnitudes* magnitudes, std::int64_t chunk_terms) {
  reference(M, N, K, A, B, bias, relu, C, magnitudes, chunk_terms);
}

void gemm_reference(std::int64_t M, std::int64_t N, std::int64_t K, GemmOperandOf<double> A, GemmOperandOf<double> B,
                    const double* bias, bool relu, double* C) {
  reference(M, N, K, A, B, bias, relu, C, nullptr, 0);
}

}  // namespace weft::ops
