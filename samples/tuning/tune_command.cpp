#include "tune_command.hpp"

#include <fcntl.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <weft/cli/command_line.hpp>
#include <weft/cli/run_tool.hpp>
#include <weft/jit/error.hpp>
#include <weft/tuner/contraction_workload.hpp>
#include <weft/tuner/report.hpp>
#include <weft/tuner/tuner.hpp>

#include "gemm_workload.hpp"

namespace weft::tuner {
namespace {

namespace fs = std::filesystem;
using CliError = cli::UsageError;

constexpr const char* kUsage =
    "usage: weft-tune gemm --M M --N N --K K [options]\n"
    "                 [--bm 32,64] [--bn 32,64] [--bk 32,64] [--kbf 1,2,4]\n"
    "       weft-tune contraction --dims m,n,k,m,n,k --sizes 64,25,64,25,64,25 [options]\n"
    "                 [--prim brgemm|gemm] [--first none|zero] [--last none|relu]\n"
    "                 (dense tensors, in0 = [dims with m,k], in1 = [n,k], out = [n,m], row-major)\n"
    "       weft-tune show [--db PATH]\n"
    "options:\n"
    "  --threads T      threads (default: OMP_NUM_THREADS or all)\n"
    "  --budget S       seconds for measuring (default 60)\n"
    "  --spec S         loop specs, ';'-separated, e.g. 'a_0_K,b_1_M,c_1_N' (default: the workload's)\n"
    "  --block-choices N  block sizes tried per blocking level (default 6)\n"
    "  --top-k N        candidates the cost model keeps (default: from the budget)\n"
    "  --finalists N    candidates measured thoroughly at the end (default 4)\n"
    "  --imbalance X    prune parallel imbalance above X (default 0.10)\n"
    "  --patience N     stop after N candidates in a row without a 1% gain\n"
    "  --exhaustive     measure every legal candidate (no model cut, no budget)\n"
    "  --plot FILE      write an SVG plot of the run\n"
    "  --rows N         rows of the final table (default 10)\n"
    "  --db PATH        tuning database (default $WEFT_TUNING_DB or ~/.cache/weft/tuning.jsonl)\n"
    "  --no-save        do not store the result\n"
    "  --dry-run        print the search space and the model's top candidates, measure nothing\n"
    "exit status: 0 success, 1 run-time failure, 2 bad usage\n";

// GEMM tile sizes: beyond this a tile exceeds any cache many times over, and its padded blocked
// copies would dwarf the matrices.
constexpr long kMaxTile = 1 << 16;

// The options every tuning command takes, as given.
struct RequestOptions {
  int threads = omp_get_max_threads();
  double budget = 60, imbalance = 0.10;
  std::int64_t top_k = 0, finalists = 4, patience = 0, block_choices = 6, rows = 10;
  std::string spec, plot, db;
  bool exhaustive = false, no_save = false, dry_run = false;
};

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
  cli::add_flag(app, "--exhaustive", o.exhaustive, "measure every legal candidate");
  cli::add_flag(app, "--no-save", o.no_save, "do not store the result");
  cli::add_flag(app, "--dry-run", o.dry_run, "measure nothing");
}

struct Request {
  TunerOptions tuner;
  std::size_t rows = 10;
  std::string plot;  // empty: none
  std::optional<TuningDatabase> db;
  std::string db_source;  // how the database was named, for messages
  bool save = true;
  bool dry_run = false;
};

std::vector<LoopSpecification> parse_specs(const std::string& text) {
  std::vector<LoopSpecification> specs;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find(';', start), text.size());
    if (end > start) {
      try {
        specs.push_back(parse_loop_spec(text.substr(start, end - start)));
      } catch (const Error& e) {
        throw CliError("--spec '" + text + "': " + e.what());
      }
    }
    start = end + 1;
  }
  if (specs.empty())
    throw CliError("--spec '" + text + "' holds no loop spec (e.g. a_0_K,b_1_M,c_1_N; several separated by ';')");
  return specs;
}

