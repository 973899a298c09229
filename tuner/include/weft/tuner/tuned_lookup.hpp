// What a sample's `auto` mode runs: the best tuned configuration for its workload on this machine,
// from the user's tuning database or the ones that ship with weft (shipped_tuning.hpp), found the
// same way for every sample (the GEMM passes' best_gemm_config, the convolutions' next), so that
// only applying a TunedConfig to the sample's own configuration is the sample's.
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

#include "weft/tuner/shipped_tuning.hpp"
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
  std::string detail;  // the database file and record, or why the default was used
  std::string describe() const;
};

struct TunedLookup {
  ConfigSource source = ConfigSource::heuristic;
  std::optional<TunedConfig> config;  // set unless heuristic
  // The file (the user's database or a shipped one) and the record used, or why there is none.
  std::string detail;
};

// Tries `keys` in order (e.g. an MLP's own kind, then the single layer's) and takes the first
// record found whose configuration `fits` the problem; per key, in this order:
//   1. the user's database, exact shape (TuningDatabase::lookup: this machine, this weft version),
//   2. the shipped databases, exact shape (shipped_tuning.hpp: a machine like this one),
//   3. the user's database, nearest tuned shape,
//   4. the shipped databases, nearest tuned shape:
// the user's own tuning wins, but a record of the very shape beats one of a near shape. A nearest
// shape's record is retried without its block lists, which another shape's loops may not take.
// Never throws for database trouble: an unreadable user database leaves the shipped records, and
// with none found the result is the heuristic with the reasons in `detail`.
TunedLookup find_tuned_config(const TuningDatabase& database, std::span<const WorkloadKey> keys,
                              const std::function<bool(const TunedConfig&)>& fits,
                              const ShippedTuning& shipped = ShippedTuning());

}  // namespace weft::tuner
