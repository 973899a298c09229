// AArch64: the registration point of the architecture (jit/include/weft/jit/architecture.hpp).
// Features come from the kernel's hardware capabilities (getauxval), the identity from MIDR_EL1
// where the kernel lets user code read it (HWCAP_CPUID).
#include "weft/jit/architecture.hpp"

#include <asm/hwcap.h>
#include <sys/auxv.h>
#include <sys/prctl.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>

#include "weft/jit/emitting.hpp"

namespace weft::jit {
namespace {

// The ISAs this build offers, best first (best_isa takes the first this CPU runs; every TPP family
// has Neon emitters, tpp/src/arch/aarch64/emitters.cpp, and the SVE ones fall back to them). At most
// one SVE length runs on a CPU (the thread's VL). Wide SVE (256, 512 bits) comes before Neon: twice
// or four times the lanes per instruction. At 128 bits Neon comes first, as libxsmm does on
// Neoverse V2: the same lanes, and the llvm-mca model of its kernels is no slower (docs/tpp_brgemm.md);
// WEFT_ISA=sve128 still selects SVE there. bf16 instructions come before their base ISA. Loop nests
// run generated A64 code whatever the ISA.
constexpr std::array<Isa, 8> kIsas{Isa::sve512_bf16, Isa::sve512,    Isa::sve256_bf16, Isa::sve256,
                                   Isa::neon_bf16,   Isa::neon,      Isa::sve128_bf16, Isa::sve128};

struct KnownPart {
  unsigned implementer, part;
  const char* name;
};

// Cores we tune for or model (llvm-mca -mcpu), by MIDR_EL1 implementer and part number.
constexpr KnownPart kKnownParts[] = {
    {0x41, 0xd0c, "Arm Neoverse N1"}, {0x41, 0xd40, "Arm Neoverse V1"}, {0x41, 0xd49, "Arm Neoverse N2"},
    {0x41, 0xd4f, "Arm Neoverse V2"}, {0x41, 0xd84, "Arm Neoverse V3"}, {0x61, 0x022, "Apple M1 Icestorm"},
    {0x61, 0x023, "Apple M1 Firestorm"},
};

std::string part_name(unsigned implementer, unsigned part) {
  for (const KnownPart& k : kKnownParts)
    if (k.implementer == implementer && k.part == part) return k.name;
  char text[64];
  std::snprintf(text, sizeof text, "AArch64 implementer 0x%02x part 0x%03x", implementer, part);
  return text;
}

}  // namespace

const Architecture& target_architecture() {
  static constexpr Architecture arch{.name = "aarch64", .isas = kIsas};
  return arch;
}

CpuFeatures detect_cpu_features() {
  CpuFeatures f;
  const unsigned long hwcap = ::getauxval(AT_HWCAP);
  const unsigned long hwcap2 = ::getauxval(AT_HWCAP2);
  f.aarch64 = true;
  f.asimd = (hwcap & HWCAP_ASIMD) != 0 && (hwcap & HWCAP_FP) != 0;
  f.asimd_dot = (hwcap & HWCAP_ASIMDDP) != 0;
  f.sve = (hwcap & HWCAP_SVE) != 0;
  f.sve2 = (hwcap2 & HWCAP2_SVE2) != 0;
  f.bf16 = (hwcap2 & HWCAP2_BF16) != 0;
  f.sve_bf16 = (hwcap2 & HWCAP2_SVEBF16) != 0;
  f.i8mm = (hwcap2 & HWCAP2_I8MM) != 0;
  if (f.sve) {
    const int vl = ::prctl(PR_SVE_GET_VL);
    if (vl > 0) f.sve_vector_bytes = vl & PR_SVE_VL_LEN_MASK;
  }
  f.model = "AArch64";
  if ((hwcap & HWCAP_CPUID) != 0) {
    // The kernel emulates this read for user code (HWCAP_CPUID); qemu-user answers it too.
    std::uint64_t midr = 0;
    asm volatile("mrs %0, midr_el1" : "=r"(midr));
    f.family = static_cast<int>((midr >> 24) & 0xff);
    f.model_number = static_cast<int>((midr >> 4) & 0xfff);
    f.model = part_name(static_cast<unsigned>(f.family), static_cast<unsigned>(f.model_number));
  }
  return f;
}

// Our A64 assembler throws weft::Error itself (emitting() passes those on): anything else is not
// an assembler's.
void rethrow_assembler_error(std::string_view) { throw; }

}  // namespace weft::jit
