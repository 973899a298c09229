// The tuning driver: build the search space of a workload, prune it (canonical duplicates,
// legality, load imbalance, the cost model's top k), measure the survivors in-process in the
// model's order (quick runs with early abort, early stopping, a time budget), measure the best few
// thoroughly, and report the winner with the default configuration measured in the same run.
//
//   GemmWorkload gemm({.M = 1024, .N = 1024, .K = 1024});          // weft/ops/gemm_workload.hpp
//   TuningResult r = tune(gemm, {.threads = 2, .budget_seconds = 30});
//   r.best.config.loop_string;  r.best.gflops;  r.speedup_over_default();
//   TuningDatabase().append(r.record(gemm));
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "weft/jit/error.hpp"
#include "weft/tuner/cache_eviction.hpp"
#include "weft/tuner/cost_model.hpp"
#include "weft/tuner/measurement.hpp"
#include "weft/tuner/tuning_database.hpp"
#include "weft/tuner/workload.hpp"

namespace weft::tuner {

struct TunerOptions {
  int threads = 0;               // 0: omp_get_max_threads()
  double budget_seconds = 60;    // wall time for measuring (model and enumeration not included)
  std::size_t top_k = 0;         // candidates the model keeps; 0: from the budget
  std::size_t finalists = 4;     // measured thoroughly at the end
  double max_imbalance = 0.10;   // prune when the slowest thread has > 10% more work than average
  // Stop the quick phase after this many measured candidates in a row without a 1% gain
  // (0: from the number kept).
  std::size_t patience = 0;
  bool exhaustive = false;       // no model cut, no budget, no early stopping: the reference search
  // Before every timed run the team writes buffers of twice its L2s and the L3 (cache_eviction.hpp):
  // runs start with cold caches, as a layer in a network or in an interleaved benchmark does.
  bool cold_caches = false;
  std::vector<LoopSpecification> specs;  // empty: the workload's
  LoopStringOptions loop_strings{};      // threads is set from `threads`
  BlockOptions blocks{};
  MeasureOptions quick = MeasureOptions::quick();
  MeasureOptions thorough = MeasureOptions::thorough();
  MachineModel machine = MachineModel::current();
};

struct Candidate {
  TunedConfig config;
  CostEstimate estimate;
};

// How many candidates each pruning step left.
struct SpaceStats {
  std::size_t enumerated = 0;
  std::size_t distinct = 0;    // after canonical deduplication
  std::size_t legal = 0;       // parses, fits the workload's loops, no parallel reduction, ...
  std::size_t balanced = 0;    // imbalance within max_imbalance
  std::size_t kept = 0;        // after the model's top k
};

struct SearchSpace {
  std::vector<Candidate> candidates;  // balanced legal candidates, best model estimate first
  SpaceStats stats;
};

// Enumerates and prunes everything except the top-k cut (stats.kept = candidates.size()).
SearchSpace build_search_space(const Workload& workload, const TunerOptions& options);

// Why a loop string / blocking is illegal for `loops`, or nullopt when it is legal.
std::optional<std::string> legality_problem(const parlooper::LoopNest& nest,
                                            std::span<const LogicalLoop> loops,
                                            const std::vector<std::vector<long>>& blocks,
                                            int threads, bool allow_parallel_reduction);

struct CandidateResult {
  TunedConfig config;
  std::size_t search_index = 0;  // position in measurement order (0 = the default config)
  double model_seconds = 0;      // 0 for the default config
  double quick_gflops = 0;
  double thorough_gflops = 0;    // 0 unless a finalist
  bool aborted = false;          // quick run stopped early, quick_gflops is a lower estimate
  bool failed = false;           // rejected by the workload or wrong result
  std::string message;           // why it failed
  double gflops() const { return thorough_gflops > 0 ? thorough_gflops : quick_gflops; }
};

struct TuningResult {
  WorkloadKey key;
  SpaceStats stats;
  std::vector<CandidateResult> measured;  // in measurement order, the default config first
  CandidateResult best;                   // thorough measurement
  CandidateResult baseline;               // the default config, thorough measurement
  double seconds = 0;                     // wall time of the whole run
  double search_seconds = 0;              // enumeration + pruning + model
  bool stopped_early = false;
  bool budget_exhausted = false;
  bool cold_caches = false;               // measured with TunerOptions::cold_caches

  double speedup_over_default() const {
    return baseline.gflops() > 0 ? best.gflops() / baseline.gflops() : 0;
  }
  // The database record of the winner.
  TuningRecord record() const;
};

// Called after every measured candidate (progress bars, logs).
struct Progress {
  std::size_t done = 0, total = 0;
  const CandidateResult* last = nullptr;
  double best_gflops = 0;
  double elapsed_seconds = 0, budget_seconds = 0;
  const char* phase = "quick";  // "quick" or "thorough"
};
using ProgressCallback = std::function<void(const Progress&)>;

// No candidate survives pruning: the request itself (sizes, knobs, threads, loop specs, imbalance
// limit) leaves nothing to measure, so measuring cannot help; tools report it as bad usage.
class NoCandidateError : public Error {
 public:
  using Error::Error;
};

// Throws NoCandidateError when the workload has no legal, balanced candidate and weft::Error when
// its default config fails.
TuningResult tune(const Workload& workload, const TunerOptions& options,
                  const ProgressCallback& progress = {});

}  // namespace weft::tuner
