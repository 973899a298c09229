// The element types a pass computes in (FP32, bf16 with fp32 accumulation, or FP64 for the GEMM
// passes) and the few things generic pass code needs of them: the jit::DataType of a C++ type,
// conversions from the float values the random inputs start as, and PARLOOPER's names for printing.
//
//   template <class T> void run(...) {
//     std::vector<float> a(n);
//     fill_random(a.data(), n, 1);
//     round_to_element_type<T>(a);                 // the values the sample computes on, exactly
//     const std::vector<T> a_t = converted<T>(a);  // the sample's copy in its own type
//   }
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <weft/jit/bfloat16.hpp>
#include <weft/jit/data_type.hpp>
#include <weft/jit/error.hpp>

namespace weft::ops {

using jit::bfloat16;

template <class T>
constexpr jit::DataType data_type_of() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, bfloat16> || std::is_same_v<T, double>,
                "the passes compute in float, bf16 or double");
  if constexpr (std::is_same_v<T, double>) return jit::DataType::f64;
  return std::is_same_v<T, float> ? jit::DataType::f32 : jit::DataType::bf16;
}

inline float to_float(float x) { return x; }
// A double result read back into the float-based checks of the samples (their plain copies and
// references are float; the f64 tests compare in double instead).
inline float to_float(double x) { return static_cast<float>(x); }
using jit::to_float;

template <class T>
T from_float(float x) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return x;  // exact in double too
  } else {
    return jit::to_bfloat16(x);
  }
}

// `values` rounded to T, as T.
template <class T>
std::vector<T> converted(const std::vector<float>& values) {
  std::vector<T> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = from_float<T>(values[i]);
  return out;
}

// Replaces each value by the nearest T (a no-op for float and double), so that a float reference computes on
// exactly the inputs the sample holds in T.
template <class T>
void round_to_element_type(std::vector<float>& values) {
  if constexpr (std::is_same_v<T, bfloat16>)
    for (float& v : values) v = to_float(from_float<T>(v));
}

// PARLOOPER's name of a precision: "FP32", "BF16" (its precision argument and what its samples
// print), and "FP64" in the same style.
inline std::string precision_name(jit::DataType type) {
  if (type == jit::DataType::f32) return "FP32";
  if (type == jit::DataType::bf16) return "BF16";
  if (type == jit::DataType::f64) return "FP64";
  return std::string(jit::to_string(type));
}

// Throws weft::Error "<where>: <name> is null" for the first null buffer of `buffers` (name, pointer),
// in their order: what a pass's run says of its arguments.
inline void require_buffers(const char* where, std::initializer_list<std::pair<const char*, const void*>> buffers) {
  for (const auto& [name, pointer] : buffers)
    if (pointer == nullptr) throw Error(std::string(where) + ": " + name + " is null");
}

// Throws weft::Error when `where` (a pass's run) gets buffers of T while it was built for
// `precision`: the kernels would read them as the other type.
template <class T>
void require_buffers_of(jit::DataType precision, const char* where) {
  if (data_type_of<T>() == precision) return;
  throw Error(std::string(where) + ": " + std::string(jit::to_string(data_type_of<T>())) +
              " buffers for a pass built for " + std::string(jit::to_string(precision)) +
              " (the configuration's dtype)");
}

}  // namespace weft::ops
