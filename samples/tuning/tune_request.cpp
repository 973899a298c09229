#include "tune_request.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <weft/cli/command_line.hpp>
#include <weft/tuner/report.hpp>

namespace weft::samples {

namespace fs = std::filesystem;

void add_request_options(CLI::App& app, RequestOptions& o) {
  cli::add_threads(app, o.threads, 1);
  cli::add_number(app, "--budget", o.budget, 0.1, 1e6, "seconds for measuring");
  cli::add_integer(app, "--top-k", o.top_k, 0, 1 << 30, "candidates the cost model keeps");
  cli::add_integer(app, "--finalists", o.finalists, 0, 1000, "candidates measured thoroughly");
  cli::add_number(app, "--imbalance", o.imbalance, 0, 100, "prune parallel imbalance above");
  cli::add_integer(app, "--patience", o.patience, 0, 1 << 30, "stop after N candidates without a gain");
  cli::add_integer(app, "--block-choices", o.block_choices, 1, 1000, "block sizes per blocking level");
  cli::add_integer(app, "--rows", o.rows, 1, 100000, "rows of the final table");
  cli::add_text(app, "--spec", o.spec, "loop specs, ';'-separated");
  cli::add_text(app, "--plot", o.plot, "SVG plot of the run");
  cli::add_text(app, "--db", o.db, "tuning database");
  cli::add_text(app, "--caches", o.caches, "warm: runs back to back; cold: the caches evicted before each run");
  cli::add_flag(app, "--exhaustive", o.exhaustive, "measure every legal candidate");
  cli::add_flag(app, "--no-save", o.no_save, "do not store the result");
  cli::add_flag(app, "--dry-run", o.dry_run, "measure nothing");
}

void add_sample_dtype_option(CLI::App& app, std::string& name, const char* what, bool f64_offered) {
  name = "f32";
  cli::add_text(app, "--dtype", name,
                std::string(f64_offered ? "f32, f64 or bf16 (" : "f32, or bf16 (") + what + ")");
}

jit::DataType parse_sample_dtype(const std::string& name, bool f64_offered) {
  if (f64_offered && name == "f64") return jit::DataType::f64;
  if (name != "f32" && name != "bf16") {
    throw CliError(std::string("--dtype is ") + (f64_offered ? "f32, bf16 or f64" : "f32 or bf16") +
                   " (the samples' precisions), not '" + name + "'");
  }
  return name == "bf16" ? jit::DataType::bf16 : jit::DataType::f32;
}

std::vector<tuner::LoopSpecification> parse_specs(const std::string& text, const std::string& option) {
  std::vector<tuner::LoopSpecification> specs;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find(';', start), text.size());
    if (end > start) {
      try {
        specs.push_back(tuner::parse_loop_spec(text.substr(start, end - start)));
      } catch (const Error& e) {
        throw CliError(option + " '" + text + "': " + e.what());
      }
    }
    start = end + 1;
  }
  if (specs.empty())
    throw CliError(option + " '" + text + "' holds no loop spec (e.g. a_0_K,b_1_M,c_1_N; several separated by ';')");
  return specs;
}

Request make_request(const CLI::App& app, const RequestOptions& given) {
  Request r;
  tuner::TunerOptions& o = r.tuner;
  o.threads = given.threads;
  o.budget_seconds = given.budget;
  o.top_k = static_cast<std::size_t>(given.top_k);
  o.finalists = static_cast<std::size_t>(given.finalists);
  o.max_imbalance = given.imbalance;
  o.patience = static_cast<std::size_t>(given.patience);
  o.exhaustive = given.exhaustive;
  if (given.caches != "warm" && given.caches != "cold")
    throw CliError("--caches is warm or cold, not '" + given.caches + "'");
  o.cold_caches = given.caches == "cold";
  if (o.exhaustive)
    for (const char* ignored : {"--budget", "--top-k", "--patience"})
      if (cli::given(app, ignored))
        throw CliError(std::string(ignored) +
                       " has no effect with --exhaustive, which measures every candidate without a limit");
  if (cli::given(app, "--spec")) o.specs = parse_specs(given.spec, "--spec");
  o.blocks.max_choices = static_cast<std::size_t>(given.block_choices);
  r.rows = static_cast<std::size_t>(given.rows);
  r.dry_run = given.dry_run;
  r.plot = given.plot;
  if (r.dry_run && !r.plot.empty()) throw CliError("--plot needs a measured run, and --dry-run measures nothing");
  r.save = !given.no_save && !r.dry_run;
  r.db = given.db.empty() ? tuner::TuningDatabase() : tuner::TuningDatabase(given.db);
  r.db_source = given.db.empty() ? "the tuning database (give --db PATH or --no-save)" : "--db";
  return r;
}

