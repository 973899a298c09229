// The instruction sets whose generated code this host can run: the TPP tests run every kernel on
// each of them, since the library picks the best one the CPU has (AVX-512 or AVX2 on x86-64).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "weft/jit/architecture.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/jit/isa_traits.hpp"

namespace weft::test {

// The target architecture's ISAs this CPU runs, narrowest first, without those that only add bf16
// instructions (their FP32 code is their base ISA's).
inline std::vector<weft::jit::Isa> runnable_isas() {
  std::vector<weft::jit::Isa> isas;
  for (weft::jit::Isa isa : weft::jit::target_architecture().isas)
    if (weft::jit::can_run(isa, weft::jit::cpu_features()) && !weft::jit::isa_traits(isa).bf16_dot) isas.push_back(isa);
  std::reverse(isas.begin(), isas.end());
  return isas;
}

// runnable_isas() without those that run another's element-wise kernels (IsaTraits::elementwise:
// sve128 runs Neon's), for the unary and binary tests: the same code is not run twice.
inline std::vector<weft::jit::Isa> runnable_elementwise_isas() {
  std::vector<weft::jit::Isa> isas;
  for (weft::jit::Isa isa : runnable_isas()) {
    const weft::jit::Isa own = weft::jit::isa_traits(isa).elementwise;
    if (std::find(isas.begin(), isas.end(), own) == isas.end()) isas.push_back(own);
  }
  return isas;
}

// runnable_isas() and, where the CPU has them, the ISAs with bf16 instructions whose bf16 BRGEMM
// gives the reference's bits (IsaTraits::bf16_bit_exact): the ISAs whose bf16 code differs (avx512
// emulates what avx512_bf16 has instructions for), for the tests that compare bits. Arm's bfmmla
// kernels (neon_bf16, sve*_bf16) keep an error bound instead: runnable_bf16_bound_isas().
inline std::vector<weft::jit::Isa> runnable_bf16_isas() {
  std::vector<weft::jit::Isa> isas = runnable_isas();
  for (weft::jit::Isa isa : weft::jit::target_architecture().isas) {
    const weft::jit::IsaTraits& t = weft::jit::isa_traits(isa);
    if (weft::jit::can_run(isa, weft::jit::cpu_features()) && t.bf16_dot && t.bf16_bit_exact) isas.push_back(isa);
  }
  return isas;
}

// The ISAs this CPU runs whose bf16 BRGEMM keeps an error bound rather than the reference's bits.
inline std::vector<weft::jit::Isa> runnable_bf16_bound_isas() {
  std::vector<weft::jit::Isa> isas;
  for (weft::jit::Isa isa : weft::jit::target_architecture().isas) {
    const weft::jit::IsaTraits& t = weft::jit::isa_traits(isa);
    if (weft::jit::can_run(isa, weft::jit::cpu_features()) && t.bf16_dot && !t.bf16_bit_exact) isas.push_back(isa);
  }
  return isas;
}

// Whether this build generates code for `isa` (an ISA of the target architecture), whether or not
// the CPU runs it.
inline bool built_for(weft::jit::Isa isa) {
  const auto& isas = weft::jit::target_architecture().isas;
  return std::find(isas.begin(), isas.end(), isa) != isas.end();
}

}  // namespace weft::test

// For a test of one ISA's code (its instructions, its emission on hosts that cannot run it): skips
// by name in a build for another architecture.
#define WEFT_SKIP_UNLESS_BUILT_FOR(isa)                                                               \
  if (!weft::test::built_for(isa))                                                                    \
  GTEST_SKIP() << std::string(weft::jit::to_string(isa)) << " code: this build generates "            \
               << weft::jit::target_architecture().name << " code"
