// What every tuning verb of weft-tune shares (gemm, contraction, and the next workload's): the
// options of a tuning run, their checks before anything is measured, and the run itself with its
// table, plot and database record. A verb adds its problem's options, builds its Workload and
// hands it over:
//
//   CLI::App app;
//   RequestOptions given;
//   ... add the problem's options to app ...
//   add_request_options(app, given);
//   cli::parse(app, argc, argv, 2);
//   const Request request = make_request(app, given);
//   const MyWorkload workload = build_workload([&] { return MyWorkload(...); });
//   check_request(workload, request, "why no knob setting fits");
//   return run_tuning(workload, request, out, err);
#pragma once

#include <omp.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <weft/cli/values.hpp>
#include <weft/jit/data_type.hpp>
#include <weft/jit/error.hpp>
#include <weft/tuner/tuner.hpp>

namespace weft::samples {

using CliError = cli::UsageError;

// The options every tuning verb takes, as given.
struct RequestOptions {
  int threads = omp_get_max_threads();
  double budget = 60, imbalance = 0.10;
  std::int64_t top_k = 0, finalists = 4, patience = 0, block_choices = 6, rows = 10;
  std::string spec, plot, db;
  std::string caches = "warm";  // warm or cold (TunerOptions::cold_caches); a verb may set its default
  bool exhaustive = false, no_save = false, dry_run = false;
};

void add_request_options(CLI::App& app, RequestOptions& options);

struct Request {
  tuner::TunerOptions tuner;
  std::size_t rows = 10;
  std::string plot;  // empty: none
  std::optional<tuner::TuningDatabase> db;
  std::string db_source;  // how the database was named, for messages
  bool save = true;
  bool dry_run = false;
};

// The request of the parsed options; CliError for contradictions (--exhaustive with a budget,
// --plot with --dry-run) and loop specs that do not parse.
Request make_request(const CLI::App& app, const RequestOptions& given);

// --dtype of the sample verbs (gemm, conv): f32 (the default) or bf16, the samples' precisions,
// and with `f64_offered` (the GEMM passes) f64; `what` says what bf16 means for the verb's sample.
// Call parse_sample_dtype after parsing.
void add_sample_dtype_option(CLI::App& app, std::string& name, const char* what, bool f64_offered = false);
// CliError for any other name than f32 and bf16 (and f64 when offered).
jit::DataType parse_sample_dtype(const std::string& name, bool f64_offered = false);

// "a_0_K,b_1_M;a_0_K,b_0_M": loop specs separated by ';'. CliError naming `option` when one does
// not parse or there is none.
std::vector<tuner::LoopSpecification> parse_specs(const std::string& text, const std::string& option);

// CliError when `path` cannot be opened for writing, so that a long run does not end in a failed
// write. Leaves no file behind (one it had to create is removed again); with `create_parents`,
// missing directories are created, as saving a database would.
void check_writable(const std::string& what, const std::filesystem::path& path, bool create_parents);

// Everything about the request that measuring cannot fix, before the search starts: a knob
// setting (else CliError with `empty_space_hint`), loop specs that fit the workload's loops and
// reductions, a writable plot and database.
void check_request(const tuner::Workload& workload, const Request& request, const std::string& empty_space_hint);

// Builds a workload from the arguments: what it rejects is bad usage (CliError), except memory
// that could not be allocated (MemoryError::Reason::allocation_failed, passed on).
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

// Tunes (or with --dry-run prints the search space), prints the table, writes the plot and saves
// the winner. What goes wrong once the request is accepted is a run-time failure (exit status 1),
// except a request that leaves nothing to measure, which is bad usage.
int run_tuning(const tuner::Workload& workload, const Request& request, std::FILE* out, std::FILE* err);

}  // namespace weft::samples
