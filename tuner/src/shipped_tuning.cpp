#include "weft/tuner/shipped_tuning.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <system_error>
#include <utility>

#include <weft/jit/cpu.hpp>
#include <weft/jit/error.hpp>

namespace weft::tuner {
namespace {

namespace fs = std::filesystem;

bool is_avx512(std::optional<jit::Isa> isa) { return isa == jit::Isa::avx512 || isa == jit::Isa::avx512_bf16; }

}  // namespace

fs::path shipped_tuning_dir() {
  if (const char* env = std::getenv("WEFT_SHIPPED_TUNING_DIR")) return env;  // set empty: none
  std::error_code ec;
  if (fs::is_directory(WEFT_INSTALLED_TUNING_DIR, ec)) return WEFT_INSTALLED_TUNING_DIR;
  return WEFT_SOURCE_TUNING_DIR;
}

bool shipped_record_matches(const TuningRecord& record, const MachineFingerprint& here) {
  const MachineFingerprint& tuned = record.machine;
  if (tuned.cpu_model != here.cpu_model || tuned.l1d_bytes != here.l1d_bytes || tuned.l2_bytes != here.l2_bytes)
    return false;
  if (tuned.isa == here.isa) return true;
  const bool without_bf16_code = record.key.dtype == "fp32" || record.key.dtype == "fp64";
  return without_bf16_code && is_avx512(jit::parse_isa(tuned.isa)) && is_avx512(jit::parse_isa(here.isa));
}

ShippedTuning::ShippedTuning() : dir_(shipped_tuning_dir()) {}
ShippedTuning::ShippedTuning(fs::path dir) : dir_(std::move(dir)) {}

std::vector<fs::path> ShippedTuning::files() const {
  std::vector<fs::path> found;
  if (dir_.empty()) return found;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".jsonl") found.push_back(it->path());
  std::sort(found.begin(), found.end());
  return found;
}

ShippedTuning::Lookup ShippedTuning::lookup(const WorkloadKey& key, const MachineFingerprint& machine,
                                            double max_distance) const {
  Lookup best;
  const auto tuned_on_such_a_machine = [&](const TuningRecord& r) { return shipped_record_matches(r, machine); };
  for (const fs::path& file : files()) {
    TuningDatabase::Lookup found;
    try {
      found = TuningDatabase(file).lookup_if(key, tuned_on_such_a_machine, max_distance);
    } catch (const Error&) {
      continue;  // an unreadable file: lookup_if has warned about it
    }
    if (is_better(found, best)) {
      static_cast<TuningDatabase::Lookup&>(best) = std::move(found);
      best.file = file;
    }
  }
  return best;
}

}  // namespace weft::tuner
