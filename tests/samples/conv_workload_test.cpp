// The convolution passes as tuner workloads: candidates from every knob setting and across the
// search space right on small shapes (padding, strides, remainders, C = 3), distinct database
// kinds, the samples' configurations of tuned records, and `auto`'s lookup.
#include <omp.h>

#include <map>
#include <ostream>
#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <weft/jit/error.hpp>

#if defined(WEFT_HAVE_GEMM_TUNING)  // the tuning libraries are built with the tuner
#include <weft/ops/best_conv_config.hpp>
#include <weft/ops/conv_model.hpp>
#include <weft/ops/conv_workload.hpp>
#include <weft/parlooper/loop_string.hpp>
#include <weft/tuner/tuner.hpp>

#include "conv_test_support.hpp"
#include "temporary_tuning_database.hpp"
#endif

namespace weft::samples {
namespace {

using weft::ops::best_conv_config;
using weft::ops::conv_key;
using weft::ops::ConvBwdConfig;
using weft::ops::ConvFwdChoice;
using weft::ops::ConvFwdConfig;
using weft::ops::ConvPassKind;
using weft::ops::ConvSearchOptions;
using weft::ops::ConvShape;
using weft::ops::ConvWorkload;

#ifdef WEFT_HAVE_GEMM_TUNING
using test::square_shape;

struct PassCase {
  const char* name;
  ConvPassKind pass;
  ConvShape shape;
  ConvSearchOptions search;
};

void PrintTo(const PassCase& c, std::ostream* os) { *os << c.name; }

class ConvCandidates : public ::testing::TestWithParam<PassCase> {};

// What the tuner would measure: the first candidates of every knob setting and a spread over the
// whole space (its orders per setting are too many to check in a unit test), each prepared and
// checked on poisoned outputs against the reference.
TEST_P(ConvCandidates, PassTheirReferenceCheck) {
  const PassCase& c = GetParam();
  const ConvWorkload workload(c.shape, c.pass, c.search);
  ASSERT_FALSE(workload.knob_choices().empty());
  tuner::TunerOptions options;
  options.threads = 2;
  options.blocks.max_choices = 2;
  const tuner::SearchSpace space = tuner::build_search_space(workload, options);
  ASSERT_GT(space.candidates.size(), 24u);
  omp_set_num_threads(2);  // prepare() takes the team from OpenMP, as under tune()
  std::map<std::string, int> per_setting;
  std::size_t checked = 0, blocked = 0, parallel_reductions = 0;
  const std::size_t stride = space.candidates.size() / 16 + 1;
  for (std::size_t i = 0; i < space.candidates.size(); ++i) {
    const tuner::TunedConfig& config = space.candidates[i].config;
    std::string setting;
    for (const auto& [name, value] : config.knobs) setting += name + "=" + std::to_string(value) + " ";
    if (per_setting[setting]++ >= 1 && i % stride != 0) continue;
    for (const auto& level : parlooper::parse_loop_string(config.loop_string, 7).levels)
      parallel_reductions += level.par != parlooper::ParKind::none &&
                             workload.loops(config.knobs)[static_cast<std::size_t>(level.loop)].reduction;
    for (const auto& b : config.blocks) blocked += !b.empty();
    const tuner::CheckResult check = workload.prepare(config)->check();
    EXPECT_TRUE(check.passed) << c.name << " " << config.to_string() << ": " << check.message;
    ++checked;
  }
  EXPECT_GT(checked, 12u);
  EXPECT_GE(2 * per_setting.size(), workload.knob_choices().size());  // some only pruned (imbalance)
  if (c.pass != ConvPassKind::upd) {
    EXPECT_GT(blocked, 0u);
  }
  // Only the update combines partial results, so only its reductions may run in parallel.
  if (c.pass == ConvPassKind::upd) EXPECT_GT(parallel_reductions, 0u);
  else EXPECT_EQ(parallel_reductions, 0u);
  omp_set_num_threads(1);
  EXPECT_TRUE(workload.prepare(workload.default_config(1))->check().passed);
}

INSTANTIATE_TEST_SUITE_P(
    Passes, ConvCandidates,
    ::testing::Values(
        PassCase{"fwd_3x3_pad1", ConvPassKind::fwd, square_shape(2, 8, 40, 24, 3, 1, 1), {.bc = {16, 32}, .bk = {16}, .specs = {}}},
        PassCase{"fwd_1x1_stride2_c3", ConvPassKind::fwd, square_shape(1, 9, 3, 16, 1, 2, 0), {.bc = {16}, .bk = {8, 16}, .specs = {}}},
        PassCase{"bwd_3x3_pad1", ConvPassKind::bwd, square_shape(2, 8, 24, 40, 3, 1, 1), {.bc = {16}, .bk = {16, 32}, .specs = {}}},
        PassCase{"bwd_3x3_stride2", ConvPassKind::bwd, square_shape(1, 9, 16, 16, 3, 2, 1), {.bc = {8, 16}, .bk = {16}, .specs = {}}},
        PassCase{"upd_3x3_pad1", ConvPassKind::upd, square_shape(2, 8, 24, 16, 3, 1, 1), {.bc = {16}, .bk = {8, 16}, .specs = {}}},
        PassCase{"upd_1x1_stride2", ConvPassKind::upd, square_shape(2, 9, 16, 24, 1, 2, 0), {.bc = {16}, .bk = {16}, .specs = {}}}),
    [](const auto& p) { return std::string(p.param.name); });

TEST(ConvWorkload, KnobsFollowTheShape) {
  // C = 3: one block of all three channels; strided 1x1: pack_input both ways; 7 rows: h_in_gemm 7.
  const ConvWorkload first(square_shape(1, 14, 3, 64, 1, 2, 0), ConvPassKind::fwd);
  std::set<long> bcs, packs, rows;
  for (const tuner::Knobs& k : first.knob_choices()) {
    const tuner::TunedConfig c{k, "", {}};
    bcs.insert(c.knob("bc", -1));
    packs.insert(c.knob("pack_input", -1));
    rows.insert(c.knob("h_in_gemm", -1));
  }
  EXPECT_EQ(bcs, (std::set<long>{3}));
  EXPECT_EQ(packs, (std::set<long>{0, 1}));
  EXPECT_TRUE(rows.count(7)) << "ofh = 7";
  // Unstrided 3x3: no pack_input; 64 channels: blocks 32 and 64.
  const ConvWorkload layer(square_shape(1, 14, 64, 64, 3, 1, 1), ConvPassKind::fwd);
  bcs.clear(), packs.clear();
  for (const tuner::Knobs& k : layer.knob_choices()) {
    bcs.insert(tuner::TunedConfig{k, "", {}}.knob("bc", -1));
    packs.insert(tuner::TunedConfig{k, "", {}}.knob("pack_input", -1));
  }
  EXPECT_EQ(bcs, (std::set<long>{32, 64}));
  EXPECT_EQ(packs, (std::set<long>{0}));
  EXPECT_LE(layer.knob_choices().size(), 40u);  // small enough to scout each in a minute
}

TEST(ConvWorkload, PassesAreDistinctWorkloadsWithTheirOwnReductions) {
  const ConvShape shape = square_shape(1, 56, 64, 64, 3, 1, 1);
  EXPECT_EQ(conv_key(ConvPassKind::fwd, shape, 2).to_string(),
            "conv_fwd N=1 H=56 W=56 C=64 K=64 R=3 S=3 stride_h=1 stride_w=1 pad_h=1 pad_w=1 fp32 threads=2");
  EXPECT_EQ(conv_key(ConvPassKind::bwd, shape, 2).kind, "conv_bwd");
  EXPECT_EQ(conv_key(ConvPassKind::upd, shape, 2).kind, "conv_upd");
  EXPECT_NE(conv_key(ConvPassKind::fwd, shape, 1), conv_key(ConvPassKind::fwd, shape, 2));
  const std::map<ConvPassKind, std::string> reductions{
      {ConvPassKind::fwd, "bfg"}, {ConvPassKind::bwd, "cfg"}, {ConvPassKind::upd, "ade"}};
  for (const auto& [pass, letters] : reductions) {
    const ConvWorkload w(square_shape(1, 8, 16, 16, 3, 1, 1), pass);
    std::string found;
    const auto loops = w.loops(w.default_config(1).knobs);
    ASSERT_EQ(loops.size(), 7u);
    for (std::size_t x = 0; x < loops.size(); ++x)
      if (loops[x].reduction) found += static_cast<char>('a' + x);
    EXPECT_EQ(found, letters) << ops::to_string(pass);
    EXPECT_EQ(w.supports_parallel_reduction(), pass == ConvPassKind::upd);
    // The untuned choice: the machine model's for fwd and bwd (the reduction's chunks outside the
    // output's blocks), the samples' default for upd.
    EXPECT_EQ(w.default_config(1).loop_string, pass == ConvPassKind::bwd ? "Acbdefg" : "Abcdefg");
  }
  EXPECT_THROW(ops::parse_conv_pass("mlp"), Error);
  EXPECT_EQ(ops::parse_conv_pass("bwd"), ConvPassKind::bwd);
}

TEST(ConvWorkload, TunedConfigurationsBecomeTheSamplesConfigurations) {
  const ConvShape shape = square_shape(1, 14, 64, 64, 3, 1, 1);
  const tuner::TunedConfig fwd{{{"bc", 64}, {"bk", 32}, {"h_in_gemm", 2}, {"c_block", 2}}, "acdbefgcd", {{}, {}, {1}, {4}}};
  const ConvFwdConfig f = ops::to_conv_fwd_config(fwd, shape);
  EXPECT_EQ(f.bc, 64);
  EXPECT_EQ(f.h_in_gemm, 2);
  EXPECT_EQ(f.c_block, 2);
  EXPECT_EQ(f.k_block, 1);
  EXPECT_EQ(f.h_block, 4);
  EXPECT_EQ(f.w_block, 1);  // the sample's default
  const ConvBwdConfig b = ops::to_conv_bwd_config({{{"k_block", 2}}, "abbcdefg", {{}, {1}}}, shape);
  EXPECT_EQ(b.c_block, 1);
  EXPECT_EQ(b.k_block, 2);
  // Blocks the samples cannot take are refused, not dropped.
  EXPECT_THROW(ops::to_conv_fwd_config({{}, "aabcdefg", {{1}}}, shape), Error);
  EXPECT_THROW(ops::to_conv_upd_config({{}, "abcddefg", {{}, {}, {}, {2}}}, shape), Error);
}

using BestConvConfig = test::TemporaryTuningDatabase;

TEST_F(BestConvConfig, ExactNearestAndDefault) {
  const tuner::TuningDatabase db(path_);
  const ConvShape shape = square_shape(1, 14, 64, 64, 3, 1, 1);
  add(conv_key(ConvPassKind::fwd, shape, 1),
      {{{"bc", 64}, {"bk", 32}, {"h_in_gemm", 2}, {"w_block", 1}, {"c_block", 1}, {"pack_input", 0}}, "acbdefgd", {{}, {}, {}, {4}}});
  ConvFwdConfig problem;
  problem.shape = shape;
  problem.with_relu = true;
  const ConvFwdChoice exact = best_conv_config(problem, 1, db);
  EXPECT_EQ(exact.source, tuner::ConfigSource::exact) << exact.detail;
  EXPECT_EQ(exact.config.loop_string, "acbdefgd");
  EXPECT_EQ(exact.config.h_block, 4);
  EXPECT_TRUE(exact.config.with_relu);  // the user's, kept
  EXPECT_EQ(exact.describe().rfind("exact hit: acbdefgd bc=64 bk=32 h_in_gemm=2", 0), 0u) << exact.describe();
  // A nearby shape takes the record when the sample accepts it.
  problem.shape = square_shape(1, 16, 64, 64, 3, 1, 1);
  EXPECT_EQ(best_conv_config(problem, 1, db).source, tuner::ConfigSource::nearest);
  // Another pass, or another team: the untuned choice (backward by data: the machine model's).
  ConvBwdConfig bwd;
  bwd.shape = shape;
  const ops::ConvBwdChoice none = best_conv_config(bwd, 1, db);
  EXPECT_EQ(none.source, tuner::ConfigSource::heuristic);
  EXPECT_EQ(none.config.loop_string, "Acbdefg");
  EXPECT_EQ(none.config.bc, ops::ConvMachine::current().gemm_rows);  // one register row panel: 32 with AVX2 code
  problem.shape = shape;
  EXPECT_EQ(best_conv_config(problem, 2, db).source, tuner::ConfigSource::heuristic);
}

// A layer whose filter layout fixes bc and bk asks for the best with them: a tile-bound record of
// those tiles before a free record with other tiles (which would block the filter otherwise),
// a free record with the same tiles where no tile-bound one exists, else the untuned choice with the
// tiles; a tiling the pass refuses throws. Free lookups never see tile-bound records.
TEST_F(BestConvConfig, TilesBindTheLookup) {
  const tuner::TuningDatabase db(path_);
  const ConvShape shape = square_shape(1, 14, 64, 64, 3, 1, 1);
  ConvBwdConfig problem;
  problem.shape = shape;
  tuner::WorkloadKey bound = conv_key(ConvPassKind::bwd, shape, 1);
  bound.tiles = {{"bc", 32}, {"bk", 32}};
  add(conv_key(ConvPassKind::bwd, shape, 1), {{{"bc", 64}, {"bk", 64}, {"h_in_gemm", 2}}, "acbdefg", {}});
  add(bound, {{{"bc", 32}, {"bk", 32}, {"h_in_gemm", 7}}, "bacdefg", {}});
  const ops::ConvBwdChoice free = best_conv_config(problem, 1, db);
  EXPECT_EQ(free.config.loop_string, "acbdefg") << free.detail;
  const ops::ConvBwdChoice tiled = best_conv_config(problem, 1, {{"bc", 32}, {"bk", 32}}, db);
  EXPECT_EQ(tiled.source, tuner::ConfigSource::exact) << tiled.detail;
  EXPECT_EQ(tiled.config.loop_string, "bacdefg");
  EXPECT_EQ(tiled.config.h_in_gemm, 7);
  EXPECT_NE(tiled.detail.find("tiles bc=32 bk=32"), std::string::npos) << tiled.detail;
  // The free record has these tiles: it serves them.
  const ops::ConvBwdChoice same = best_conv_config(problem, 1, {{"bc", 64}, {"bk", 64}}, db);
  EXPECT_EQ(same.source, tuner::ConfigSource::exact) << same.detail;
  EXPECT_EQ(same.config.loop_string, "acbdefg");
  // No record with these tiles: the untuned choice with them.
  const ops::ConvBwdChoice untuned = best_conv_config(problem, 1, {{"bc", 16}, {"bk", 64}}, db);
  EXPECT_EQ(untuned.source, tuner::ConfigSource::heuristic);
  EXPECT_EQ(untuned.config.bc, 16);
  EXPECT_EQ(untuned.config.bk, 64);
  // An odd bc where bf16 pairs channels: no configuration takes it.
  problem.dtype = jit::DataType::bf16;
  EXPECT_THROW(best_conv_config(problem, 1, {{"bc", 5}, {"bk", 32}}, db), Error);
}

// A tile-bound search: one bc and one bk, the key carries them, and the baseline has them too (the
// best may be the baseline: a record of other tiles would not be what its key says).
TEST(ConvWorkload, TileBoundSearchesKeyAndBaselineTheirTiles) {
  const ConvShape shape = square_shape(1, 8, 32, 32, 3, 1, 1);
  ops::ConvSearchOptions search;
  search.bc = {16};
  search.bk = {8};
  search.tile_bound = true;
  const ops::ConvWorkload workload(shape, ConvPassKind::fwd, search);
  const tuner::WorkloadKey key = workload.key(2);
  EXPECT_EQ(key.tiles, (tuner::Knobs{{"bc", 16}, {"bk", 8}}));
  EXPECT_TRUE(key.to_string().ends_with(" threads=2 tiles bc=16 bk=8")) << key.to_string();
  const tuner::TunedConfig baseline = workload.default_config(2);
  EXPECT_EQ(baseline.knob("bc", 0), 16);
  EXPECT_EQ(baseline.knob("bk", 0), 8);
  // A free search's key has no tiles; a bound one with two values for a tile is refused.
  search.tile_bound = false;
  EXPECT_TRUE(ops::ConvWorkload(shape, ConvPassKind::fwd, search).key(2).tiles.empty());
  search.tile_bound = true;
  search.bk = {8, 16};
  EXPECT_THROW(ops::ConvWorkload(shape, ConvPassKind::fwd, search), Error);
}

// Padding 0 (every 1x1 layer) is part of the key; such records were never found (a zero made the
// shape distance infinite), so `auto` ran the default on them.
TEST_F(BestConvConfig, FindsOneByOneLayersWithoutPadding) {
  const tuner::TuningDatabase db(path_);
  const ConvShape shape = square_shape(1, 14, 64, 64, 1, 1, 0);
  add(conv_key(ConvPassKind::upd, shape, 1), {{{"bc", 32}, {"bk", 32}, {"h_in_gemm", 14}}, "abcdefg", {}});
  ops::ConvUpdConfig problem;
  problem.shape = shape;
  const ops::ConvUpdChoice found = best_conv_config(problem, 1, db);
  EXPECT_EQ(found.source, tuner::ConfigSource::exact) << found.detail;
  EXPECT_EQ(found.config.h_in_gemm, 14);
}

// Untuned, the default's blocks shrink to the channels: conv1 (C = 3) in blocks of 32 multiplied
// 29 zero channels into every sum.
TEST_F(BestConvConfig, DefaultBlocksAreNoLargerThanTheChannels) {
  ConvFwdConfig problem;
  problem.shape = square_shape(1, 16, 3, 16, 7, 2, 3);
  const ConvFwdChoice stem = best_conv_config(problem, 1, tuner::TuningDatabase(path_));
  EXPECT_EQ(stem.source, tuner::ConfigSource::heuristic);
  EXPECT_EQ(stem.config.bc, 3);
  EXPECT_EQ(stem.config.bk, 16);
}
#endif

}  // namespace
}  // namespace weft::samples

