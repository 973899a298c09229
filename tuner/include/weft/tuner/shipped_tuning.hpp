// The tuning databases that ship with weft: records tuned on the machines the project has
// (share/weft/tuning/*.jsonl in the source tree, installed to <prefix>/share/weft/tuning/), which
// the samples' `auto` mode reads where the user's own database has no record (tuned_lookup.hpp).
//
//   const ShippedTuning shipped;                      // shipped_tuning_dir()
//   const auto hit = shipped.lookup(key, MachineFingerprint::current());
//   if (hit.match != TuningDatabase::Match::none) use(hit.record->config);   // from hit.file
//
// The folder: $WEFT_SHIPPED_TUNING_DIR when it is set (set and empty: no shipped records at all),
// else the installed folder when it exists, else the source tree's share/weft/tuning (so that
// programs run from the build tree find it). Every *.jsonl file in it is read, in name order.
//
// The machine rule differs from the user's database (TuningDatabase::lookup, which wants the whole
// fingerprint and weft's version): a shipped record is this machine's when
//   - the CPU model, L1d and L2 sizes are equal: they decide the tiles and loop orders the tuner
//     picks. The logical CPU count and the L3 size may differ: the same core comes as a 2-vCPU and
//     a 64-vCPU guest with slices of one L3, and the team size is part of the key (threads);
//   - and weft generates the same code for the record's data type: the same ISA, or, for fp32 and
//     fp64 records, avx512 and avx512_bf16 in either order (jit/isa_traits.hpp: avx512_bf16 is
//     avx512 plus the bf16 instructions). The Zen 4 file's fp32 records were tuned before weft had
//     avx512_bf16 and say avx512; that machine now runs avx512_bf16.
// weft's version is not compared: the files ship with this version, and a test
// (tests/samples/shipped_tuning_records_test.cpp) checks that the samples accept every record.
#pragma once

#include <filesystem>
#include <vector>

#include "weft/tuner/tuning_database.hpp"
#include "weft/tuner/workload_key.hpp"

namespace weft::tuner {

// The folder of the shipped databases (above); empty when $WEFT_SHIPPED_TUNING_DIR is set empty.
std::filesystem::path shipped_tuning_dir();

// Whether a shipped record was tuned on a machine like `here` (the rule above).
bool shipped_record_matches(const TuningRecord& record, const MachineFingerprint& here);

class ShippedTuning {
 public:
  ShippedTuning();  // shipped_tuning_dir()
  explicit ShippedTuning(std::filesystem::path dir);  // empty: no records

  const std::filesystem::path& dir() const { return dir_; }

  // The folder's *.jsonl files by name; none when the folder is empty, missing or unreadable.
  std::vector<std::filesystem::path> files() const;

  struct Lookup : TuningDatabase::Lookup {
    std::filesystem::path file;  // the record's, when there is one
  };
  // The best record for the key (TuningDatabase::lookup's order: exact, else the nearest shape
  // within max_distance; the fastest) among all files' records that shipped_record_matches
  // `machine`; on equal terms the first file's. Never throws: a file that cannot be read, or lines
  // that do not parse, are warned about once per file and process (as the user's database is) and
  // passed over.
  Lookup lookup(const WorkloadKey& key, const MachineFingerprint& machine, double max_distance = 3.0) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace weft::tuner
