// x86-64: the registration point of the architecture (jit/include/weft/jit/architecture.hpp).
// CPUID through Xbyak's reader; the ISAs best first; Xbyak's errors become weft::Error.
#include "weft/jit/architecture.hpp"

#include <array>
#include <cstring>
#include <string>

#include <xbyak/xbyak.h>
#include <xbyak/xbyak_util.h>

#include "weft/jit/emitting.hpp"
#include "weft/jit/error.hpp"

namespace weft::jit {
namespace {

std::string brand_string() {
  unsigned int regs[12] = {};
  Xbyak::util::Cpu::getCpuid(0x80000000u, regs);
  if (regs[0] < 0x80000004u) return "unknown";
  for (unsigned int i = 0; i < 3; ++i) Xbyak::util::Cpu::getCpuid(0x80000002u + i, regs + 4 * i);
  char text[49] = {};
  std::memcpy(text, regs, 48);
  std::string s(text);
  const auto first = s.find_first_not_of(' ');
  const auto last = s.find_last_not_of(' ');
  return first == std::string::npos ? "unknown" : s.substr(first, last - first + 1);
}

constexpr std::array kIsas{Isa::avx512_bf16, Isa::avx512, Isa::avx2};

}  // namespace

const Architecture& target_architecture() {
  static constexpr Architecture arch{.name = "x86-64", .isas = kIsas};
  return arch;
}

CpuFeatures detect_cpu_features() {
  using Xbyak::util::Cpu;
  const Cpu cpu;
  CpuFeatures f;
  f.x86_64 = true;
  f.avx2 = cpu.has(Cpu::tAVX2);
  f.fma = cpu.has(Cpu::tFMA);
  f.avx512f = cpu.has(Cpu::tAVX512F);
  f.avx512bw = cpu.has(Cpu::tAVX512BW);
  f.avx512vl = cpu.has(Cpu::tAVX512VL);
  f.avx512dq = cpu.has(Cpu::tAVX512DQ);
  f.avx512bf16 = cpu.has(Cpu::tAVX512_BF16);
  f.amx_tile = cpu.has(Cpu::tAMX_TILE);
  f.amx_bf16 = cpu.has(Cpu::tAMX_BF16);
  f.model = brand_string();
  f.amd = cpu.has(Cpu::tAMD);
  f.family = static_cast<int>(cpu.displayFamily);
  f.model_number = static_cast<int>(cpu.displayModel);
  f.vector_datapath_bytes = known_datapath_bytes(f);
  return f;
}

void rethrow_assembler_error(std::string_view what) {
  try {
    throw;
  } catch (const Xbyak::Error& e) {
    throw Error(std::string(what) + ": code generation failed: " + e.what());
  }
}

}  // namespace weft::jit
