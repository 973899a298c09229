// The identity of a tuning result: what was tuned (workload kind, shape, data type, threads), on
// which machine (CPU model, ISA, cores, cache sizes) and with which weft.
//
//   WorkloadKey key{.kind = "gemm_fwd", .shape = {{"M", 1024}, {"N", 1024}, {"K", 1024}}, .threads = 2};
//   MachineFingerprint here = MachineFingerprint::current();
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace weft::tuner {

struct WorkloadKey {
  std::string kind;                                   // "gemm_fwd", "contraction", ...
  std::vector<std::pair<std::string, long>> shape;    // named sizes, in a fixed order per kind
  std::string dtype = "fp32";
  int threads = 1;
  // Empty for a free search's best. A tile-bound record holds the best configuration with these
  // tiles ({{"bc", 64}, {"bk", 64}}): what a layer asks for whose weight layout fixes them (weft-tune
  // --tile-bound). Records are found only by keys of the same tiles: the two never replace each other.
  std::vector<std::pair<std::string, long>> tiles = {};
  // "gemm_fwd M=1024 N=1024 K=1024 fp32 threads=2", a tile-bound key ending " tiles bm=64 bk=32"
  std::string to_string() const;
  bool operator==(const WorkloadKey&) const = default;
};

struct MachineFingerprint {
  std::string cpu_model;
  std::string isa;  // the ISA weft generates code for
  int logical_cpus = 0;
  std::size_t l1d_bytes = 0, l2_bytes = 0, l3_bytes = 0;

  static MachineFingerprint current();
  std::string to_string() const;
  bool operator==(const MachineFingerprint&) const = default;
};

// weft's version (the project version at build time).
std::string_view weft_version();

}  // namespace weft::tuner
