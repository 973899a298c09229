#include "weft/tuner/tuned_lookup.hpp"

#include "weft/jit/error.hpp"

namespace weft::tuner {

std::string_view to_string(ConfigSource source) {
  switch (source) {
    case ConfigSource::exact: return "exact hit";
    case ConfigSource::nearest: return "nearest tuned shape";
    case ConfigSource::heuristic: return "heuristic";
  }
  return "?";
}

TunedLookup find_tuned_config(const TuningDatabase& database, std::span<const WorkloadKey> keys,
                              const std::function<bool(const TunedConfig&)>& fits) {
  TunedLookup found;
  const MachineFingerprint here = MachineFingerprint::current();
  std::string misfits;
  for (const WorkloadKey& key : keys) {
    TuningDatabase::Lookup hit;
    try {
      hit = database.lookup(key, here);
    } catch (const Error& e) {
      found.detail = std::string("database unreadable: ") + e.what();
      return found;
    }
    if (hit.match == TuningDatabase::Match::none) continue;
    TunedConfig tuned = hit.record->config;
    bool fit = fits(tuned);
    if (!fit && hit.match == TuningDatabase::Match::nearest && !tuned.blocks.empty()) {
      tuned.blocks.clear();
      fit = fits(tuned);
    }
    if (!fit) {
      misfits += (misfits.empty() ? "" : "; ") + hit.record->config.to_string();
      continue;
    }
    found.source = hit.match == TuningDatabase::Match::exact ? ConfigSource::exact : ConfigSource::nearest;
    found.config = std::move(tuned);
    found.detail = database.path().string() + ": " + hit.record->key.to_string() + ", " +
                   std::to_string(static_cast<int>(hit.record->gflops)) + " GFLOPS when tuned";
    return found;
  }
  if (!misfits.empty()) {
    found.detail = "the database's record does not fit this problem: " + misfits;
  } else {
    const int threads = keys.empty() ? 0 : keys.front().threads;
    found.detail = "no record for this machine and " + std::to_string(threads) + " threads in " +
                   database.path().string();
  }
  return found;
}

}  // namespace weft::tuner
