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
  if (types == DataTypes{}) return {};
  return "data types " + to_string(types) +
         " are not supported: only all-f32 kernels exist (bf16 and f64 kernels are not implemented yet)";
}

}  // namespace weft::tpp
