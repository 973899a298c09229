// The configuration the convolution samples' `auto` mode runs (weft-conv-fwd, -bwd, -upd): the
// tuning database's best for the pass, shape and team on this machine (exact shape), else the
// best of the nearest tuned shape that the sample accepts (the user's database, then the shipped
// ones: shipped_tuning.hpp), else, untuned, the machine model's choice (conv_model.hpp: blocks,
// rows per GEMM, the reduction's chunks from this CPU's L2, the parallel loop from the team; where
// the sample refuses it, default_conv_config: "Abcdefg", bc = bk = 32 or the channels if fewer). The lookup is the tuner's (tuned_lookup.hpp);
// this file applies its result to the samples' configurations.
//
//   ops::ConvFwdConfig problem;
//   problem.shape = {.N = 1, .H = 56, .W = 56, .C = 64, .K = 64, .R = 3, .S = 3, .pad_h = 1, .pad_w = 1};
//   ConvFwdChoice choice = best_conv_config(problem, /*threads=*/1);
//   ops::ConvFwd conv(choice.config);
//   std::puts(choice.describe().c_str());   // "exact hit: Afgbdced bc=64 bk=64 h_in_gemm=1 ... (<db>: ...)"
#pragma once

#include <string>

#include <weft/ops/conv_bwd.hpp>
#include <weft/ops/conv_fwd.hpp>
#include <weft/ops/conv_upd.hpp>
#include <weft/tuner/tuned_lookup.hpp>
#include <weft/tuner/tuning_database.hpp>

// The tuner prints a choice through TunedChoice<Config>::describe(), which each sample specializes
// for its configurations: an explicit specialization belongs to the template's namespace.
namespace weft::tuner {
template <>
std::string TunedChoice<ops::ConvFwdConfig>::describe() const;
template <>
std::string TunedChoice<ops::ConvBwdConfig>::describe() const;
template <>
std::string TunedChoice<ops::ConvUpdConfig>::describe() const;
}  // namespace weft::tuner

namespace weft::ops {

template <class Config>
using ConvPassChoice = tuner::TunedChoice<Config>;
using ConvFwdChoice = ConvPassChoice<ConvFwdConfig>;
using ConvBwdChoice = ConvPassChoice<ConvBwdConfig>;
using ConvUpdChoice = ConvPassChoice<ConvUpdConfig>;

// `problem` gives the shape; for the forward pass also the padding mode, rims and fused epilogue
// (kept). Its loop_string, blocks and tuning knobs are replaced. A record the sample rejects for
// this shape (the pass's check(), which generates no code) is skipped. The team is `threads` (the update's partial filters follow OpenMP's team,
// which must be set before). Never throws for database trouble.
ConvFwdChoice best_conv_config(const ConvFwdConfig& problem, int threads,
                               const tuner::TuningDatabase& database = tuner::TuningDatabase());
ConvBwdChoice best_conv_config(const ConvBwdConfig& problem, int threads,
                               const tuner::TuningDatabase& database = tuner::TuningDatabase());
ConvUpdChoice best_conv_config(const ConvUpdConfig& problem, int threads,
                               const tuner::TuningDatabase& database = tuner::TuningDatabase());

// The same for a layer whose weight layout fixes the channel blocks: `tiles` = {{"bc", ..}, {"bk",
// ..}} (tile_bound.hpp). A tile-bound record of these tiles (weft-tune conv --tile-bound), else a
// free record whose configuration has them (each found as above), else the untuned choice with
// these tiles set, else the default with them. Throws weft::Error when the pass takes no
// configuration with these tiles. Empty tiles: the overloads above.
ConvFwdChoice best_conv_config(const ConvFwdConfig& problem, int threads, const tuner::Knobs& tiles,
                               const tuner::TuningDatabase& database = tuner::TuningDatabase());
ConvBwdChoice best_conv_config(const ConvBwdConfig& problem, int threads, const tuner::Knobs& tiles,
                               const tuner::TuningDatabase& database = tuner::TuningDatabase());
ConvUpdChoice best_conv_config(const ConvUpdConfig& problem, int threads, const tuner::Knobs& tiles,
                               const tuner::TuningDatabase& database = tuner::TuningDatabase());

}  // namespace weft::ops
