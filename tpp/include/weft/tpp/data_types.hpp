// The element types of a TPP descriptor: what its kernel reads, writes and computes in. Every
// family's descriptor carries one DataTypes (field `types`, last, all f32 by default), so a
// descriptor written before types existed still means an FP32 kernel. (The field is declared
// `DataTypes types = {};`: without a default member initializer GCC's -Wmissing-field-initializers
// flags every designated initializer that leaves it out.)
//
//   using weft::jit::DataType;
//   weft::tpp::BrgemmDesc d{.m = 32, .n = 32, .k = 32, .lda = 32, .ldb = 32, .ldc = 32,
//                           .types = {.in = DataType::f64}};
//   weft::tpp::validate(d);  // throws: f64 in needs f64 out and compute
//
// The types are part of the descriptor's identity (==, hash) and, when not all f32, of its name.
// Argument structs carry untyped pointers (`const void*`); the descriptor says what they point to.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "weft/jit/data_type.hpp"

namespace weft::tpp {

struct DataTypes {
  jit::DataType in = jit::DataType::f32;       // inputs as read: BRGEMM's A and B, unary A, binary A and B
  jit::DataType out = jit::DataType::f32;      // the output as written (and, with beta = 1, read): C or B
  jit::DataType compute = jit::DataType::f32;  // arithmetic and accumulation

  bool operator==(const DataTypes&) const = default;
};

// "in_bf16_out_f32_compute_f32".
std::string to_string(const DataTypes& types);

// What descriptor names append: "" for all f32 (the names kernels had before types existed),
// otherwise "_" + to_string(types).
std::string name_suffix(const DataTypes& types);

// Why `types` name no DataType (a value outside the enum), "" otherwise.
std::string why_unsupported(const DataTypes& types);

// Why no BRGEMM kernel exists for `types`, "" when one does. Kernels exist for
//   in f32,  out f32,         compute f32
//   in bf16, out f32 or bf16, compute f32   (A in VNNI-2, see brgemm.hpp)
//   in f64,  out f64,         compute f64
std::string why_unsupported_brgemm(const DataTypes& types);

// Why no unary or binary kernel exists for `types`, "" when one does: in and out each f32 or bf16
// with compute f32, or all three f64. (Which ops each family has in each type is the family's
// validate()'s to say.)
std::string why_unsupported_elementwise(const DataTypes& types);

}  // namespace weft::tpp

template <>
struct std::hash<weft::tpp::DataTypes> {
  std::size_t operator()(const weft::tpp::DataTypes& t) const noexcept {
    return std::hash<unsigned>{}(static_cast<unsigned>(t.in) | static_cast<unsigned>(t.out) << 8 |
                                 static_cast<unsigned>(t.compute) << 16);
  }
};
