// Data types in the TPP descriptors: part of each family's identity (==, hash, name) and validated,
// so that every combination without kernels is refused by name instead of running FP32 code on
// other data, and every one with kernels (the family's supports()) is accepted.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "tpp_families.hpp"
#include "weft/jit/data_type.hpp"
#include "weft/jit/error.hpp"
#include "weft/tpp/data_types.hpp"

namespace {

using weft::jit::DataType;
using weft::jit::Isa;
using weft::tpp::DataTypes;

constexpr DataType kTypes[] = {DataType::f32, DataType::bf16, DataType::f64};

std::vector<DataTypes> every_combination() {
  std::vector<DataTypes> all;
  for (DataType in : kTypes)
    for (DataType out : kTypes)
      for (DataType compute : kTypes) all.push_back(DataTypes{.in = in, .out = out, .compute = compute});
  return all;
}

TEST(DataType, SizesAndNames) {
  EXPECT_EQ(weft::jit::size_of(DataType::f32), 4u);
  EXPECT_EQ(weft::jit::size_of(DataType::bf16), 2u);
  EXPECT_EQ(weft::jit::size_of(DataType::f64), 8u);
  EXPECT_EQ(weft::jit::to_string(DataType::bf16), "bf16");
  EXPECT_EQ(weft::jit::to_string(static_cast<DataType>(9)), "?");
  EXPECT_EQ(weft::tpp::to_string(DataTypes{.out = DataType::f64}), "in_f32_out_f64_compute_f32");
  EXPECT_EQ(weft::tpp::name_suffix(DataTypes{}), "");
  EXPECT_EQ(weft::tpp::why_unsupported(DataTypes{}), "");
}

template <class Family>
class DescriptorTypes : public ::testing::Test {};

TYPED_TEST_SUITE(DescriptorTypes, weft::test::TppFamilyCases, weft::test::TppFamilyName);

TYPED_TEST(DescriptorTypes, AllF32IsTheDefaultAndKeepsTheName) {
  using F = TypeParam;
  const typename F::Desc d = F::desc();
  EXPECT_EQ(d.types, DataTypes{});
  EXPECT_EQ(to_string(d).find("_in_"), std::string::npos) << to_string(d);
  EXPECT_NO_THROW(F::validate(d));
}

TYPED_TEST(DescriptorTypes, EveryOtherCombinationIsRefusedByName) {
  using F = TypeParam;
  int accepted = 0;
  for (const DataTypes& types : every_combination()) {
    if (types == DataTypes{}) continue;
    typename F::Desc d = F::desc();
    d.types = types;
    const std::string combination = weft::tpp::to_string(types);
    SCOPED_TRACE(combination);
    EXPECT_NE(to_string(d).find("_" + combination), std::string::npos) << to_string(d);
    if (F::supports(types)) {
      ++accepted;
      EXPECT_NO_THROW(F::validate(d));
      EXPECT_NO_THROW(F::plan(d, Isa::avx2));
      EXPECT_NO_THROW(typename F::Functor(d, Isa::reference));
      continue;
    }
    try {
      F::validate(d);
      ADD_FAILURE() << "no error";
    } catch (const weft::Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("data types " + combination + " are not supported"), std::string::npos) << what;
    }
    EXPECT_THROW(F::plan(d, Isa::avx2), weft::Error);
    EXPECT_THROW(typename F::Functor(d, Isa::reference), weft::Error);
  }
  // The element-wise families take bf16 in and/or out with compute f32 (3 besides all f32) and all
  // f64 (1); BRGEMM bf16 in with f32 or bf16 out (2) and all f64 (1).
  EXPECT_EQ(accepted, (std::is_same_v<F, weft::test::BrgemmFamilyCase> ? 3 : 4));
}

TYPED_TEST(DescriptorTypes, ATypeOutsideTheEnumIsNamed) {
  using F = TypeParam;
  typename F::Desc d = F::desc();
  d.types.compute = static_cast<DataType>(7);
  try {
    F::validate(d);
    ADD_FAILURE() << "no error";
  } catch (const weft::Error& e) {
    EXPECT_NE(std::string(e.what()).find("type#7 is no DataType (f32, bf16, f64)"), std::string::npos) << e.what();
  }
}

TYPED_TEST(DescriptorTypes, EqualityAndHashTellTypesApart) {
  using F = TypeParam;
  std::set<std::size_t> hashes;
  std::set<std::string> names;
  const typename F::Desc plain = F::desc();
  for (const DataTypes& types : every_combination()) {
    typename F::Desc d = plain;
    d.types = types;
    EXPECT_EQ(d == plain, types == DataTypes{}) << weft::tpp::to_string(types);
    hashes.insert(typename F::DescHash{}(d));
    names.insert(to_string(d));
  }
  EXPECT_EQ(hashes.size(), 27u);
  EXPECT_EQ(names.size(), 27u);
}

}  // namespace
