#include "gemm_reference.hpp"

#include <cmath>
#include <vector>

namespace weft::samples {
namespace {

// The plain `rows x cols` matrix of `op`: a copy when it is stored transposed, so that the
// reference's loops keep walking columns.
const float* plain(const GemmOperand& op, std::int64_t rows, std::int64_t cols, std::vector<float>& copy) {
  if (!op.transposed) return op.data;
  copy.resize(static_cast<std::size_t>(rows * cols));
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < cols; ++c)
    for (std::int64_t r = 0; r < rows; ++r) copy[static_cast<std::size_t>(c * rows + r)] = op.data[r * cols + c];
  return copy.data();
}

}  // namespace

void gemm_reference(std::int64_t M, std::int64_t N, std::int64_t K, GemmOperand A_op, GemmOperand B_op,
                    const float* bias, bool relu, float* C, double* magnitude) {
  std::vector<float> a_copy, b_copy;
  const float* A = plain(A_op, M, K, a_copy);
  const float* B = plain(B_op, K, N, b_copy);
#pragma omp parallel
  {
    std::vector<double> column(static_cast<std::size_t>(M));
#pragma omp for schedule(static)
    for (std::int64_t j = 0; j < N; ++j) {
      for (std::int64_t i = 0; i < M; ++i) column[i] = bias != nullptr ? bias[i] : 0.0;
      for (std::int64_t k = 0; k < K; ++k) {
        const double b = B[j * K + k];
        const float* a = A + k * M;
        for (std::int64_t i = 0; i < M; ++i) column[i] += static_cast<double>(a[i]) * b;
      }
      for (std::int64_t i = 0; i < M; ++i) {
        const double v = relu && column[i] < 0 ? 0.0 : column[i];
        C[j * M + i] = static_cast<float>(v);
      }
      if (magnitude == nullptr) continue;
      // A second sweep rather than a second accumulator in the loop above: the f32 checks keep
      // their speed.
      double* m = magnitude + j * M;
      for (std::int64_t i = 0; i < M; ++i) m[i] = bias != nullptr ? std::fabs(static_cast<double>(bias[i])) : 0.0;
      for (std::int64_t k = 0; k < K; ++k) {
        const double b = std::fabs(static_cast<double>(B[j * K + k]));
        const float* a = A + k * M;
        for (std::int64_t i = 0; i < M; ++i) m[i] += std::fabs(static_cast<double>(a[i])) * b;
      }
    }
  }
}

}  // namespace weft::samples
