// The tuned configuration of a GEMM operator (what `auto` runs in weft-gemm, -bwd, -upd):
// the tuning database's best for this pass and shape on this machine (exact shape), else the best
// of the nearest tuned shape, else a heuristic. The lookup is the tuner's (tuned_lookup.hpp);
// this file applies its result to the operators' configurations.
//
//   ops::GemmBwdConfig problem;                  // the shape
//   problem.M = problem.N = problem.K = 2048;
//   GemmBwdChoice choice = best_gemm_config(problem, /*threads=*/2);
//   GemmBwd bwd(choice.config);            // loop_string, bm/bn/bk, mbf, private_trans and blocks filled in
//   std::printf("%s\n", choice.describe().c_str());   // "exact hit: ... (~/.cache/weft/tuning.jsonl: ...)"
#pragma once

#include <string>

#include <weft/ops/gemm_bwd.hpp>
#include <weft/ops/gemm_fwd.hpp>
#include <weft/ops/gemm_upd.hpp>
#include <weft/tuner/tuned_lookup.hpp>
#include <weft/tuner/tuning_database.hpp>

// The tuner prints a choice through TunedChoice<Config>::describe(), which each operator specializes
// for its configurations: an explicit specialization belongs to the template's namespace.
namespace weft::tuner {
template <>
std::string TunedChoice<ops::GemmFwdConfig>::describe() const;
template <>
std::string TunedChoice<ops::GemmBwdConfig>::describe() const;
template <>
std::string TunedChoice<ops::GemmUpdConfig>::describe() const;
}  // namespace weft::tuner

namespace weft::ops {

template <class Config>
using GemmPassChoice = tuner::TunedChoice<Config>;
using GemmChoice = GemmPassChoice<GemmFwdConfig>;
using GemmBwdChoice = GemmPassChoice<GemmBwdConfig>;
using GemmUpdChoice = GemmPassChoice<GemmUpdConfig>;

// `problem` gives M, N, K and the precision (dtype, kept); for the forward pass also n_layers and
// the fused epilogue (kept). Its loop_string, tile sizes, chunks, transposes and block lists are
// replaced. An MLP (n_layers > 1) takes an MLP record (kind gemm_mlp) else a single layer's
// (gemm_fwd), with bk = bm. The records are those of the problem's dtype ("fp32", "bf16" or "fp64"); a
// bf16 problem without one that fits takes an FP32 record (`detail` then starts "no BF16 record
// fits; the FP32 one, run in BF16: "), else the heuristic; an f64 problem without an fp64 record
// takes the heuristic. A database record that this problem rejects (e.g. a
// block list that does not fit, or an odd tile where bf16 pairs elements; the pass's check(), which
// generates no code) is skipped. Never throws
// for database trouble (an unreadable file falls back to the heuristic, with the reason in `detail`).
GemmChoice best_gemm_config(const GemmFwdConfig& problem, int threads,
                            const tuner::TuningDatabase& database = tuner::TuningDatabase());
GemmBwdChoice best_gemm_config(const GemmBwdConfig& problem, int threads,
                               const tuner::TuningDatabase& database = tuner::TuningDatabase());
GemmUpdChoice best_gemm_config(const GemmUpdConfig& problem, int threads,
                               const tuner::TuningDatabase& database = tuner::TuningDatabase());

// The same for a layer whose weight layout fixes the weight's tiles: `tiles` = {{"bm", ..}, {"bk",
// ..}} (tile_bound.hpp; "bn" may be fixed too). A tile-bound record of these tiles (weft-tune gemm
// --tile-bound), else a free record whose configuration has them (each found as above, bf16 then
// FP32), else the heuristic with these tiles, else the plain loops with them. Throws weft::Error
// when the pass takes no configuration with these tiles. Empty tiles: the overloads above.
GemmChoice best_gemm_config(const GemmFwdConfig& problem, int threads, const tuner::Knobs& tiles,
                            const tuner::TuningDatabase& database = tuner::TuningDatabase());
GemmBwdChoice best_gemm_config(const GemmBwdConfig& problem, int threads, const tuner::Knobs& tiles,
                               const tuner::TuningDatabase& database = tuner::TuningDatabase());
GemmUpdChoice best_gemm_config(const GemmUpdConfig& problem, int threads, const tuner::Knobs& tiles,
                               const tuner::TuningDatabase& database = tuner::TuningDatabase());

// The forward heuristic alone: ops::recommended_gemm_config (gemm_defaults.hpp), else the
// plain loops ("aBC", 32-cubed tiles, one chunk) where that does not fit the problem. The
// backward passes' heuristic is that default.
GemmFwdConfig heuristic_gemm_config(const GemmFwdConfig& problem, int threads);

}  // namespace weft::ops
