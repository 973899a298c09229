// The one functor shape of the TPP families (TppKernel): every family is built from (desc, isa) for
// each ISA the host runs and for the reference, reports that ISA, hands out the generated entry and
// its bytes (or none for the reference) from one cache, checks its calls, and plans only valid
// descriptors.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "host_isas.hpp"
#include "tpp_families.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/jit/error.hpp"
#include "weft/jit/isa_traits.hpp"

namespace {

using weft::jit::Isa;

template <class Family>
class TppFunctor : public ::testing::Test {
 protected:
  // Small integers: every sum is exact, so any order of summation gives the reference's bits.
  TppFunctor() : in0(weft::test::kElements), in1(weft::test::kElements) {
    std::mt19937 rng(13);
    std::uniform_int_distribution<int> small(-4, 4);
    for (float& x : in0) x = static_cast<float>(small(rng));
    for (float& x : in1) x = static_cast<float>(small(rng));
  }

  std::vector<float> reference_output() const {
    std::vector<float> out(weft::test::kElements, -1.0f);
    Family::reference(Family::desc(), Family::args(in0.data(), in1.data(), out.data()));
    return out;
  }

  std::vector<float> in0, in1;
};

TYPED_TEST_SUITE(TppFunctor, weft::test::TppFamilyCases, weft::test::TppFamilyName);

std::vector<Isa> host_isas_and_reference() {
  std::vector<Isa> isas = weft::test::runnable_isas();
  isas.push_back(Isa::reference);
  return isas;
}

TYPED_TEST(TppFunctor, EveryHostIsaAndTheReference) {
  using F = TypeParam;
  const std::vector<float> want = this->reference_output();
  for (Isa isa : host_isas_and_reference()) {
    SCOPED_TRACE(std::string(weft::jit::to_string(isa)));
    const typename F::Functor k(F::desc(), isa);
    EXPECT_EQ(k.isa(), isa);
    // The family's plan for isa: BRGEMM plans for it, element-wise families for the ISA whose
    // kernels it runs (IsaTraits::elementwise: sve128 runs Neon's).
    EXPECT_EQ(k.plan().isa, F::plan(F::desc(), isa).isa);
    constexpr bool brgemm = std::is_same_v<F, weft::test::BrgemmFamilyCase>;
    EXPECT_EQ(k.plan().isa, brgemm ? isa : weft::jit::isa_traits(isa).elementwise);
    EXPECT_EQ(k.desc(), F::desc());
    const bool generated = isa != Isa::reference;
    EXPECT_EQ(k.kernel() != nullptr, generated);
    EXPECT_EQ(!k.code().empty(), generated);
    // One cache: the same (desc, isa) is the same kernel.
    const typename F::Functor again(F::desc(), isa);
    EXPECT_EQ(again.kernel(), k.kernel());
    EXPECT_EQ(again.code(), k.code());

    std::vector<float> got(weft::test::kElements, -1.0f);
    k(F::args(this->in0.data(), this->in1.data(), got.data()));
    EXPECT_EQ(got, want);
    std::vector<float> typed(weft::test::kElements, -1.0f);
    F::typed_call(k, this->in0.data(), this->in1.data(), typed.data());
    EXPECT_EQ(typed, want);
    if (generated) {
      std::vector<float> raw(weft::test::kElements, -1.0f);
      const typename F::Args args = F::args(this->in0.data(), this->in1.data(), raw.data());
      k.kernel()(&args);
      EXPECT_EQ(raw, want);
    }
  }
}

// A plan no planner filled in names no instruction set: the families share one default,
// Isa::reference (UnaryPlan and BinaryPlan defaulted to avx2 while BrgemmPlan had reference).
TYPED_TEST(TppFunctor, PlansDefaultToTheReferenceIsa) {
  using Plan = decltype(TypeParam::plan(TypeParam::desc(), Isa::reference));
  EXPECT_EQ(Plan{}.isa, Isa::reference);
}

TYPED_TEST(TppFunctor, DistinctIsasAreDistinctKernels) {
  using F = TypeParam;
  if (!weft::jit::can_run(Isa::avx512, weft::jit::cpu_features())) GTEST_SKIP() << "needs AVX-512";
  const typename F::Functor avx2(F::desc(), Isa::avx2), avx512(F::desc(), Isa::avx512);
  EXPECT_NE(avx2.kernel(), avx512.kernel());
  EXPECT_NE(avx2.code(), avx512.code());
}

TYPED_TEST(TppFunctor, ChecksEveryCall) {
  using F = TypeParam;
  for (Isa isa : host_isas_and_reference()) {
    const typename F::Functor k(F::desc(), isa);
    EXPECT_THROW(k(F::args(this->in0.data(), this->in1.data(), nullptr)), weft::Error) << weft::jit::to_string(isa);
  }
}

TYPED_TEST(TppFunctor, PlanAndConstructionValidateFirst) {
  using F = TypeParam;
  EXPECT_THROW(F::validate(F::invalid()), weft::Error);
  for (Isa isa : {Isa::avx2, Isa::avx512, Isa::reference}) {
    EXPECT_THROW(F::plan(F::invalid(), isa), weft::Error) << weft::jit::to_string(isa);
    EXPECT_THROW(typename F::Functor(F::invalid(), isa), weft::Error) << weft::jit::to_string(isa);
  }
}

TYPED_TEST(TppFunctor, AnIsaTheCpuCannotRunIsRefused) {
  using F = TypeParam;
  if (weft::jit::can_run(Isa::avx512, weft::jit::cpu_features())) GTEST_SKIP() << "this CPU runs every ISA";
  try {
    const typename F::Functor k(F::desc(), Isa::avx512);
    ADD_FAILURE() << "no error";
  } catch (const weft::Error& e) {
    EXPECT_NE(std::string(e.what()).find("this CPU cannot run avx512 code"), std::string::npos) << e.what();
  }
}

}  // namespace
