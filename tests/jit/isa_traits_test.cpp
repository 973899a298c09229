// The per-ISA traits record: its values for every ISA, the datapath facts from CPUID, and that the
// plans and emitters of every layer take their lanes, registers and defaults from it.
#include "weft/jit/isa_traits.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "weft/jit/cpu.hpp"
#include "weft/jit/error.hpp"
#include "weft/tpp/binary.hpp"
#include "weft/tpp/brgemm.hpp"
#include "weft/tpp/unary.hpp"

namespace {

using weft::jit::Isa;
using weft::jit::isa_traits;
using weft::jit::IsaTraits;
using weft::jit::TailPolicy;

constexpr Isa kAllIsas[] = {Isa::reference, Isa::avx2, Isa::avx512, Isa::avx512_bf16, Isa::neon};
constexpr Isa kGeneratedIsas[] = {Isa::avx2, Isa::avx512, Isa::avx512_bf16, Isa::neon};

// Usable in constant expressions: emitters can size arrays with it.
static_assert(isa_traits(Isa::avx2).lanes(sizeof(float)) == 8);
static_assert(isa_traits(Isa::avx512).lanes(sizeof(float)) == 16);
static_assert(isa_traits(Isa::neon).lanes(sizeof(float)) == 4);

TEST(IsaTraits, EveryIsaHasItsOwnRecord) {
  for (Isa isa : kAllIsas) EXPECT_EQ(isa_traits(isa).isa, isa) << weft::jit::to_string(isa);
}

// What each generated ISA's record must say (the values the plans were measured with).
struct Expected {
  Isa isa;
  int vector_bytes, vector_registers;
  TailPolicy tail;
  bool bf16_dot;
  int narrowest_datapath_bytes;
  weft::jit::BrgemmIsaDefaults brgemm;
};

constexpr Expected kExpected[] = {
    {Isa::avx2, 32, 16, TailPolicy::piecewise, false, 16,
     {.panel_vectors = 4, .widen_to_avoid_single_vector_panel = false, .k_unroll = 8, .two_vector_max_cols = 0, .dot_tiles = true}},
    {Isa::avx512, 64, 32, TailPolicy::opmask, false, 32,  // Zen 4's 256-bit pipes
     {.panel_vectors = 4, .widen_to_avoid_single_vector_panel = true, .k_unroll = 2, .two_vector_max_cols = 8, .dot_tiles = false}},
    {Isa::avx512_bf16, 64, 32, TailPolicy::opmask, true, 32,  // AVX-512's record plus the bf16 instructions
     {.panel_vectors = 4, .widen_to_avoid_single_vector_panel = true, .k_unroll = 2, .two_vector_max_cols = 8, .dot_tiles = false}},
    {Isa::neon, 16, 32, TailPolicy::piecewise, false, 16,  // AArch64 Advanced SIMD
     {.panel_vectors = 4, .widen_to_avoid_single_vector_panel = false, .k_unroll = 4, .two_vector_max_cols = 0, .dot_tiles = false}},
};

TEST(IsaTraits, GeneratedIsas) {
  for (const Expected& e : kExpected) {
    const IsaTraits& t = isa_traits(e.isa);
    SCOPED_TRACE(weft::jit::to_string(e.isa));
    EXPECT_EQ(t.vector_bytes, e.vector_bytes);
    EXPECT_EQ(t.lanes(4), e.vector_bytes / 4);
    EXPECT_EQ(t.lanes(2), e.vector_bytes / 2);
    EXPECT_EQ(t.lanes(8), e.vector_bytes / 8);
    EXPECT_EQ(t.vector_registers, e.vector_registers);
    EXPECT_EQ(t.tail, e.tail);
    EXPECT_TRUE(t.fma);
    EXPECT_EQ(t.bf16_dot, e.bf16_dot);
    EXPECT_EQ(t.narrowest_datapath_bytes, e.narrowest_datapath_bytes);
    EXPECT_EQ(t.brgemm.panel_vectors, e.brgemm.panel_vectors);
    EXPECT_EQ(t.brgemm.widen_to_avoid_single_vector_panel, e.brgemm.widen_to_avoid_single_vector_panel);
    EXPECT_EQ(t.brgemm.k_unroll, e.brgemm.k_unroll);
    EXPECT_EQ(t.brgemm.two_vector_max_cols, e.brgemm.two_vector_max_cols);
    EXPECT_EQ(t.brgemm.dot_tiles, e.brgemm.dot_tiles);
  }
  EXPECT_EQ(isa_traits(Isa::avx2).lanes(4), 8);
  EXPECT_EQ(isa_traits(Isa::avx512).lanes(4), 16);
  EXPECT_EQ(isa_traits(Isa::neon).lanes(4), 4);
}

TEST(IsaTraits, ReferenceIsTheCompilersBaseline) {
  const IsaTraits& t = isa_traits(Isa::reference);
  EXPECT_EQ(t.vector_bytes, 16);
  EXPECT_EQ(t.lanes(4), 4);
  EXPECT_EQ(t.tail, TailPolicy::none);
  EXPECT_FALSE(t.fma);
  EXPECT_FALSE(t.bf16_dot);
}

TEST(IsaTraits, AValueOutsideTheEnumIsAnError) {
  try {
    (void)isa_traits(static_cast<Isa>(42));
    FAIL() << "no error";
  } catch (const weft::Error& e) {
    EXPECT_NE(std::string(e.what()).find("42"), std::string::npos) << e.what();
  }
}

TEST(IsaTraits, PlansTakeLanesRegistersAndDefaultsFromTheRecord) {
  for (Isa isa : kGeneratedIsas) {
    SCOPED_TRACE(weft::jit::to_string(isa));
    const IsaTraits& t = isa_traits(isa);
    const weft::tpp::BrgemmDesc d{.m = 64, .n = 24, .k = 64, .lda = 64, .ldb = 64, .ldc = 64};
    const weft::tpp::BrgemmPlan plan = weft::tpp::plan_brgemm(d, isa);
    EXPECT_EQ(plan.lanes, t.lanes(sizeof(float)));
    EXPECT_EQ(plan.vector_registers, t.vector_registers);
    EXPECT_EQ(plan.k_unroll, t.brgemm.k_unroll);
    ASSERT_FALSE(plan.panels.empty());
    EXPECT_EQ(plan.panels.front().rows(plan.lanes), t.brgemm.panel_vectors * plan.lanes);
    const weft::tpp::UnaryDesc u{.op = weft::tpp::UnaryOp::relu, .m = 37, .n = 3, .ld_in = 40, .ld_out = 40};
    EXPECT_EQ(weft::tpp::plan_unary(u, isa).lanes, t.lanes(sizeof(float)));
    const weft::tpp::BinaryDesc b{.op = weft::tpp::BinaryOp::add, .m = 37, .n = 3, .ld_in0 = 40, .ld_in1 = 40, .ld_out = 40};
    EXPECT_EQ(weft::tpp::plan_binary(b, isa).lanes, t.lanes(sizeof(float)));
    // m = 1 runs as dot tiles exactly where the record says the emitter has them (AVX-512 plans
    // AVX2 code for m <= 8 unless told not to).
    const weft::tpp::BrgemmDesc row{.m = 1, .n = 8, .k = 64, .lda = 1, .ldb = 64, .ldc = 1};
    EXPECT_EQ(weft::tpp::plan_brgemm(row, isa, {.narrow_ymm = -1}).panels.front().dot, t.brgemm.dot_tiles);
  }
}

TEST(IsaTraits, DatapathFromCpuFamily) {
  weft::jit::CpuFeatures cpu;
  EXPECT_EQ(weft::jit::known_datapath_bytes(cpu), 0) << "unknown vendor";
  cpu.amd = true;
  cpu.family = 0x19;
  cpu.model_number = 0x11;  // Zen 4 (Genoa)
  EXPECT_EQ(weft::jit::known_datapath_bytes(cpu), 32);
  cpu.family = 0x17;
  cpu.model_number = 0x08;  // Zen+
  EXPECT_EQ(weft::jit::known_datapath_bytes(cpu), 16);
  cpu.model_number = 0x31;  // Zen 2 (Rome)
  EXPECT_EQ(weft::jit::known_datapath_bytes(cpu), 32);
  cpu.family = 0x1A;  // Zen 5: 256 or 512 bits depending on the part
  EXPECT_EQ(weft::jit::known_datapath_bytes(cpu), 0);
  cpu.amd = false;
  cpu.family = 6;
  EXPECT_EQ(weft::jit::known_datapath_bytes(cpu), 0);
}

TEST(IsaTraits, DatapathBytesOfAnIsaOnACpu) {
  weft::jit::CpuFeatures cpu;
  EXPECT_EQ(weft::jit::datapath_bytes(Isa::avx512, cpu), 64) << "unknown: the full vector";
  cpu.vector_datapath_bytes = 32;  // Zen 4
  EXPECT_EQ(weft::jit::datapath_bytes(Isa::avx512, cpu), 32);
  EXPECT_EQ(weft::jit::datapath_bytes(Isa::avx2, cpu), 32);
  cpu.vector_datapath_bytes = 16;  // Zen 1
  EXPECT_EQ(weft::jit::datapath_bytes(Isa::avx2, cpu), 16);
}

TEST(IsaTraits, DetectedDatapathFollowsTheFamily) {
  const weft::jit::CpuFeatures& cpu = weft::jit::cpu_features();
  EXPECT_EQ(cpu.vector_datapath_bytes, weft::jit::known_datapath_bytes(cpu));
  if (cpu.x86_64) {
    EXPECT_GT(cpu.family, 0);
  }
}

}  // namespace
