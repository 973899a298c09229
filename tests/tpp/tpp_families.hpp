// The three TPP families, described alike for typed tests of what they share (the functor shape,
// the descriptor's data types): a small valid descriptor, an invalid one, its plan, its reference,
// its argument struct over (in0, in1, out) buffers of kElements floats, and the data types its
// small descriptor has kernels for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include <gtest/gtest.h>

#include "weft/jit/cpu.hpp"
#include "weft/tpp/binary.hpp"
#include "weft/tpp/brgemm.hpp"
#include "weft/tpp/data_types.hpp"
#include "weft/tpp/unary.hpp"

namespace weft::test {

constexpr std::size_t kElements = 64;

struct BrgemmFamilyCase {
  using Functor = tpp::Brgemm;
  using Desc = tpp::BrgemmDesc;
  using Args = tpp::BrgemmArgs;
  using DescHash = tpp::BrgemmDescHash;
  // m = 13: above the rows for which AVX-512 plans AVX2 code (plan_brgemm), so that each ISA has
  // its own kernel.
  static Desc desc() { return {.m = 13, .n = 3, .k = 4, .lda = 13, .ldb = 4, .ldc = 14, .beta = 0}; }
  static Desc invalid() { return {.m = 13, .n = 3, .k = 4, .lda = 12, .ldb = 4, .ldc = 14, .beta = 0}; }  // lda < m
  static auto plan(const Desc& d, jit::Isa isa) { return tpp::plan_brgemm(d, isa); }
  static void validate(const Desc& d) { tpp::validate(d); }
  static void reference(const Desc& d, const Args& args) { tpp::brgemm_reference(d, args); }
  static Args args(const float* in0, const float* in1, float* out) { return {.a = in0, .b = in1, .c = out}; }
  static void typed_call(const Functor& k, const float* in0, const float* in1, float* out) { k(in0, in1, out); }
  // BRGEMM kernels are FP32 only so far (its bf16 and f64 kernels come from another change).
  static bool supports(const tpp::DataTypes& types) { return tpp::why_unsupported_brgemm(types).empty(); }
};

struct UnaryFamilyCase {
  using Functor = tpp::Unary;
  using Desc = tpp::UnaryDesc;
  using Args = tpp::UnaryArgs;
  using DescHash = tpp::UnaryDescHash;
  static Desc desc() { return {.op = tpp::UnaryOp::relu, .m = 5, .n = 3, .ld_in = 6, .ld_out = 7}; }
  static Desc invalid() { return {.op = tpp::UnaryOp::relu, .m = 5, .n = 3, .ld_in = 4, .ld_out = 7}; }  // ld_in < m
  static auto plan(const Desc& d, jit::Isa isa) { return tpp::plan_unary(d, isa); }
  static void validate(const Desc& d) { tpp::validate(d); }
  static void reference(const Desc& d, const Args& args) { tpp::unary_reference(d, args); }
  static Args args(const float* in0, const float*, float* out) { return {.in = in0, .out = out}; }
  static void typed_call(const Functor& k, const float* in0, const float*, float* out) { k(in0, out); }
  // relu has kernels in every type the element-wise TPPs take.
  static bool supports(const tpp::DataTypes& types) { return tpp::why_unsupported_elementwise(types).empty(); }
};

struct BinaryFamilyCase {
  using Functor = tpp::Binary;
  using Desc = tpp::BinaryDesc;
  using Args = tpp::BinaryArgs;
  using DescHash = tpp::BinaryDescHash;
  static Desc desc() {
    return {.op = tpp::BinaryOp::sub, .m = 5, .n = 3, .ld_in0 = 6, .ld_in1 = 0, .ld_out = 7, .bcast1 = tpp::Broadcast::col};
  }
  static Desc invalid() { return {.op = tpp::BinaryOp::sub, .m = 5, .n = 3, .ld_in0 = 6, .ld_in1 = 5, .ld_out = 4}; }  // ld_out < m
  static auto plan(const Desc& d, jit::Isa isa) { return tpp::plan_binary(d, isa); }
  static void validate(const Desc& d) { tpp::validate(d); }
  static void reference(const Desc& d, const Args& args) { tpp::binary_reference(d, args); }
  static Args args(const float* in0, const float* in1, float* out) { return {.in0 = in0, .in1 = in1, .out = out}; }
  static void typed_call(const Functor& k, const float* in0, const float* in1, float* out) { k(in0, in1, out); }
  // Every binary op has kernels in every type the element-wise TPPs take.
  static bool supports(const tpp::DataTypes& types) { return tpp::why_unsupported_elementwise(types).empty(); }
};

using TppFamilyCases = ::testing::Types<BrgemmFamilyCase, UnaryFamilyCase, BinaryFamilyCase>;

// Names the typed tests' instances by family: TppFunctor/Brgemm.EveryHostIsaAndTheReference.
struct TppFamilyName {
  template <class Family>
  static std::string GetName(int) {
    if (std::is_same_v<Family, BrgemmFamilyCase>) return "Brgemm";
    if (std::is_same_v<Family, UnaryFamilyCase>) return "Unary";
    return "Binary";
  }
};

}  // namespace weft::test
