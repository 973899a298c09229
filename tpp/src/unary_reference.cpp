// The portable reference of the unary TPPs: each element computed in double and rounded once, so it
// is the accuracy oracle of the generated code as well as the fallback under WEFT_ISA=reference.
// Data types: f32 and bf16 elements are read as floats (bf16 exactly) and computed as in f32; a bf16
// output is the float result rounded with jit::to_bfloat16, except where the op only selects one of
// its bf16 inputs (detail::keeps_bf16_bits), whose bits are then kept; f64 is computed in double.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "op_properties.hpp"
#include "weft/jit/bfloat16.hpp"
#include "weft/tpp/min_max_relu.hpp"
#include "weft/tpp/unary.hpp"

namespace weft::tpp {
namespace {

using jit::DataType;

// Whether x passes ReLU: relu(x) is x (x > 0 or NaN), not +0.
template <class V>
bool relu_passes(V x) {
  return x > V(0) || std::isnan(x);
}

double phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// Element access through the descriptor's types: V is float for f32 and bf16 data, double for f64.
template <class V>
struct Elements {
  const void* p;
  DataType type;
  V operator[](std::int64_t i) const {
    if constexpr (std::is_same_v<V, double>) {
      return static_cast<const double*>(p)[i];
    } else {
      if (type == DataType::bf16) return jit::to_float(static_cast<const jit::bfloat16*>(p)[i]);
      return static_cast<const float*>(p)[i];
    }
  }
};

template <class V>
struct Output {
  void* p;
  DataType type;
  bool keep_bits;  // detail::keeps_bf16_bits: the value is a bf16 input's, widened; store its bits
  void set(std::int64_t i, V v) const {
    if constexpr (std::is_same_v<V, double>) {
      static_cast<double*>(p)[i] = v;
    } else if (type == DataType::bf16) {
      static_cast<jit::bfloat16*>(p)[i] =
          keep_bits ? jit::bfloat16{static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(v) >> 16)} : jit::to_bfloat16(v);
    } else {
      static_cast<float*>(p)[i] = v;
    }
  }
};

// The f64 ops (validate admits only these in f64), in double: each correctly rounded.
double unary_value_f64(UnaryOp op, double x, double alpha) {
  switch (op) {
    case UnaryOp::zero: return 0.0;
    case UnaryOp::copy: return x;
    case UnaryOp::relu: return relu(x);
    case UnaryOp::square: return x * x;
    case UnaryOp::reciprocal: return 1.0 / x;
    case UnaryOp::sqrt: return std::sqrt(x);
    case UnaryOp::increment: return x + alpha;
    case UnaryOp::decrement: return x - alpha;
    case UnaryOp::scale: return x * alpha;
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

template <class V>
V value(UnaryOp op, V x, float alpha) {
  if constexpr (std::is_same_v<V, double>) {
    return unary_value_f64(op, x, alpha);
  } else {
    return unary_reference_value(op, x, alpha);
  }
}

template <class V>
void reference(const UnaryDesc& d, const UnaryArgs& args) {
  const std::int64_t lda = d.ld_in != 0 ? d.ld_in : args.ld_in;
  const std::int64_t ldb = d.ld_out != 0 ? d.ld_out : args.ld_out;
  const Elements<V> a{args.in, d.types.in};
  const Output<V> b{args.out, d.types.out, detail::keeps_bf16_bits(d)};
  const std::int64_t m = d.m, n = d.n;
  switch (d.op) {
    case UnaryOp::transpose:
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < m; ++i) b.set(j + i * ldb, a[i + j * lda]);
      return;
    case UnaryOp::vnni2_pack:
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < m; ++i) b.set(j / 2 * 2 * ldb + 2 * i + j % 2, a[i + j * lda]);
      return;
    case UnaryOp::vnni2_unpack:
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < m; ++i) b.set(i + j * ldb, a[j / 2 * 2 * lda + 2 * i + j % 2]);
      return;
    case UnaryOp::reduce_rows_sum:
    case UnaryOp::reduce_rows_max: {
      const bool is_max = d.op == UnaryOp::reduce_rows_max;
      for (std::int64_t i = 0; i < m; ++i) {
        double s = 0;
        V mx = -std::numeric_limits<V>::infinity();
        for (std::int64_t j = 0; j < n; ++j) {
          s += a[i + j * lda];
          mx = maximum(mx, a[i + j * lda]);
        }
        b.set(i, is_max ? mx : static_cast<V>(s));
      }
      return;
    }
    case UnaryOp::reduce_cols_sum:
    case UnaryOp::reduce_cols_max: {
      const bool is_max = d.op == UnaryOp::reduce_cols_max;
      for (std::int64_t j = 0; j < n; ++j) {
        double s = 0;
        V mx = -std::numeric_limits<V>::infinity();
        for (std::int64_t i = 0; i < m; ++i) {
          s += a[i + j * lda];
          mx = maximum(mx, a[i + j * lda]);
        }
        b.set(j, is_max ? mx : static_cast<V>(s));
      }
      return;
    }
    case UnaryOp::relu_bwd: {
      const auto* mask = static_cast<const std::uint8_t*>(args.aux);
      const Elements<V> x{args.aux, d.types.in};
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < m; ++i) {
          const bool pass = d.mask == ReluMask::bitmask ? ((mask[j * mask_ld(m) + i / 8] >> (i % 8)) & 1) != 0
                                                        : relu_passes(x[i + j * lda]);
          b.set(i + j * ldb, pass ? a[i + j * lda] : V(0));
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
      b.set(i * row_stride + j * col_stride, value<V>(d.op, d.op == UnaryOp::zero ? V(0) : a[i + j * lda], d.alpha));
}

}  // namespace

float unary_reference_value(UnaryOp op, float x, float alpha) {
  const double v = x;
  switch (op) {
    case UnaryOp::zero: return 0.0f;
    case UnaryOp::copy: return x;
    case UnaryOp::relu: return relu(x);
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
  if (d.types.compute == DataType::f64) {
    reference<double>(d, args);
  } else {
    reference<float>(d, args);
  }
}

}  // namespace weft::tpp
