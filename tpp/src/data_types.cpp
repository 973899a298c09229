// The element types of TPP descriptors: names and what is implemented.
#include <string>

#include "weft/tpp/data_types.hpp"

namespace weft::tpp {
namespace {

constexpr jit::DataType kLastDataType = jit::DataType::f64;

std::string name(jit::DataType type) {
  if (static_cast<unsigned>(type) > static_cast<unsigned>(kLastDataType))
    return "type#" + std::to_string(static_cast<unsigned>(type));
  return std::string(jit::to_string(type));
}

}  // namespace

std::string to_string(const DataTypes& types) {
  return "in_" + name(types.in) + "_out_" + name(types.out) + "_compute_" + name(types.compute);
}

std::string name_suffix(const DataTypes& types) {
  return types == DataTypes{} ? std::string() : "_" + to_string(types);
}

std::string why_unsupported(const DataTypes& types) {
  for (jit::DataType type : {types.in, types.out, types.compute})
    if (static_cast<unsigned>(type) > static_cast<unsigned>(kLastDataType))
      return "data types " + to_string(types) + ": " + name(type) + " is no DataType (f32, bf16, f64)";
  return {};
}

namespace {

using jit::DataType;

bool all_f64(const DataTypes& t) { return t.in == DataType::f64 && t.out == DataType::f64 && t.compute == DataType::f64; }
bool f32_or_bf16(DataType t) { return t == DataType::f32 || t == DataType::bf16; }

}  // namespace

std::string why_unsupported_brgemm(const DataTypes& types) {
  if (std::string why = why_unsupported(types); !why.empty()) return why;
  if (types == DataTypes{} || all_f64(types)) return {};
  if (types.in == DataType::bf16 && f32_or_bf16(types.out) && types.compute == DataType::f32) return {};
  return "data types " + to_string(types) +
         " are not supported by BRGEMM: it has in/out/compute f32/f32/f32, bf16/f32/f32, bf16/bf16/f32 and f64/f64/f64";
}

std::string why_unsupported_elementwise(const DataTypes& types) {
  if (std::string why = why_unsupported(types); !why.empty()) return why;
  if (all_f64(types)) return {};
  if (f32_or_bf16(types.in) && f32_or_bf16(types.out) && types.compute == DataType::f32) return {};
  return "data types " + to_string(types) +
         " are not supported by the element-wise TPPs: in and out each f32 or bf16 with compute f32, or all f64";
}

}  // namespace weft::tpp
