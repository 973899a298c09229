// The documented accuracy of the generated transcendentals (docs/tpp_eltwise.md): the exact value
// in double and the bound a float result must meet, shared by the accuracy test of the TPP kernels
// on every ISA (tests/tpp/activation_accuracy_test.cpp) and the Neon activation emitter's test.
//
//   double rel = 0;
//   bool ok = weft::test::within_activation_bound(weft::test::exact_activation(op, x), got, rel);
#pragma once

#include <cmath>
#include <limits>

#include "weft/tpp/unary.hpp"

namespace weft::test {

// op(x) in double for exp, sigmoid, tanh and gelu (NaN for another op).
inline double exact_activation(weft::tpp::UnaryOp op, double x) {
  using weft::tpp::UnaryOp;
  switch (op) {
    case UnaryOp::exp: return std::exp(x);
    case UnaryOp::sigmoid: return x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x));
    case UnaryOp::tanh: return std::tanh(x);
    case UnaryOp::gelu:
      if (std::isinf(x)) return x > 0 ? x : -0.0;
      return x * 0.5 * std::erfc(-x / std::sqrt(2.0));
    default: return std::nan("");
  }
}

inline constexpr double kActivationRelBound = 1e-6;

// Whether `got` meets the bound for the exact value `ref`: relative error <= 1e-6 where ref is a
// normal float; absolute error <= 4 * 2^-149 where it is denormal; overflow to an infinity of the
// right sign only where ref is within the bound of FLT_MAX or beyond; NaN for NaN. `rel` is the
// relative error where it is measured (normal results), else 0.
inline bool within_activation_bound(double ref, float got, double& rel) {
  rel = 0;
  if (std::isnan(ref)) return std::isnan(got);
  if (std::isnan(got)) return false;
  const double flt_max = std::numeric_limits<float>::max();
  if (std::fabs(ref) > flt_max * (1 - kActivationRelBound)) {
    if (std::isinf(got)) return std::signbit(got) == std::signbit(ref);
  }
  if (std::isinf(ref)) return got == ref;
  if (std::fabs(ref) < std::numeric_limits<float>::min()) return std::fabs(got - ref) <= 4 * std::ldexp(1.0, -149);
  rel = std::fabs(got - ref) / std::fabs(ref);
  return rel <= kActivationRelBound;
}

}  // namespace weft::test