Request make_request(const CLI::App& app, const RequestOptions& given) {
  Request r;
  TunerOptions& o = r.tuner;
  o.threads = given.threads;
  o.budget_seconds = given.budget;
  o.top_k = static_cast<std::size_t>(given.top_k);
  o.finalists = static_cast<std::size_t>(given.finalists);
  o.max_imbalance = given.imbalance;
  o.patience = static_cast<std::size_t>(given.patience);
  o.exhaustive = given.exhaustive;
  if (o.exhaustive)
    for (const char* ignored : {"--budget", "--top-k", "--patience"})
      if (cli::given(app, ignored))
        throw CliError(std::string(ignored) +
                       " has no effect with --exhaustive, which measures every candidate without a limit");
  if (cli::given(app, "--spec")) o.specs = parse_specs(given.spec);
  o.blocks.max_choices = static_cast<std::size_t>(given.block_choices);
  r.rows = static_cast<std::size_t>(given.rows);
  r.dry_run = given.dry_run;
  r.plot = given.plot;
  if (r.dry_run && !r.plot.empty()) throw CliError("--plot needs a measured run, and --dry-run measures nothing");
  r.save = !given.no_save && !r.dry_run;
  r.db = given.db.empty() ? TuningDatabase() : TuningDatabase(given.db);
  r.db_source = given.db.empty() ? "the tuning database (give --db PATH or --no-save)" : "--db";
  return r;
}

// Throws CliError when `path` cannot be opened for writing, so that a long search does not end in
// a failed write. Leaves no file behind (one it had to create is removed again); the database's
// missing directories are created, as saving would create them.
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

// The loop specs must fit the workload's loops under every knob setting: as many loops, and K
// exactly where the workload's reductions are.
void check_specs(const Workload& workload, const std::vector<Knobs>& knob_choices,
                 const std::vector<LoopSpecification>& specs) {
  for (const Knobs& knobs : knob_choices) {
    const std::vector<LogicalLoop> loops = workload.loops(knobs);
    for (const LoopSpecification& spec : specs) {
      if (static_cast<std::size_t>(spec.num_loops()) != loops.size())
        throw CliError("--spec '" + spec.to_string() + "' has " + std::to_string(spec.num_loops()) +
                       " loops; the workload has " + std::to_string(loops.size()) + " (letters a.." +
                       std::string(1, static_cast<char>('a' + loops.size() - 1)) + ")");
      for (std::size_t i = 0; i < loops.size(); ++i) {
        const SpecLoop& l = spec.loop(static_cast<int>(i));
        if (l.reduction() != loops[i].reduction)
          throw CliError("--spec '" + spec.to_string() + "': loop '" + std::string(1, l.letter) + "' is " +
                         std::string(1, l.kind) + ", but the workload's loop '" + std::string(1, l.letter) +
                         "' is " + (loops[i].reduction ? "a reduction (K)" : "no reduction (M, N or C)"));
      }
    }
  }
}

// Everything about the request that measuring cannot fix, before the search starts.
void check_request(const Workload& workload, const Request& r, const std::string& empty_space_hint) {
  const std::vector<Knobs> knobs = workload.knob_choices();
  if (knobs.empty()) throw CliError("no knob setting fits the problem: " + empty_space_hint);
  if (!r.tuner.specs.empty()) check_specs(workload, knobs, r.tuner.specs);
  if (!r.plot.empty()) check_writable("--plot", r.plot, false);
  if (r.save) check_writable(r.db_source, r.db->path(), true);
}

// Builds a workload from the arguments: what it rejects is bad usage, except memory that could
// not be allocated (MemoryError::Reason::allocation_failed, passed on).
template <class Build>
auto build_workload(Build&& build) {
  try {
    return build();
  } catch (const MemoryError&) {
    throw;
  } catch (const Error& e) {
    throw CliError(e.what());
  }
}

