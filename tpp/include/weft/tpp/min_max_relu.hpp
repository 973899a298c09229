// The one rule of min, max and ReLU, for every element-wise path of weft (the binary min / max
// TPPs, the max reductions, the unary ReLU, BRGEMM's ReLU epilogue, the tensor layer's reference
// and portable kernels, the samples' references): IEEE 754-2019 `maximum` / `minimum`, as PyTorch
// (torch.maximum, amax, relu) and NumPy (np.maximum, np.max) compute them. A NaN operand gives NaN,
// so that a diverging model's NaN is never hidden by a min, max, ReLU or max-pool; -0 orders below
// +0, so that the result does not depend on the operands' order. See docs/tpp_eltwise.md,
// "NaN and signed zeros".
//
//   weft::tpp::maximum(1.0f, NAN)   // NaN (quiet)
//   weft::tpp::maximum(-0.0f, 0.0f) // +0, as maximum(0.0f, -0.0f)
//   weft::tpp::relu(-0.0)           // +0
#pragma once

#include <bit>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <type_traits>

namespace weft::tpp {

// The NaN that min / max return: all bits set (a quiet NaN). The generated kernels produce this one
// (it is their unordered-compare mask), so the reference returns it too.
template <std::floating_point T>
T min_max_nan() {
  using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  static_assert(sizeof(T) == sizeof(Bits), "float or double");
  return std::bit_cast<T>(~Bits{0});
}

// NaN if a or b is NaN (quiet or signaling), else the larger; maximum(-0, +0) = maximum(+0, -0) = +0.
template <std::floating_point T>
T maximum(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return min_max_nan<T>();
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

// NaN if a or b is NaN, else the smaller; minimum(-0, +0) = minimum(+0, -0) = -0.
template <std::floating_point T>
T minimum(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return min_max_nan<T>();
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

// x where x > 0 or x is NaN (its bits kept), else +0: relu(-0) = +0, relu(-inf) = +0.
template <std::floating_point T>
T relu(T x) {
  return x > T(0) || std::isnan(x) ? x : T(0);
}

}  // namespace weft::tpp
