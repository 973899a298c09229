// The configuration `weft-gemm auto` runs: the tuning database's best for this GEMM on this
// machine (exact shape), else the best of the nearest tuned shape, else a heuristic.
//
//   samples::GemmFwdConfig problem;                  // shape and epilogue
//   problem.M = problem.N = problem.K = 2048;
//   GemmChoice choice = best_gemm_config(problem, /*threads=*/2);
//   GemmFwd gemm(choice.config);          // loop_string, bm/bn/bk, kbf and blocks filled in
//   std::printf("%s\n", choice.describe().c_str());   // "exact hit in ~/.cache/weft/tuning.jsonl: ..."
#pragma once

#include <string>

#include <weft/tuner/tuning_database.hpp>

#include "gemm_fwd.hpp"

namespace weft::tuner {

enum class ConfigSource { exact, nearest, heuristic };
std::string_view to_string(ConfigSource source);

struct GemmChoice {
  samples::GemmFwdConfig config;
  ConfigSource source = ConfigSource::heuristic;
  std::string detail;  // the database path and record, or why the heuristic was used
  std::string describe() const;
};

// `problem` gives M, N, K, n_layers and the fused epilogue (kept); its loop_string, tile sizes,
// kbf and block lists are replaced. A database record that this shape rejects (e.g. a block list
// that does not fit) is skipped. Never throws for database trouble (an unreadable file falls back
// to the heuristic, with the reason in `detail`).
GemmChoice best_gemm_config(const samples::GemmFwdConfig& problem, int threads,
                            const TuningDatabase& database = TuningDatabase());

// The heuristic alone: samples::recommended_gemm_config (gemm_defaults.hpp), else the samples'
// default ("aBC", 32-cubed tiles, one chunk) where that does not fit the problem.
samples::GemmFwdConfig heuristic_gemm_config(const samples::GemmFwdConfig& problem, int threads);

}  // namespace weft::tuner
