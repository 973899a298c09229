// The persistent tuning database: one JSON object per line (JSON Lines), appended by tuners and
// read by best-config lookups. Safe with concurrent tuners: each record is one write(2) of a whole
// line on an O_APPEND descriptor under an exclusive flock; readers take a shared lock and skip lines
// that do not parse (a crashed writer's partial line), and a writer that finds the file not ending
// in a newline starts a new line first.
//
//   TuningDatabase db;                       // default location, see default_path()
//   db.append(record);
//   auto hit = db.lookup(key, MachineFingerprint::current());
//   if (hit.match == TuningDatabase::Match::exact) use(hit.record->config);
//
// Location: TuningDatabase::set_default_path(), else $WEFT_TUNING_DB, else
// $XDG_CACHE_HOME/weft/tuning.jsonl, else ~/.cache/weft/tuning.jsonl.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/tuner/tuned_config.hpp"
#include "weft/tuner/workload_key.hpp"

namespace weft::tuner {

struct TuningRecord {
  WorkloadKey key;
  MachineFingerprint machine;
  std::string weft_version;
  TunedConfig config;
  double gflops = 0;          // of config, thorough measurement
  double default_gflops = 0;  // of the workload's default configuration, same run (0: unknown)
  std::int64_t unix_time = 0;
  std::string tuner;          // how it was found, e.g. "model top 64, 48 measured, 12.3 s"
};

// The JSON line of a record (no trailing newline) and back; parse throws weft::Error.
std::string to_json_line(const TuningRecord& record);
TuningRecord parse_json_line(std::string_view line);

class TuningDatabase {
 public:
  TuningDatabase();  // default_path()
  explicit TuningDatabase(std::filesystem::path path);

  static std::filesystem::path default_path();
  // Overrides the environment for this process; an empty path restores the default lookup.
  static void set_default_path(std::filesystem::path path);

  const std::filesystem::path& path() const { return path_; }

  // Creates the directory and the file when missing. Throws weft::Error naming the path.
  void append(const TuningRecord& record) const;

  struct Contents {
    std::vector<TuningRecord> records;  // in file order
    std::size_t skipped_lines = 0;      // lines that did not parse
    std::size_t first_bad_line = 0;     // 1-based number of the first of them (0: none)
    std::string first_bad_problem;      // why it did not parse
  };
  // A missing file is empty. Throws weft::Error when the file exists but cannot be read.
  Contents load() const;

  enum class Match { exact, nearest, none };  // best first
  struct Lookup {
    Match match = Match::none;
    std::optional<TuningRecord> record;
    double distance = 0;  // nearest: sum over the shape of |log(size / tuned size)|
  };
  // The best record (highest GFLOPS) for the key on this machine and weft version: same kind,
  // dtype, threads and shape (exact), else the same kind, dtype and threads with the nearest
  // shape (same shape names) within max_distance. A file with lines that do not parse, or one
  // that cannot be read (then lookup throws weft::Error, as load does), gets one warning per file
  // and process through weft::log(), naming the file and its first bad line; callers go on with
  // their defaults.
  Lookup lookup(const WorkloadKey& key, const MachineFingerprint& machine,
                std::string_view version = weft_version(), double max_distance = 3.0) const;
  // The same among the records `takes` accepts in place of the machine and version rule (the
  // shipped databases have one of their own: shipped_tuning.hpp).
  Lookup lookup_if(const WorkloadKey& key, const std::function<bool(const TuningRecord&)>& takes,
                   double max_distance = 3.0) const;

 private:
  std::filesystem::path path_;
};

std::string_view to_string(TuningDatabase::Match match);

// Whether `a` is a better find than `b`, the order of every lookup: exact before nearest before
// none, then the nearer shape, then the higher GFLOPS (an equal one is no better).
bool is_better(const TuningDatabase::Lookup& a, const TuningDatabase::Lookup& b);

}  // namespace weft::tuner