int measure_and_save(const Workload& workload, const Request& r, std::FILE* out, std::FILE* err) {
  const TunerOptions& options = r.tuner;
  std::fprintf(err, "weft-tune: %s on %s\n", workload.key(options.threads).to_string().c_str(),
               MachineFingerprint::current().to_string().c_str());
  if (r.dry_run) {
    const SearchSpace space = build_search_space(workload, options);
    const SpaceStats& s = space.stats;
    std::fprintf(out, "%zu enumerated, %zu distinct, %zu legal, %zu balanced\n", s.enumerated, s.distinct, s.legal,
                 s.balanced);
    for (std::size_t i = 0; i < std::min<std::size_t>(space.candidates.size(), 20); ++i)
      std::fprintf(out, "%4zu  %-40s %s\n", i + 1, space.candidates[i].config.to_string().c_str(),
                   space.candidates[i].estimate.to_string().c_str());
    return 0;
  }
  ProgressPrinter printer(err);
  const TuningResult result = tune(workload, options, printer.callback());
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

// What goes wrong once the request is accepted is a run-time failure (exit status 1: a measurement
// or a write that failed), except a request that leaves nothing to measure, which is bad usage.
int run_tuning(const Workload& workload, const Request& r, std::FILE* out, std::FILE* err) {
  try {
    return measure_and_save(workload, r, out, err);
  } catch (const NoCandidateError& e) {
    throw Error(std::string(e.what()) +
                "\n  (nothing to measure: fewer --threads, other tile sizes or loop specs, or a larger "
                "--imbalance may leave some)");
  } catch (const MemoryError&) {
    throw;
  } catch (const Error& e) {
    throw std::runtime_error(e.what());
  }
}

int gemm_command(int argc, char** argv, std::FILE* out, std::FILE* err) {
  CLI::App app;
  RequestOptions given;
  std::int64_t M = 0, N = 0, K = 0;
  GemmSearchOptions search;
  for (auto [name, size] : {std::pair{"--M", &M}, {"--N", &N}, {"--K", &K}})
    cli::add_integer(app, name, *size, 1, 1 << 20, "GEMM size");
  for (auto [name, list] : {std::pair{"--bm", &search.bm}, {"--bn", &search.bn}, {"--bk", &search.bk}, {"--kbf", &search.kbf}})
    cli::add_integer_list(app, name, *list, 1, kMaxTile, "values to try");
  add_request_options(app, given);
  cli::parse(app, argc, argv, 2);
  for (const char* required : {"--M", "--N", "--K"})
    if (!cli::given(app, required)) throw CliError(std::string("gemm needs ") + required);
  const Request request = make_request(app, given);
  const GemmWorkload workload = build_workload([&] { return GemmWorkload({M, N, K}, search); });
  check_request(workload, request,
                "every --kbf exceeds the number of K blocks (K = " + std::to_string(K) + " over --bk)");
  return run_tuning(workload, request, out, err);
}

int contraction_command(int argc, char** argv, std::FILE* out, std::FILE* err) {
  CLI::App app;
  RequestOptions given;
  std::string dims, sizes, einsum, prim = "brgemm", first = "zero", last = "none";
  cli::add_text(app, "--dims", dims, "dimension types");
  cli::add_text(app, "--sizes", sizes, "dimension sizes");
  cli::add_text(app, "--einsum", einsum, "einsum string");
  cli::add_text(app, "--prim", prim, "main primitive");
  cli::add_text(app, "--first", first, "first-touch primitive");
  cli::add_text(app, "--last", last, "last-touch primitive");
  add_request_options(app, given);
  cli::parse(app, argc, argv, 2);
  const Request request = make_request(app, given);
  const ContractionProblem problem =
      build_workload([&] { return parse_contraction_problem(dims, einsum, sizes, prim, first, last); });
  const ContractionWorkload workload =
      build_workload([&] { return ContractionWorkload(problem, request.tuner.threads); });
  check_request(workload, request, "the optimizer leaves no loop");
  return run_tuning(workload, request, out, err);
}

int show_command(int argc, char** argv, std::FILE* out) {
  CLI::App app;
  std::string path;
  cli::add_text(app, "--db", path, "tuning database");
  cli::parse(app, argc, argv, 2);
  const TuningDatabase db = path.empty() ? TuningDatabase() : TuningDatabase(path);
  std::error_code ec;
  if (fs::is_directory(db.path(), ec)) throw CliError("--db " + db.path().string() + ": is a directory");
  const auto contents = db.load();
  const MachineFingerprint here = MachineFingerprint::current();
  std::fprintf(out, "%s: %zu records, %zu unreadable lines\n", db.path().c_str(), contents.records.size(),
               contents.skipped_lines);
  for (const auto& rec : contents.records)
    std::fprintf(out, "%-52s %8.1f GFLOPS (default %6.1f)  %s%s\n", rec.key.to_string().c_str(), rec.gflops,
                 rec.default_gflops, rec.config.to_string().c_str(),
                 rec.machine == here && rec.weft_version == weft_version() ? "" : "  [other machine or version]");
  return 0;
}

int tune_command(int argc, char** argv, std::FILE* out, std::FILE* err) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (command == "gemm") return gemm_command(argc, argv, out, err);
  if (command == "contraction") return contraction_command(argc, argv, out, err);
  if (command == "show") return show_command(argc, argv, out);
  if (command == "--help" || command == "-h" || command == "help") throw CLI::CallForHelp();
  throw CliError(command.empty() ? "missing command (gemm, contraction or show)"
                                 : "unknown command '" + command + "' (gemm, contraction or show)");
}

}  // namespace

int weft_tune_main(int argc, char** argv, std::FILE* out, std::FILE* err) {
  return cli::run_tool({"weft-tune", kUsage, out, err}, [&] { return tune_command(argc, argv, out, err); });
}

}  // namespace weft::tuner
