// What the architecture this build targets brings to the ISA-neutral layers. One definition per
// architecture, in jit/arch/<arch>/src/architecture.cpp; CMake compiles the target's folder only
// (docs/extending.md, "Add an architecture"):
//
//   for (weft::jit::Isa isa : weft::jit::target_architecture().isas) { ... }  // best first
#pragma once

#include <span>
#include <string_view>

#include "weft/jit/cpu.hpp"

namespace weft::jit {

struct Architecture {
  std::string_view name;       // "x86-64", "aarch64"
  std::span<const Isa> isas;   // the ISAs it generates code for, best first (not Isa::reference)
};

const Architecture& target_architecture();

// The CPU's instruction-set features and identity as the architecture reads them (CPUID on
// x86-64, getauxval(AT_HWCAP) on AArch64). cpu_features() adds what the OS reports (cores, caches).
CpuFeatures detect_cpu_features();

}  // namespace weft::jit
