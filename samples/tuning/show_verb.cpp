// weft-tune show: the records of the tuning database, marking those of another machine or weft.
#include <filesystem>
#include <string>

#include <weft/cli/command_line.hpp>
#include <weft/tuner/tuning_database.hpp>

#include "tune_request.hpp"
#include "tune_verbs.hpp"

namespace weft::samples {

int show_verb(int argc, char** argv, std::FILE* out) {
  CLI::App app;
  std::string path;
  cli::add_text(app, "--db", path, "tuning database");
  cli::parse(app, argc, argv, 2);
  const tuner::TuningDatabase db = path.empty() ? tuner::TuningDatabase() : tuner::TuningDatabase(path);
  std::error_code ec;
  if (std::filesystem::is_directory(db.path(), ec)) throw CliError("--db " + db.path().string() + ": is a directory");
  const auto contents = db.load();
  const tuner::MachineFingerprint here = tuner::MachineFingerprint::current();
  std::fprintf(out, "%s: %zu records, %zu unreadable lines\n", db.path().c_str(), contents.records.size(),
               contents.skipped_lines);
  for (const auto& rec : contents.records)
    std::fprintf(out, "%-52s %8.1f GFLOPS (default %6.1f)  %s%s\n", rec.key.to_string().c_str(), rec.gflops,
                 rec.default_gflops, rec.config.to_string().c_str(),
                 rec.machine == here && rec.weft_version == tuner::weft_version() ? "" : "  [other machine or version]");
  return 0;
}

}  // namespace weft::samples