namespace weft::samples {
namespace {

// bf16 (weft-tune conv --dtype bf16): its own key, even channel blocks, candidates that pass the
// check within the bf16 tolerance (every pass), and data types without samples refused.
TEST(ConvWorkload, Bf16ForwardHasItsOwnKeyAndEvenChannelBlocks) {
  const ConvShape conv1 = square_shape(1, 12, 3, 8, 3, 2, 1);
  ConvSearchOptions bf16;
  bf16.dtype = jit::DataType::bf16;
  const ConvWorkload w(conv1, ConvPassKind::fwd, bf16);
  EXPECT_EQ(w.key(1).dtype, "bf16");
  EXPECT_NE(w.key(1), ConvWorkload(conv1, ConvPassKind::fwd).key(1));
  std::set<long> bcs;
  for (const tuner::Knobs& k : w.knob_choices()) bcs.insert(tuner::TunedConfig{k, "", {}}.knob("bc", -1));
  EXPECT_EQ(bcs, (std::set<long>{4})) << "C = 3: one block of 3 channels and a zero one";
  EXPECT_EQ(w.default_config(1).knob("bc", -1), 4) << "the default too (it was 3, which bf16 refuses)";
  omp_set_num_threads(1);
  for (const tuner::Knobs& k : w.knob_choices()) {
    const tuner::CheckResult check = w.prepare(tuner::TunedConfig{k, "Abcdefg", {}})->check();
    EXPECT_TRUE(check.passed) << check.message;
  }
  ConvSearchOptions f64;
  f64.dtype = jit::DataType::f64;
  EXPECT_THAT([&] { ConvWorkload(conv1, ConvPassKind::upd, f64); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("the samples run f32 or bf16")));
  // The backward passes: their candidates pass their check in bf16 too (the update's on the stem's
  // odd channel count and odd output width, and with partial filters on two threads).
  const ConvWorkload bwd(square_shape(1, 6, 8, 8, 3, 1, 1), ConvPassKind::bwd, bf16);
  EXPECT_EQ(bwd.key(1).dtype, "bf16");
  for (const tuner::Knobs& k : bwd.knob_choices()) {
    const tuner::CheckResult check = bwd.prepare(tuner::TunedConfig{k, "Abcdefg", {}})->check();
    EXPECT_TRUE(check.passed) << check.message;
  }
  const ConvWorkload upd(square_shape(2, 13, 3, 8, 3, 2, 1), ConvPassKind::upd, bf16);
  EXPECT_EQ(upd.key(1).dtype, "bf16");
  for (const tuner::Knobs& k : upd.knob_choices()) {
    EXPECT_EQ((tuner::TunedConfig{k, "", {}}.knob("bc", -1)), 4);
    const tuner::CheckResult check = upd.prepare(tuner::TunedConfig{k, "Abcdefg", {}})->check();
    EXPECT_TRUE(check.passed) << check.message;
  }
  omp_set_num_threads(2);
  const tuner::CheckResult partial = upd.prepare(tuner::TunedConfig{upd.knob_choices().front(), "Abcdefg", {}})->check();
  EXPECT_TRUE(partial.passed) << partial.message;
}

using BestBf16ConvConfig = test::TemporaryTuningDatabase;

TEST_F(BestBf16ConvConfig, TheDataTypeIsPartOfTheLookup) {
  const tuner::TuningDatabase db(path_);
  const ConvShape shape = square_shape(1, 14, 64, 64, 3, 1, 1);
  add(conv_key(ConvPassKind::fwd, shape, 1, jit::DataType::bf16),
      {{{"bc", 64}, {"bk", 64}, {"h_in_gemm", 1}, {"w_block", 1}, {"c_block", 1}, {"pack_input", 0}}, "abcdefg", {}});
  ConvFwdConfig problem;
  problem.shape = shape;
  EXPECT_EQ(best_conv_config(problem, 1, db).source, tuner::ConfigSource::heuristic) << "an fp32 problem, a bf16 record";
  problem.dtype = jit::DataType::bf16;
  const ConvFwdChoice found = best_conv_config(problem, 1, db);
  EXPECT_EQ(found.source, tuner::ConfigSource::exact) << found.detail;
  EXPECT_TRUE(found.config.bf16());
  EXPECT_EQ(found.config.bk, 64);
  // Every pass keeps the problem's data type, from a record or from the default.
  add(conv_key(ConvPassKind::upd, shape, 1, jit::DataType::bf16), {{{"bc", 64}, {"bk", 64}, {"h_in_gemm", 14}}, "Abcdefg", {}});
  ops::ConvUpdConfig upd;
  upd.shape = shape;
  upd.dtype = jit::DataType::bf16;
  const ops::ConvUpdChoice upd_found = best_conv_config(upd, 1, db);
  EXPECT_EQ(upd_found.source, tuner::ConfigSource::exact) << upd_found.detail;
  EXPECT_TRUE(upd_found.config.bf16());
  ConvBwdConfig bwd;
  bwd.shape = shape;
  bwd.dtype = jit::DataType::bf16;
  EXPECT_TRUE(best_conv_config(bwd, 1, db).config.bf16()) << "the default";
  upd.shape.K = 48;
  EXPECT_TRUE(best_conv_config(upd, 1, db).config.bf16()) << "the nearest tuned shape";
}

}  // namespace
}  // namespace weft::samples
