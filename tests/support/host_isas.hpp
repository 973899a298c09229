// The instruction sets whose generated code this host can run: the TPP tests run every kernel on
// each of them, since the library picks AVX-512 where the CPU has it and AVX2 elsewhere.
#pragma once

#include <vector>

#include "weft/jit/cpu.hpp"

namespace weft::test {

inline std::vector<weft::jit::Isa> runnable_isas() {
  std::vector<weft::jit::Isa> isas;
  for (weft::jit::Isa isa : {weft::jit::Isa::avx2, weft::jit::Isa::avx512})
    if (weft::jit::can_run(isa, weft::jit::cpu_features())) isas.push_back(isa);
  return isas;
}

// runnable_isas() and, where the CPU has AVX512_BF16, Isa::avx512_bf16: the ISAs whose bf16 code
// differs (avx512 emulates what avx512_bf16 has instructions for; their FP32 code is the same).
inline std::vector<weft::jit::Isa> runnable_bf16_isas() {
  std::vector<weft::jit::Isa> isas = runnable_isas();
  if (weft::jit::can_run(weft::jit::Isa::avx512_bf16, weft::jit::cpu_features())) isas.push_back(weft::jit::Isa::avx512_bf16);
  return isas;
}

}  // namespace weft::test
