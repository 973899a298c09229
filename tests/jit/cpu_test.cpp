#include "weft/jit/cpu.hpp"

#include <gtest/gtest.h>

#include "host_isas.hpp"

namespace {

using weft::jit::Isa;

TEST(Cpu, IsaNamesRoundTrip) {
  for (Isa isa : {Isa::reference, Isa::avx2, Isa::avx512, Isa::avx512_bf16, Isa::neon}) {
    EXPECT_EQ(weft::jit::parse_isa(weft::jit::to_string(isa)), isa);
  }
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

TEST(Cpu, DetectedFeaturesAreConsistent) {
  const auto& cpu = weft::jit::cpu_features();
  EXPECT_GE(cpu.logical_cpus, 1);
  EXPECT_FALSE(cpu.model.empty());
  EXPECT_TRUE(weft::jit::can_run(weft::jit::selected_isa(), cpu));
}

}  // namespace
