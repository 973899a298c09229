#include "weft/tuner/workload_key.hpp"

#include <weft/jit/cpu.hpp>

namespace weft::tuner {

std::string WorkloadKey::to_string() const {
  std::string text = kind;
  for (const auto& [name, size] : shape) text += " " + name + "=" + std::to_string(size);
  text += " " + dtype + " threads=" + std::to_string(threads);
  if (!tiles.empty()) text += " tiles";
  for (const auto& [name, size] : tiles) text += " " + name + "=" + std::to_string(size);
  return text;
}

MachineFingerprint MachineFingerprint::current() {
  const jit::CpuFeatures& cpu = jit::cpu_features();
  MachineFingerprint m;
  m.cpu_model = cpu.model;
  m.isa = std::string(jit::to_string(jit::selected_isa()));
  m.logical_cpus = cpu.logical_cpus;
  m.l1d_bytes = cpu.l1d_bytes;
  m.l2_bytes = cpu.l2_bytes;
  m.l3_bytes = cpu.l3_bytes;
  return m;
}

std::string MachineFingerprint::to_string() const {
  return cpu_model + ", " + isa + ", " + std::to_string(logical_cpus) + " cpus, L1d " +
         std::to_string(l1d_bytes >> 10) + "K, L2 " + std::to_string(l2_bytes >> 10) + "K, L3 " +
         std::to_string(l3_bytes >> 10) + "K";
}

std::string_view weft_version() { return WEFT_VERSION_STRING; }

}  // namespace weft::tuner
