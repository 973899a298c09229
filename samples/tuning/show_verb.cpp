// weft-tune show: the records of the tuning database, marking those of another machine or weft;
// with --shipped also those of the databases that ship with weft (shipped_tuning.hpp), marking
// those of another machine.
#include <filesystem>
#include <functional>
#include <string>

#include <weft/cli/command_line.hpp>
#include <weft/tuner/shipped_tuning.hpp>
#include <weft/tuner/tuning_database.hpp>

#include "tune_request.hpp"
#include "tune_verbs.hpp"

namespace weft::samples {
namespace {

// The file's line, then one line per record; `mark` after each record `auto` here does not take.
void print_records(std::FILE* out, const tuner::TuningDatabase& db,
                   const std::function<bool(const tuner::TuningRecord&)>& taken_here, const char* mark) {
  const auto contents = db.load();
  std::fprintf(out, "%s: %zu records, %zu unreadable lines\n", db.path().c_str(), contents.records.size(),
               contents.skipped_lines);
  for (const auto& rec : contents.records)
    std::fprintf(out, "%-52s %8.1f GFLOPS (default %6.1f)  %s%s\n", rec.key.to_string().c_str(), rec.gflops,
                 rec.default_gflops, rec.config.to_string().c_str(), taken_here(rec) ? "" : mark);
}

}  // namespace

int show_verb(int argc, char** argv, std::FILE* out) {
  CLI::App app;
  std::string path;
  bool shipped = false;
  cli::add_text(app, "--db", path, "tuning database");
  cli::add_flag(app, "--shipped", shipped, "also the tuning databases that ship with weft");
  cli::parse(app, argc, argv, 2);
  const tuner::TuningDatabase db = path.empty() ? tuner::TuningDatabase() : tuner::TuningDatabase(path);
  std::error_code ec;
  if (std::filesystem::is_directory(db.path(), ec)) throw CliError("--db " + db.path().string() + ": is a directory");
  const tuner::MachineFingerprint here = tuner::MachineFingerprint::current();
  print_records(
      out, db, [&](const tuner::TuningRecord& r) { return r.machine == here && r.weft_version == tuner::weft_version(); },
      "  [other machine or version]");
  if (!shipped) return 0;
  const tuner::ShippedTuning shipped_tuning;
  const auto files = shipped_tuning.files();
  if (files.empty()) {
    std::fprintf(out, "no shipped tuning databases (%s)\n",
                 shipped_tuning.dir().empty() ? "WEFT_SHIPPED_TUNING_DIR is empty"
                                              : ("none in " + shipped_tuning.dir().string()).c_str());
  }
  for (const auto& file : files) {
    print_records(
        out, tuner::TuningDatabase(file),
        [&](const tuner::TuningRecord& r) { return tuner::shipped_record_matches(r, here); }, "  [other machine]");
  }
  return 0;
}

}  // namespace weft::samples
