#include "weft/jit/cpu.hpp"

#include <gtest/gtest.h>

#include "host_isas.hpp"
#include "weft/jit/isa_traits.hpp"

namespace {

using weft::jit::Isa;

TEST(Cpu, IsaNamesRoundTrip) {
  for (Isa isa : weft::jit::kAllIsas) {
    EXPECT_EQ(weft::jit::parse_isa(weft::jit::to_string(isa)), isa);
    EXPECT_EQ(weft::jit::isa_traits(isa).isa, isa) << "each ISA's traits record names it";
  }
  EXPECT_EQ(weft::jit::to_string(Isa::sve256_bf16), "sve256_bf16");
  EXPECT_FALSE(weft::jit::parse_isa("sse2").has_value());
}

TEST(Cpu, BestIsaFollowsFeatures) {
  WEFT_SKIP_UNLESS_BUILT_FOR(Isa::avx2);
  weft::jit::CpuFeatures cpu;
  EXPECT_EQ(weft::jit::best_isa(cpu), Isa::reference);
  cpu.x86_64 = cpu.avx2 = true;
  EXPECT_EQ(weft::jit::best_isa(cpu), Isa::reference) << "AVX2 code uses FMA";
  cpu.fma = true;
  EXPECT_EQ(weft::jit::best_isa(cpu), Isa::avx2);
  cpu.avx512f = cpu.avx512bw = true;
  EXPECT_EQ(weft::jit::best_isa(cpu), Isa::avx2) << "AVX-512 code uses VL";
  cpu.avx512vl = true;
  EXPECT_EQ(weft::jit::best_isa(cpu), Isa::avx2) << "AVX-512 code uses DQ (vrangeps)";
  cpu.avx512dq = true;
  EXPECT_EQ(weft::jit::best_isa(cpu), Isa::avx512);
  cpu.avx512bf16 = true;
  EXPECT_EQ(weft::jit::best_isa(cpu), Isa::avx512_bf16);
  EXPECT_TRUE(weft::jit::can_run(Isa::avx512, cpu)) << "avx512_bf16 CPUs run plain AVX-512 code too";
  cpu.avx512vl = false;
  EXPECT_FALSE(weft::jit::can_run(Isa::avx512_bf16, cpu)) << "avx512_bf16 is AVX-512 F+BW+VL+DQ plus BF16";
  EXPECT_EQ(weft::jit::best_isa(cpu), Isa::avx2);
}

TEST(Cpu, NeonRunsOnAArch64WithAsimd) {
  weft::jit::CpuFeatures cpu;
  EXPECT_FALSE(weft::jit::can_run(Isa::neon, cpu));
  cpu.aarch64 = true;
  EXPECT_FALSE(weft::jit::can_run(Isa::neon, cpu)) << "Neon code needs Advanced SIMD";
  cpu.asimd = true;
  EXPECT_TRUE(weft::jit::can_run(Isa::neon, cpu));
  cpu.aarch64 = false;
  cpu.x86_64 = true;
  EXPECT_FALSE(weft::jit::can_run(Isa::neon, cpu));
}

// AArch64's choice, best first: wide SVE (with its BF16 where the CPU has both BF16s), then Neon
// (with BF16), and SVE at 128 bits only when asked for (WEFT_ISA): Neon is as fast at that width.
TEST(Cpu, Aarch64IsaFollowsFeaturesAndVectorLength) {
  WEFT_SKIP_UNLESS_BUILT_FOR(Isa::neon);
  weft::jit::CpuFeatures cpu;
  cpu.aarch64 = cpu.asimd = true;
  EXPECT_EQ(weft::jit::best_isa(cpu), Isa::neon) << "a Neoverse N1 or Cortex-A72";
  cpu.bf16 = true;
  EXPECT_EQ(weft::jit::best_isa(cpu), Isa::neon_bf16) << "BF16 without SVE (Apple M2)";
  cpu.sve = true;
  cpu.sve_vector_bytes = 16;
  cpu.sve_bf16 = true;
  EXPECT_EQ(weft::jit::best_isa(cpu), Isa::neon_bf16) << "Neoverse V2 / Grace: Neon at 128 bits";
  EXPECT_TRUE(weft::jit::can_run(Isa::sve128_bf16, cpu));
  EXPECT_FALSE(weft::jit::can_run(Isa::sve256, cpu)) << "code for one vector length runs at that length only";
  cpu.sve_vector_bytes = 32;
  EXPECT_EQ(weft::jit::best_isa(cpu), Isa::sve256_bf16) << "Neoverse V1 / Graviton 3";
  EXPECT_FALSE(weft::jit::can_run(Isa::sve128, cpu));
  cpu.bf16 = cpu.sve_bf16 = false;
  cpu.sve_vector_bytes = 64;
  EXPECT_EQ(weft::jit::best_isa(cpu), Isa::sve512) << "A64FX: SVE-512 without BF16";
  EXPECT_FALSE(weft::jit::can_run(Isa::neon_bf16, cpu));
  cpu.sve_vector_bytes = 128;
  EXPECT_EQ(weft::jit::best_isa(cpu), Isa::neon) << "a vector length without SVE kernels runs Neon";
}

TEST(Cpu, EveryIsaHasItsTraits) {
  for (Isa isa : weft::jit::kAllIsas) {
    const weft::jit::IsaTraits& t = weft::jit::isa_traits(isa);
    EXPECT_EQ(weft::jit::isa_traits(t.elementwise).elementwise, t.elementwise)
        << weft::jit::to_string(isa) << ": the element-wise ISA runs its own element-wise kernels";
    // SVE at 128 bits runs Neon's element-wise kernels, at 256 and 512 its own.
    if (t.tail == weft::jit::TailPolicy::predicate) {
      EXPECT_EQ(t.elementwise, t.vector_bytes == 16 ? Isa::neon : isa) << weft::jit::to_string(isa);
    }
  }
  EXPECT_EQ(weft::jit::isa_traits(Isa::sve256).lanes(4), 8);
  EXPECT_EQ(weft::jit::isa_traits(Isa::sve512_bf16).lanes(2), 32);
  EXPECT_TRUE(weft::jit::isa_traits(Isa::neon_bf16).bf16_dot);
  EXPECT_FALSE(weft::jit::isa_traits(Isa::sve128).bf16_dot);
}

TEST(Cpu, DetectedFeaturesAreConsistent) {
  const auto& cpu = weft::jit::cpu_features();
  EXPECT_GE(cpu.logical_cpus, 1);
  EXPECT_FALSE(cpu.model.empty());
  EXPECT_TRUE(weft::jit::can_run(weft::jit::selected_isa(), cpu));
}

}  // namespace
