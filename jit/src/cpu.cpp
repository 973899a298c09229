#include "weft/jit/cpu.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "weft/jit/architecture.hpp"
#include "weft/jit/error.hpp"
#include "weft/jit/log.hpp"

namespace weft::jit {
namespace {

// Bytes of this cache level and type ("Data", "Unified") of cpu0 as sysfs lists it; 0 when unknown.
// glibc's sysconf answers 0 on some architectures (AArch64), where sysfs has the sizes.
std::size_t sysfs_cache_bytes(int level, bool data) {
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream level_file(dir + "level"), type_file(dir + "type"), size_file(dir + "size");
    int l = 0;
    std::string type, size;
    if (!(level_file >> l) || !(type_file >> type) || !(size_file >> size)) continue;
    if (l != level || (data ? type != "Data" && type != "Unified" : type != "Unified")) continue;
    std::size_t value = 0;
    std::size_t i = 0;
    for (; i < size.size() && size[i] >= '0' && size[i] <= '9'; ++i)
      value = value * 10 + static_cast<std::size_t>(size[i] - '0');
    if (i < size.size() && size[i] == 'K') value <<= 10;
    if (i < size.size() && size[i] == 'M') value <<= 20;
    return value;
  }
  return 0;
}

std::size_t cache_bytes(int name, int level, bool data) {
  const long v = ::sysconf(name);
  return v > 0 ? static_cast<std::size_t>(v) : sysfs_cache_bytes(level, data);
}

// What the architecture reads (jit/arch/<arch>/), plus what the OS reports.
CpuFeatures detect() {
  CpuFeatures f = detect_cpu_features();
  f.logical_cpus = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  f.l1d_bytes = cache_bytes(_SC_LEVEL1_DCACHE_SIZE, 1, true);
  f.l2_bytes = cache_bytes(_SC_LEVEL2_CACHE_SIZE, 2, false);
  f.l3_bytes = cache_bytes(_SC_LEVEL3_CACHE_SIZE, 3, false);
  return f;
}

Isa choose_isa() {
  const CpuFeatures& cpu = cpu_features();
  const char* env = std::getenv("WEFT_ISA");
  if (env == nullptr || *env == '\0') return best_isa(cpu);
  const auto requested = parse_isa(env);
  // Only the architecture's ISAs (and reference): an ISA of another architecture (avx2 on AArch64,
  // neon on x86-64) is refused here, before anything is generated for it.
  const auto& offered = target_architecture().isas;
  const bool listed = requested && (*requested == Isa::reference ||
                                    std::find(offered.begin(), offered.end(), *requested) != offered.end());
  if (!listed) {
    std::string names;
    for (const Isa isa : target_architecture().isas) names += std::string(to_string(isa)) + ", ";
    throw Error(std::string("WEFT_ISA='") + env + "' is not one of " + names + "reference (the ISAs of " +
                std::string(target_architecture().name) + ")");
  }
  if (!can_run(*requested, cpu)) {
    throw Error(std::string("WEFT_ISA=") + env + " asks for code this CPU (" + cpu.model +
                ") cannot run; the best it runs is " + std::string(to_string(best_isa(cpu))));
  }
  return *requested;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

int known_datapath_bytes(const CpuFeatures& cpu) {
  if (!cpu.amd) return 0;
  if (cpu.family == 0x17) return cpu.model_number < 0x30 ? 16 : 32;
  if (cpu.family == 0x19) return 32;
  return 0;
}

bool can_run(Isa isa, const CpuFeatures& cpu) {
  switch (isa) {
    case Isa::reference: return true;
    case Isa::avx2: return cpu.x86_64 && cpu.avx2 && cpu.fma;
    case Isa::avx512: return cpu.x86_64 && cpu.avx512f && cpu.avx512bw && cpu.avx512vl && cpu.avx512dq;
    case Isa::avx512_bf16: return can_run(Isa::avx512, cpu) && cpu.avx512bf16;
    case Isa::neon: return cpu.aarch64 && cpu.asimd;
    case Isa::neon_bf16: return can_run(Isa::neon, cpu) && cpu.bf16;
    case Isa::sve128: return can_run(Isa::neon, cpu) && cpu.sve && cpu.sve_vector_bytes == 16;
    case Isa::sve256: return can_run(Isa::neon, cpu) && cpu.sve && cpu.sve_vector_bytes == 32;
    case Isa::sve512: return can_run(Isa::neon, cpu) && cpu.sve && cpu.sve_vector_bytes == 64;
    // The SVE bf16 kernels fall back to Neon's for what they lack, so they need both BF16s.
    case Isa::sve128_bf16: return can_run(Isa::sve128, cpu) && cpu.sve_bf16 && cpu.bf16;
    case Isa::sve256_bf16: return can_run(Isa::sve256, cpu) && cpu.sve_bf16 && cpu.bf16;
    case Isa::sve512_bf16: return can_run(Isa::sve512, cpu) && cpu.sve_bf16 && cpu.bf16;
  }
  return false;
}

Isa best_isa(const CpuFeatures& cpu) {
  for (const Isa isa : target_architecture().isas)
    if (can_run(isa, cpu)) return isa;
  return Isa::reference;
}

Isa selected_isa() {
  static const Isa isa = [] {
    const Isa chosen = choose_isa();
    log().info("ISA {} on {}", to_string(chosen), cpu_features().model);
    return chosen;
  }();
  return isa;
}

std::string_view to_string(Isa isa) {
  switch (isa) {
    case Isa::reference: return "reference";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
    case Isa::avx512_bf16: return "avx512_bf16";
    case Isa::neon: return "neon";
    case Isa::neon_bf16: return "neon_bf16";
    case Isa::sve128: return "sve128";
    case Isa::sve256: return "sve256";
    case Isa::sve512: return "sve512";
    case Isa::sve128_bf16: return "sve128_bf16";
    case Isa::sve256_bf16: return "sve256_bf16";
    case Isa::sve512_bf16: return "sve512_bf16";
  }
  return "unknown";
}

std::optional<Isa> parse_isa(std::string_view name) {
  for (const Isa isa : kAllIsas)
    if (name == to_string(isa)) return isa;
  return std::nullopt;
}

}  // namespace weft::jit
