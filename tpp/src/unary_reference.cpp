// The portable reference of the unary TPPs: each element computed in double and rounded once, so it
// is the accuracy oracle of the generated code as well as the fallback under WEFT_ISA=reference.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "weft/tpp/unary.hpp"

namespace weft::tpp {
namespace {

bool relu_passes(float x) { return x > 0.0f || std::isnan(x); }

double phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

}  // namespace

float unary_reference_value(UnaryOp op, float x, float alpha) {
  const double v = x;
  switch (op) {
    case UnaryOp::zero: return 0.0f;
    case UnaryOp::copy: return x;
    case UnaryOp::relu: return relu_passes(x) ? x : 0.0f;
    case UnaryOp::square: return x * x;
    case UnaryOp::reciprocal: return 1.0f / x;
    case UnaryOp::sqrt: return std::sqrt(x);
    case UnaryOp::exp: return static_cast<float>(std::exp(v));
    case UnaryOp::sigmoid: return static_cast<float>(v >= 0 ? 1.0 / (1.0 + std::exp(-v)) : std::exp(v) / (1.0 + std::exp(v)));
    case UnaryOp::tanh: return static_cast<float>(std::tanh(v));
    case UnaryOp::gelu:
      // x Phi(x) underflows below about -14.1; -inf gives -0 as the limit.
      if (std::isinf(x)) return x > 0 ? x : -0.0f;
      return static_cast<float>(v * phi(v));
    case UnaryOp::increment: return x + alpha;
    case UnaryOp::decrement: return x - alpha;
    case UnaryOp::scale: return x * alpha;
    default: return std::numeric_limits<float>::quiet_NaN();
  }
}

void unary_reference(const UnaryDesc& d, const UnaryArgs& args) {
  validate(d);
  check_args(d, args);
  const std::int64_t lda = d.ld_in != 0 ? d.ld_in : args.ld_in;
  const std::int64_t ldb = d.ld_out != 0 ? d.ld_out : args.ld_out;
  // validate() admits only f32 kernels: the pointers are floats.
  const auto* a = static_cast<const float*>(args.in);
  auto* b = static_cast<float*>(args.out);
  const std::int64_t m = d.m, n = d.n;
  switch (d.op) {
    case UnaryOp::transpose:
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < m; ++i) b[j + i * ldb] = a[i + j * lda];
      return;
    case UnaryOp::reduce_rows_sum:
    case UnaryOp::reduce_rows_max: {
      const bool is_max = d.op == UnaryOp::reduce_rows_max;
      for (std::int64_t i = 0; i < m; ++i) {
        double s = 0;
        float mx = -std::numeric_limits<float>::infinity();
        for (std::int64_t j = 0; j < n; ++j) {
          s += a[i + j * lda];
          mx = std::fmax(mx, a[i + j * lda]);
        }
        b[i] = is_max ? mx : static_cast<float>(s);
      }
      return;
    }
    case UnaryOp::reduce_cols_sum:
    case UnaryOp::reduce_cols_max: {
      const bool is_max = d.op == UnaryOp::reduce_cols_max;
      for (std::int64_t j = 0; j < n; ++j) {
        double s = 0;
        float mx = -std::numeric_limits<float>::infinity();
        for (std::int64_t i = 0; i < m; ++i) {
          s += a[i + j * lda];
          mx = std::fmax(mx, a[i + j * lda]);
        }
        b[j] = is_max ? mx : static_cast<float>(s);
      }
      return;
    }
    case UnaryOp::relu_bwd: {
      const auto* mask = static_cast<const std::uint8_t*>(args.aux);
      const auto* x = static_cast<const float*>(args.aux);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < m; ++i) {
          const bool pass = d.mask == ReluMask::bitmask ? ((mask[j * mask_ld(m) + i / 8] >> (i % 8)) & 1) != 0
                                                        : relu_passes(x[i + j * lda]);
          b[i + j * ldb] = pass ? a[i + j * lda] : 0.0f;
        }
      return;
    }
    default: break;
  }
  if (d.op == UnaryOp::relu && d.mask == ReluMask::bitmask) {
    auto* mask = static_cast<std::uint8_t*>(args.mask);
    for (std::int64_t j = 0; j < n; ++j) std::memset(mask + j * mask_ld(m), 0, static_cast<std::size_t>(mask_ld(m)));
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i)
        if (relu_passes(a[i + j * lda])) mask[j * mask_ld(m) + i / 8] |= static_cast<std::uint8_t>(1u << (i % 8));
  }
  const std::int64_t row_stride = d.transpose_out ? ldb : 1;
  const std::int64_t col_stride = d.transpose_out ? 1 : ldb;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i)
      b[i * row_stride + j * col_stride] = unary_reference_value(d.op, d.op == UnaryOp::zero ? 0.0f : a[i + j * lda], d.alpha);
}

}  // namespace weft::tpp
