// CPU feature detection and the choice of instruction set for generated code.
//
//   if (weft::jit::selected_isa() == weft::jit::Isa::avx2) { ... emit AVX2 code ... }
//
// WEFT_ISA=<name> (to_string's names: avx2, avx512, avx512_bf16, neon, neon_bf16, sve256, ...,
// reference) overrides the choice; asking for an ISA the CPU cannot run is an error (weft::Error),
// never an illegal instruction later.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace weft::jit {

// avx512_bf16 is avx512 plus AVX512_BF16 (vdpbf16ps, vcvtne2ps2bf16: Cooper Lake, Zen 4 and later).
// Its FP32 kernels are those of avx512; bf16 kernels use the instructions where avx512 emulates
// them, so WEFT_ISA=avx512 on such a CPU runs (and tests) the emulated path.
// neon is AArch64's Advanced SIMD (128-bit vectors, 32 registers), which every AArch64 Linux
// machine has; neon_bf16 adds FEAT_BF16's instructions (bfmmla, bfdot: HWCAP2_BF16), as
// avx512_bf16 does to avx512. sve128 / sve256 / sve512 are SVE at exactly that vector length
// (the thread's VL, read once: code for one length is wrong at another, so the length is part of
// the ISA and of every kernel's cache key); the _bf16 ones add SVE's BF16 (HWCAP2_SVEBF16).
enum class Isa {
  reference,
  avx2,
  avx512,
  avx512_bf16,
  neon,
  neon_bf16,
  sve128,
  sve256,
  sve512,
  sve128_bf16,
  sve256_bf16,
  sve512_bf16,
};

// Every enumerator of Isa, in declaration order (to_string / parse_isa go through it).
inline constexpr std::array<Isa, 12> kAllIsas{Isa::reference,   Isa::avx2,        Isa::avx512,     Isa::avx512_bf16,
                                             Isa::neon,        Isa::neon_bf16,   Isa::sve128,     Isa::sve256,
                                             Isa::sve512,      Isa::sve128_bf16, Isa::sve256_bf16, Isa::sve512_bf16};

struct CpuFeatures {
  bool x86_64 = false;
  bool avx2 = false;
  bool fma = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;  // vrangeps / vrangepd (the TPPs' min and max); every CPU with BW and VL has it
  bool avx512bf16 = false;
  bool amx_tile = false;
  bool amx_bf16 = false;
  // AArch64, from getauxval(AT_HWCAP / AT_HWCAP2) (never /proc/cpuinfo: under qemu-user it shows
  // the host).
  bool aarch64 = false;
  bool asimd = false;       // Neon (Advanced SIMD) with FP: every AArch64 Linux machine
  bool asimd_dot = false;   // sdot / udot
  bool sve = false;
  bool sve2 = false;
  bool bf16 = false;        // Neon bfdot / bfmmla / bfcvtn (FEAT_BF16)
  bool sve_bf16 = false;
  bool i8mm = false;
  int sve_vector_bytes = 0;  // this thread's SVE vector length (prctl PR_SVE_GET_VL); 0 without SVE
  std::string model;        // brand string, e.g. "AMD EPYC"
  bool amd = false;         // vendor AuthenticAMD
  int family = 0;           // CPUID display family and model, e.g. 0x19 / 0x11 for Zen 4 Genoa;
  int model_number = 0;     // on AArch64 MIDR_EL1's implementer and part, e.g. 0x41 / 0xd40 (Neoverse V1)
  // Widest vector one FMA pass executes, when known for this family (known_datapath_bytes); 0 when
  // unknown: assume the full vector. Zen 4 runs AVX-512 on 256-bit pipes (32).
  int vector_datapath_bytes = 0;
  int logical_cpus = 0;     // as the OS reports them
  std::size_t l1d_bytes = 0;  // per core; 0 when unknown
  std::size_t l2_bytes = 0;   // per core; 0 when unknown
  std::size_t l3_bytes = 0;   // total; 0 when unknown
};

// The datapath width known for cpu's vendor, family and model, in bytes; 0 when unknown. AMD family
// 0x17 models below 0x30 (Zen 1, Zen+) split 256-bit instructions in two 128-bit halves; Zen 2
// (0x17 from 0x30) and family 0x19 (Zen 3, Zen 4) have 256-bit pipes, on which Zen 4 runs a
// 512-bit instruction in two passes. Zen 5 (0x1A) has either width depending on the part: unknown.
int known_datapath_bytes(const CpuFeatures& cpu);

// Detected once, then cached.
const CpuFeatures& cpu_features();

// The best ISA this CPU runs: avx512 needs F+BW+VL+DQ, avx512_bf16 also AVX512_BF16, avx2 needs AVX2+FMA.
Isa best_isa(const CpuFeatures& cpu);

// Whether code for `isa` runs on `cpu`.
bool can_run(Isa isa, const CpuFeatures& cpu);

// best_isa(cpu_features()), or WEFT_ISA when set. Throws weft::Error when WEFT_ISA is not a known
// name or names an ISA this CPU cannot run. Read once, then cached.
Isa selected_isa();

std::string_view to_string(Isa isa);
std::optional<Isa> parse_isa(std::string_view name);

}  // namespace weft::jit