void check_writable(const std::string& what, const fs::path& path, bool create_parents) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw CliError(what + " " + path.string() + ": is a directory");
  if (create_parents && path.has_parent_path() && !fs::exists(path.parent_path(), ec)) {
    fs::create_directories(path.parent_path(), ec);
    if (ec) throw CliError(what + " " + path.string() + ": cannot create its directory: " + ec.message());
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd >= 0) {
    ::close(fd);
    ::unlink(path.c_str());
    return;
  }
  if (errno == EEXIST) fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);  // no O_TRUNC: keep its contents
  if (fd < 0) throw CliError(what + " " + path.string() + ": cannot be written: " + std::strerror(errno));
  ::close(fd);
}

namespace {

// The loop specs must fit the workload's loops under every knob setting: as many loops, and K
// exactly where the workload's reductions are.
void check_specs(const tuner::Workload& workload, const std::vector<tuner::Knobs>& knob_choices,
                 const std::vector<tuner::LoopSpecification>& specs) {
  for (const tuner::Knobs& knobs : knob_choices) {
    const std::vector<tuner::LogicalLoop> loops = workload.loops(knobs);
    for (const tuner::LoopSpecification& spec : specs) {
      if (static_cast<std::size_t>(spec.num_loops()) != loops.size())
        throw CliError("--spec '" + spec.to_string() + "' has " + std::to_string(spec.num_loops()) +
                       " loops; the workload has " + std::to_string(loops.size()) + " (letters a.." +
                       std::string(1, static_cast<char>('a' + loops.size() - 1)) + ")");
      for (std::size_t i = 0; i < loops.size(); ++i) {
        const tuner::SpecLoop& l = spec.loop(static_cast<int>(i));
        if (l.reduction() != loops[i].reduction)
          throw CliError("--spec '" + spec.to_string() + "': loop '" + std::string(1, l.letter) + "' is " +
                         std::string(1, l.kind) + ", but the workload's loop '" + std::string(1, l.letter) +
                         "' is " + (loops[i].reduction ? "a reduction (K)" : "no reduction (M, N or C)"));
      }
    }
  }
}

int measure_and_save(const tuner::Workload& workload, const Request& r, std::FILE* out, std::FILE* err) {
  const tuner::TunerOptions& options = r.tuner;
  std::fprintf(err, "weft-tune: %s on %s\n", workload.key(options.threads).to_string().c_str(),
               tuner::MachineFingerprint::current().to_string().c_str());
  if (r.dry_run) {
    const tuner::SearchSpace space = tuner::build_search_space(workload, options);
    const tuner::SpaceStats& s = space.stats;
    std::fprintf(out, "%zu enumerated, %zu distinct, %zu legal, %zu balanced\n", s.enumerated, s.distinct, s.legal,
                 s.balanced);
    for (std::size_t i = 0; i < std::min<std::size_t>(space.candidates.size(), 20); ++i)
      std::fprintf(out, "%4zu  %-40s %s\n", i + 1, space.candidates[i].config.to_string().c_str(),
                   space.candidates[i].estimate.to_string().c_str());
    return 0;
  }
  tuner::ProgressPrinter printer(err);
  const tuner::TuningResult result = tune(workload, options, printer.callback());
  printer.finish();
  print_table(out, result, r.rows);
  std::fprintf(out, "search: %.2f s enumerating and ranking, %.1f s in total\n", result.search_seconds, result.seconds);
  if (!r.plot.empty()) {
    write_plot(result, r.plot);
    std::fprintf(out, "plot: %s\n", r.plot.c_str());
  }
  if (r.save) {
    r.db->append(result.record());
    std::fprintf(out, "saved to %s\n", r.db->path().c_str());
  }
  return 0;
}

}  // namespace

void check_request(const tuner::Workload& workload, const Request& r, const std::string& empty_space_hint) {
  const std::vector<tuner::Knobs> knobs = workload.knob_choices();
  if (knobs.empty()) throw CliError("no knob setting fits the problem: " + empty_space_hint);
  if (!r.tuner.specs.empty()) check_specs(workload, knobs, r.tuner.specs);
  if (!r.plot.empty()) check_writable("--plot", r.plot, false);
  if (r.save) check_writable(r.db_source, r.db->path(), true);
}

int run_tuning(const tuner::Workload& workload, const Request& r, std::FILE* out, std::FILE* err) {
  try {
    return measure_and_save(workload, r, out, err);
  } catch (const tuner::NoCandidateError& e) {
    throw Error(std::string(e.what()) +
                "\n  (nothing to measure: fewer --threads, other tile sizes or loop specs, or a larger "
                "--imbalance may leave some)");
  } catch (const MemoryError&) {
    throw;
  } catch (const Error& e) {
    throw std::runtime_error(e.what());
  }
}

}  // namespace weft::samples
