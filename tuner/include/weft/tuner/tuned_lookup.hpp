// What a sample's `auto` mode runs: the tuning database's best configuration for its workload on
// this machine, found the same way for every sample (the GEMM passes' best_gemm_config, the
// convolutions' next), so that only applying a TunedConfig to the sample's own configuration is
// the sample's.
//
//   const WorkloadKey keys[] = {gemm_key(GemmPassKind::bwd, shape, threads)};
//   TunedLookup found = find_tuned_config(TuningDatabase(), keys, [&](const TunedConfig& c) {
//     return apply(problem, c).has_value();           // does the sample accept it for this problem?
//   });
//   if (found.config) problem = *apply(problem, *found.config);   // else the sample's heuristic
//   std::printf("%s (%s)\n", std::string(to_string(found.source)).c_str(), found.detail.c_str());
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "weft/tuner/tuned_config.hpp"
#include "weft/tuner/tuning_database.hpp"
#include "weft/tuner/workload_key.hpp"

namespace weft::tuner {

enum class ConfigSource { exact, nearest, heuristic };
std::string_view to_string(ConfigSource source);  // "exact hit", "nearest tuned shape", "heuristic"

// The configuration a sample's `auto` mode runs, and where it came from. Each sample declares and
// defines describe() for its configurations (an explicit specialization per Config):
// "<source>: <loop_string> <tiles and knobs> (<detail>)".
template <class Config>
struct TunedChoice {
  Config config;
  ConfigSource source = ConfigSource::heuristic;
  std::string detail;  // the database path and record, or why the default was used
  std::string describe() const;
};

struct TunedLookup {
  ConfigSource source = ConfigSource::heuristic;
  std::optional<TunedConfig> config;  // set unless heuristic
  // The database path and the record used, or why there is none (for the heuristic).
  std::string detail;
};

// Tries `keys` in order (e.g. an MLP's own kind, then the single layer's) and takes the first
// record found (exact shape, else the nearest tuned shape; TuningDatabase::lookup) whose
// configuration `fits` the problem; a nearest shape's record is retried without its block lists,
// which another shape's loops may not take. Never throws for database trouble: an unreadable file
// is a heuristic result with the reason in `detail`.
TunedLookup find_tuned_config(const TuningDatabase& database, std::span<const WorkloadKey> keys,
                              const std::function<bool(const TunedConfig&)>& fits);

}  // namespace weft::tuner
