// Element types of the data generated code reads, writes and computes in. It lives in the bottom
// layer so that kernels (tpp), contractions (tensor) and the tuner name types the same way.
//
//   using weft::jit::DataType;
//   std::size_t bytes = weft::jit::size_of(DataType::bf16) * n;  // 2 * n
//   std::string_view name = weft::jit::to_string(DataType::f64); // "f64"
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace weft::jit {

// f32: IEEE binary32; bf16: bfloat16 (binary32's upper 16 bits); f64: IEEE binary64.
enum class DataType : std::uint8_t { f32, bf16, f64 };

// Bytes per element; 0 for a value outside the enum (descriptors reject those when validated).
constexpr std::size_t size_of(DataType type) {
  switch (type) {
    case DataType::f32: return 4;
    case DataType::bf16: return 2;
    case DataType::f64: return 8;
  }
  return 0;
}

// "f32", "bf16", "f64"; "?" for a value outside the enum.
constexpr std::string_view to_string(DataType type) {
  switch (type) {
    case DataType::f32: return "f32";
    case DataType::bf16: return "bf16";
    case DataType::f64: return "f64";
  }
  return "?";
}

}  // namespace weft::jit
