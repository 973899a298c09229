#include "weft/tuner/tuned_lookup.hpp"

#include <utility>

#include "weft/jit/error.hpp"

namespace weft::tuner {
namespace {

// A record found for a key, and the file it came from.
struct Found {
  TuningDatabase::Lookup hit;
  std::filesystem::path file;
};

}  // namespace

std::string_view to_string(ConfigSource source) {
  switch (source) {
    case ConfigSource::exact: return "exact hit";
    case ConfigSource::nearest: return "nearest tuned shape";
    case ConfigSource::heuristic: return "heuristic";
  }
  return "?";
}

TunedLookup find_tuned_config(const TuningDatabase& database, std::span<const WorkloadKey> keys,
                              const std::function<bool(const TunedConfig&)>& fits, const ShippedTuning& shipped) {
  TunedLookup found;
  const MachineFingerprint here = MachineFingerprint::current();
  std::string unreadable, misfits;
  for (const WorkloadKey& key : keys) {
    Found own{{}, database.path()};
    try {
      own.hit = database.lookup(key, here);
    } catch (const Error& e) {
      unreadable = e.what();  // the shipped records still serve
    }
    ShippedTuning::Lookup from_shipped = shipped.lookup(key, here);
    Found theirs;
    theirs.file = std::move(from_shipped.file);
    theirs.hit = std::move(from_shipped);
    // The user's own record before the shipped one, but an exact shape before a nearest one.
    const bool shipped_first = theirs.hit.match < own.hit.match;
    for (const Found* f : {shipped_first ? &theirs : &own, shipped_first ? &own : &theirs}) {
      if (f->hit.match == TuningDatabase::Match::none) continue;
      TunedConfig tuned = f->hit.record->config;
      bool fit = fits(tuned);
      if (!fit && f->hit.match == TuningDatabase::Match::nearest && !tuned.blocks.empty()) {
        tuned.blocks.clear();
        fit = fits(tuned);
      }
      if (!fit) {
        misfits += (misfits.empty() ? "" : "; ") + f->hit.record->config.to_string() +
                   (f == &theirs ? " (" + f->file.string() + ")" : "");
        continue;
      }
      found.source = f->hit.match == TuningDatabase::Match::exact ? ConfigSource::exact : ConfigSource::nearest;
      found.config = std::move(tuned);
      found.detail = f->file.string() + ": " + f->hit.record->key.to_string() + ", " +
                     std::to_string(static_cast<int>(f->hit.record->gflops)) + " GFLOPS when tuned";
      return found;
    }
  }
  if (!unreadable.empty()) found.detail = "database unreadable: " + unreadable;
  if (!misfits.empty()) {
    found.detail += (found.detail.empty() ? "" : "; ") + std::string("the database's record does not fit this problem: ") +
                    misfits;
  }
  if (found.detail.empty()) {
    const int threads = keys.empty() ? 0 : keys.front().threads;
    found.detail = "no record for this machine and " + std::to_string(threads) + " threads in " +
                   database.path().string() + (shipped.dir().empty() ? "" : " or in " + shipped.dir().string());
  }
  return found;
}

}  // namespace weft::tuner
