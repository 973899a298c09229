// The GEMM passes as tuner workloads: shapes beyond the machine refused before allocating, every
// candidate of every pass (MLP and the update's partial filters included) right on small shapes
// with remainders, in FP32, bf16 and FP64, distinct database kinds and dtypes, a wrong bf16 result
// caught, and the tuned configurations the samples' `auto` mode runs.
#include <omp.h>

#include <cmath>
#include <ostream>
#include <set>
#include <span>
#include <string>

#include <gtest/gtest.h>

#include <weft/jit/error.hpp>

#if defined(WEFT_HAVE_GEMM_TUNING)  // the GEMM workload is built with the tuner
#include <weft/jit/data_type.hpp>
#include <weft/ops/best_gemm_config.hpp>
#include <weft/ops/gemm_workload.hpp>
#include <weft/parlooper/loop_string.hpp>
#include <weft/tuner/tuner.hpp>

#include "temporary_tuning_database.hpp"
#endif

namespace weft::samples {
namespace {

using weft::ops::best_gemm_config;
using weft::ops::default_gemm_search;
using weft::ops::gemm_key;
using weft::ops::GemmBwdChoice;
using weft::ops::GemmChoice;
using weft::ops::GemmFwdConfig;
using weft::ops::GemmPassKind;
using weft::ops::GemmSearchOptions;
using weft::ops::GemmShape;
using weft::ops::GemmUpdChoice;
using weft::ops::GemmUpdConfig;
using weft::ops::GemmWorkload;
using weft::ops::partial_filters_for;
using weft::ops::to_string;

#ifdef WEFT_HAVE_GEMM_TUNING

TEST(GemmWorkload, ShapesBeyondThisMachineSayHowMuchMemoryTheyNeed) {
  try {
    GemmWorkload huge({.M = 1000000, .N = 1000000, .K = 1000000});
    FAIL() << "constructed a workload of 21.8 TiB";
  } catch (const MemoryError& e) {
    EXPECT_EQ(e.reason(), MemoryError::Reason::beyond_machine);
    EXPECT_EQ(e.bytes(), std::uint64_t{24000000000000});  // 2 x (MK + KN + MN) floats
    const std::string what = e.what();
    EXPECT_NE(what.find("GEMM M=1000000 N=1000000 K=1000000"), std::string::npos) << what;
    EXPECT_NE(what.find("needs 21.8 TiB of memory, more than this machine's"), std::string::npos) << what;
  }
  EXPECT_THROW(GemmWorkload({.M = 1000000, .N = 1000000, .K = 1000000}, {}, GemmPassKind::upd), MemoryError);
}

TEST(GemmWorkload, SmallShapesStillWork) {
  const GemmWorkload small({.M = 40, .N = 24, .K = 16}, {.bm = {32}, .bn = {32}, .bk = {16}, .chunks = {1}, .specs = {}});
  auto runner = small.prepare(small.default_config(1));
  EXPECT_TRUE(runner->check().passed);
}

TEST(GemmWorkload, BadProblemsAreRefused) {
  EXPECT_THROW(GemmWorkload({.M = 40, .N = 24, .K = 48, .layers = 2}), Error);  // an MLP needs M == K
  EXPECT_THROW(GemmWorkload({.M = 40, .N = 24, .K = 40, .layers = 2}, {}, GemmPassKind::bwd), Error);
  EXPECT_THROW(GemmWorkload({.M = 40, .N = 24, .K = 40}, {.private_trans = {2}, .specs = {}}, GemmPassKind::bwd), Error);
  EXPECT_THROW(ops::parse_gemm_pass("mlp"), Error);
  EXPECT_EQ(ops::parse_gemm_pass("upd"), GemmPassKind::upd);
}

struct PassCase {
  const char* name;
  GemmPassKind pass;
  GemmShape shape;
  GemmSearchOptions search;
};

void PrintTo(const PassCase& c, std::ostream* os) { *os << c.name; }

class EveryCandidate : public ::testing::TestWithParam<PassCase> {};

// What the tuner would measure, each candidate prepared and checked against the reference: a
// candidate that computes something else would be crowned otherwise.
TEST_P(EveryCandidate, PassesItsReferenceCheck) {
  const PassCase& c = GetParam();
  const GemmWorkload workload(c.shape, c.search, c.pass);
  tuner::TunerOptions options;
  options.threads = 2;
  options.blocks.max_choices = 2;
  const tuner::SearchSpace space = tuner::build_search_space(workload, options);
  ASSERT_GT(space.candidates.size(), 20u);
  omp_set_num_threads(2);  // prepare() takes the team from OpenMP, as under tune()
  std::size_t parallel_reductions = 0;
  for (const tuner::Candidate& candidate : space.candidates) {
    const int reduction = c.pass == GemmPassKind::fwd ? 0 : c.pass == GemmPassKind::bwd ? 1 : 2;
    for (const auto& level : parlooper::parse_loop_string(candidate.config.loop_string, 3).levels)
      parallel_reductions += level.loop == reduction && level.par != parlooper::ParKind::none;
    const tuner::CheckResult check = workload.prepare(candidate.config)->check();
    EXPECT_TRUE(check.passed) << c.name << " " << candidate.config.to_string() << ": " << check.message;
  }
  // Only the update combines partial results, so only its reduction may run in parallel.
  if (c.pass == GemmPassKind::upd) EXPECT_GT(parallel_reductions, 0u);
  else EXPECT_EQ(parallel_reductions, 0u);
  EXPECT_TRUE(workload.prepare(workload.default_config(2))->check().passed);
}

// Every order and parallelization of the three loops, and one blocked output loop: the blocked
// strings of the default specs add JIT time, not kinds of candidates.
std::vector<tuner::LoopSpecification> specs(const char* unblocked, const char* blocked) {
  return {tuner::parse_loop_spec(unblocked), tuner::parse_loop_spec(blocked)};
}

INSTANTIATE_TEST_SUITE_P(
    Passes, EveryCandidate,
    ::testing::Values(
        PassCase{"fwd", GemmPassKind::fwd, {40, 24, 48},
                 {.bm = {16}, .bn = {8, 16}, .bk = {16}, .chunks = {1, 2},
                  .specs = specs("a_0_K,b_0_M,c_0_N", "a_0_K,b_1_M,c_0_N")}},
        PassCase{"mlp", GemmPassKind::fwd, {40, 24, 40, 3},
                 {.bm = {8, 16}, .bn = {16}, .bk = {16}, .chunks = {1, 2},
                  .specs = specs("a_0_K,b_0_M,c_0_N", "a_0_K,b_0_M,c_1_N")}},
        PassCase{"bwd", GemmPassKind::bwd, {40, 24, 48},
                 {.bm = {16}, .bn = {16}, .bk = {8, 16}, .chunks = {1, 2}, .private_trans = {0, 1},
                  .specs = specs("a_0_M,b_0_K,c_0_N", "a_1_M,b_0_K,c_0_N")}},
        PassCase{"upd", GemmPassKind::upd, {40, 56, 24},
                 {.bm = {16}, .bn = {16}, .bk = {8, 16}, .chunks = {1, 2}, .private_trans = {0, 1},
                  .specs = specs("a_0_N,b_0_M,c_0_K", "a_0_N,b_1_M,c_0_K")}},
        // bf16: every candidate within the samples' bf16 bound; odd tiles where a pass pairs
        // elements for VNNI-2 (7, 15) become even, odd sizes stay (zero-padded).
        PassCase{"fwd_bf16", GemmPassKind::fwd, {40, 24, 45},
                 {.bm = {16}, .bn = {8, 16}, .bk = {15}, .chunks = {1, 2},
                  .specs = specs("a_0_K,b_0_M,c_0_N", "a_0_K,b_1_M,c_0_N"), .dtype = jit::DataType::bf16}},
        PassCase{"mlp_bf16", GemmPassKind::fwd, {40, 24, 40, 3},
                 {.bm = {7, 16}, .bn = {16}, .bk = {16}, .chunks = {1, 2},
                  .specs = specs("a_0_K,b_0_M,c_0_N", "a_0_K,b_0_M,c_1_N"), .dtype = jit::DataType::bf16}},
        PassCase{"bwd_bf16", GemmPassKind::bwd, {45, 24, 48},
                 {.bm = {15}, .bn = {16}, .bk = {7, 16}, .chunks = {1, 2}, .private_trans = {0, 1},
                  .specs = specs("a_0_M,b_0_K,c_0_N", "a_1_M,b_0_K,c_0_N"), .dtype = jit::DataType::bf16}},
        PassCase{"upd_bf16", GemmPassKind::upd, {40, 55, 24},
                 {.bm = {16}, .bn = {15}, .bk = {7, 16}, .chunks = {1, 2}, .private_trans = {0, 1},
                  .specs = specs("a_0_N,b_0_M,c_0_K", "a_0_N,b_1_M,c_0_K"), .dtype = jit::DataType::bf16}},
        // f64: the float inputs held as doubles, every candidate within kF64CheckedAsFloat; odd
        // tiles stay odd (no VNNI pairs).
        PassCase{"fwd_f64", GemmPassKind::fwd, {40, 24, 45},
                 {.bm = {16}, .bn = {8, 16}, .bk = {15}, .chunks = {1, 2},
                  .specs = specs("a_0_K,b_0_M,c_0_N", "a_0_K,b_1_M,c_0_N"), .dtype = jit::DataType::f64}},
        PassCase{"mlp_f64", GemmPassKind::fwd, {40, 24, 40, 3},
                 {.bm = {7, 16}, .bn = {16}, .bk = {16}, .chunks = {1, 2},
                  .specs = specs("a_0_K,b_0_M,c_0_N", "a_0_K,b_0_M,c_1_N"), .dtype = jit::DataType::f64}},
        PassCase{"bwd_f64", GemmPassKind::bwd, {45, 24, 48},
                 {.bm = {15}, .bn = {16}, .bk = {7, 16}, .chunks = {1, 2}, .private_trans = {0, 1},
                  .specs = specs("a_0_M,b_0_K,c_0_N", "a_1_M,b_0_K,c_0_N"), .dtype = jit::DataType::f64}},
        PassCase{"upd_f64", GemmPassKind::upd, {40, 55, 24},
                 {.bm = {16}, .bn = {15}, .bk = {7, 16}, .chunks = {1, 2}, .private_trans = {0, 1},
                  .specs = specs("a_0_N,b_0_M,c_0_K", "a_0_N,b_1_M,c_0_K"), .dtype = jit::DataType::f64}}),
    [](const auto& p) { return std::string(p.param.name); });

// f64 (weft-tune gemm in f64, weft.tune.gemm(dtype="f64")): its own key "fp64", odd tiles kept.
TEST(GemmWorkload, F64HasItsOwnKeyAndKeepsOddTiles) {
  const GemmShape shape{40, 24, 40};
  const GemmSearchOptions odd{.bm = {15}, .bn = {15}, .bk = {15}, .chunks = {1}, .specs = {}, .dtype = jit::DataType::f64};
  const GemmWorkload fwd(shape, odd, GemmPassKind::fwd);
  EXPECT_EQ(fwd.key(2).to_string(), "gemm_fwd M=40 N=24 K=40 fp64 threads=2");
  EXPECT_EQ(gemm_key(GemmPassKind::upd, {64, 32, 64, 1}, 1, jit::DataType::f64).dtype, "fp64");
  EXPECT_NE(fwd.describe().find(" in f64"), std::string::npos) << fwd.describe();
  for (GemmPassKind pass : {GemmPassKind::fwd, GemmPassKind::bwd, GemmPassKind::upd}) {
    const GemmWorkload w(shape, odd, pass);
    ASSERT_FALSE(w.knob_choices().empty());
    for (const tuner::Knobs& k : w.knob_choices()) {
      const tuner::TunedConfig c{k, "", {}};
      EXPECT_EQ((std::array<long, 3>{c.knob("bm", 0), c.knob("bn", 0), c.knob("bk", 0)}), (std::array<long, 3>{15, 15, 15}));
    }
  }
}

// bf16 (weft-tune gemm --dtype bf16): its own key, the tiles each pass pairs for VNNI-2 made even
// in the knob choices and the default (the others kept), other data types refused.
TEST(GemmWorkload, Bf16HasItsOwnKeyAndEvenPairedTiles) {
  const GemmShape shape{40, 24, 40};
  GemmSearchOptions odd{.bm = {15}, .bn = {15}, .bk = {15}, .chunks = {1}, .specs = {}, .dtype = jit::DataType::bf16};
  const GemmWorkload fwd(shape, odd, GemmPassKind::fwd);
  EXPECT_EQ(fwd.key(2).to_string(), "gemm_fwd M=40 N=24 K=40 bf16 threads=2");
  EXPECT_EQ(gemm_key(GemmPassKind::upd, {64, 32, 64, 1}, 1, jit::DataType::bf16).dtype, "bf16");
  EXPECT_NE(fwd.key(2), GemmWorkload(shape).key(2));
  EXPECT_NE(fwd.describe().find(" in bf16"), std::string::npos) << fwd.describe();
  // By pass, the (bm, bn, bk) the knob choices hold.
  const std::vector<std::pair<GemmPassKind, std::array<long, 3>>> paired{
      {GemmPassKind::fwd, {15, 15, 16}}, {GemmPassKind::bwd, {16, 15, 16}}, {GemmPassKind::upd, {15, 16, 16}}};
  for (const auto& [pass, tiles] : paired) {
    const GemmWorkload w(shape, odd, pass);
    ASSERT_FALSE(w.knob_choices().empty());
    for (const tuner::Knobs& k : w.knob_choices()) {
      const tuner::TunedConfig c{k, "", {}};
      EXPECT_EQ((std::array<long, 3>{c.knob("bm", 0), c.knob("bn", 0), c.knob("bk", 0)}), tiles) << to_string(pass);
    }
    // The default is 32-cubed, which bf16 takes: it runs and passes the check.
    omp_set_num_threads(1);
    const tuner::TunedConfig d = w.default_config(1);
    EXPECT_EQ(d.knob("bk", 0), 32);
    EXPECT_TRUE(w.prepare(d)->check().passed) << to_string(pass);
  }
  // An MLP's bk is its bm: both even.
  std::set<long> mlp_tiles;
  odd.bm = {7, 16};
  for (const tuner::Knobs& k : GemmWorkload({40, 24, 40, 2}, odd).knob_choices())
    mlp_tiles.insert(tuner::TunedConfig{k, "", {}}.knob("bm", 0) * 100 + tuner::TunedConfig{k, "", {}}.knob("bk", 0));
  EXPECT_EQ(mlp_tiles, (std::set<long>{808, 1616}));
  odd.dtype = static_cast<jit::DataType>(7);
  EXPECT_THROW(GemmWorkload(shape, odd).key(1), Error);
  // The default search in bf16 tries the bf16 heuristic's bn = 128 too.
  EXPECT_EQ(default_gemm_search(jit::DataType::bf16).bn, (std::vector<long>{32, 48, 64, 128}));
  EXPECT_EQ(default_gemm_search(jit::DataType::bf16).dtype, jit::DataType::bf16);
  EXPECT_EQ(default_gemm_search(jit::DataType::f32).bn, GemmSearchOptions{}.bn);
}

// Tiny bf16 tuning runs of every pass (the forward one an MLP too): each finds a best
// configuration that passed its check and is stored under the bf16 key.
TEST(GemmWorkload, Bf16TuningOfEveryPassFindsAVerifiedBest) {
  struct Tiny {
    GemmPassKind pass;
    GemmShape shape;
  };
  for (const Tiny& t : {Tiny{GemmPassKind::fwd, {64, 48, 80}}, Tiny{GemmPassKind::fwd, {48, 32, 48, 2}},
                        Tiny{GemmPassKind::bwd, {64, 48, 80}}, Tiny{GemmPassKind::upd, {64, 48, 80}}}) {
    const GemmWorkload w(t.shape,
                         {.bm = {16, 32}, .bn = {16}, .bk = {15, 32}, .chunks = {1, 2}, .specs = {},
                          .dtype = jit::DataType::bf16},
                         t.pass);
    tuner::TunerOptions options;
    options.threads = 2;
    // A cap, not the test's length: top_k bounds the candidates. A short budget let a loaded machine
    // measure only one and fail the count below (seen at a load of 11 on 2 cores).
    options.budget_seconds = 60;
    options.top_k = 8;
    options.finalists = 2;
    options.quick = {.warmup = 1, .min_repetitions = 2, .max_repetitions = 10, .min_seconds = 0.001, .abort_ratio = 0};
    options.thorough = options.quick;
    const tuner::TuningResult r = tune(w, options);
    EXPECT_EQ(r.record().key.dtype, "bf16") << w.describe();
    ASSERT_GE(r.measured.size(), 2u) << w.describe();
    for (const auto& m : r.measured) EXPECT_FALSE(m.failed) << w.describe() << " " << m.config.to_string() << ": " << m.message;
    EXPECT_FALSE(r.best.failed);
    EXPECT_GT(r.best.thorough_gflops, 0) << w.describe();
    EXPECT_EQ(r.best.config.knob("bk", 0) % 2, 0) << r.best.config.to_string();
    omp_set_num_threads(2);
    const tuner::CheckResult check = w.prepare(r.best.config)->check();
    EXPECT_TRUE(check.passed) << w.describe() << ": " << check.message;
    EXPECT_NE(check.message.find("bf16 bound per element: 0 beyond it"), std::string::npos) << check.message;
  }
}

// A workload whose checked output has one element off (by 1/16 of its value plus 1/4: far beyond
// bf16's rounding, far within the values' range) in layer `wrong_layer`.
class OneWrongElement : public GemmWorkload {
 public:
  OneWrongElement(GemmShape shape, GemmPassKind pass, int wrong_layer)
      : GemmWorkload(shape, {.bm = {16}, .bn = {16}, .bk = {16}, .chunks = {2}, .specs = {}, .dtype = jit::DataType::bf16},
                     pass),
        wrong_layer_(wrong_layer) {}
  void inspect_checked_output(std::span<float> columns, int layer) const override {
    if (layer != wrong_layer_) return;
    float& element = columns[columns.size() / 3];
    element += 0.25f + std::fabs(element) / 16;
  }

 private:
  int wrong_layer_;
};

// The bf16 check can fail: a candidate that computes one element wrong is rejected, in every pass
// and in any layer of an MLP.
TEST(GemmWorkload, Bf16CandidateWithAWrongElementFailsItsCheck) {
  omp_set_num_threads(2);
  const tuner::TunedConfig config{{{"bm", 16}, {"bn", 16}, {"bk", 16}, {"kbf", 2}, {"mbf", 2}, {"nbf", 2}}, "abC", {}};
  for (GemmPassKind pass : {GemmPassKind::fwd, GemmPassKind::bwd, GemmPassKind::upd}) {
    EXPECT_TRUE(OneWrongElement({64, 48, 80}, pass, -1).prepare(config)->check().passed) << to_string(pass);
    const tuner::CheckResult wrong = OneWrongElement({64, 48, 80}, pass, 0).prepare(config)->check();
    EXPECT_FALSE(wrong.passed) << to_string(pass);
    EXPECT_NE(wrong.message.find("1 beyond it"), std::string::npos) << wrong.message;
  }
  for (int layer : {0, 2}) {
    const tuner::CheckResult wrong = OneWrongElement({48, 32, 48, 3}, GemmPassKind::fwd, layer).prepare(config)->check();
    EXPECT_FALSE(wrong.passed) << layer;
    EXPECT_NE(wrong.message.find("layer " + std::to_string(layer + 1) + " of 3"), std::string::npos) << wrong.message;
  }
}


TEST(GemmWorkload, PassesAreDistinctWorkloadsWithTheirOwnReductionKnob) {
  const GemmShape shape{64, 32, 64};
  EXPECT_EQ(gemm_key(GemmPassKind::fwd, shape, 2).kind, "gemm_fwd");
  EXPECT_EQ(gemm_key(GemmPassKind::bwd, shape, 2).kind, "gemm_bwd");
  EXPECT_EQ(gemm_key(GemmPassKind::upd, shape, 2).kind, "gemm_upd");
  const tuner::WorkloadKey mlp = gemm_key(GemmPassKind::fwd, {64, 32, 64, 4}, 2);
  EXPECT_EQ(mlp.to_string(), "gemm_mlp M=64 N=32 K=64 layers=4 fp32 threads=2");
  const GemmWorkload upd(shape, {}, GemmPassKind::upd);
  const tuner::TunedConfig d = upd.default_config(2);
  EXPECT_EQ(d.knob("nbf", 0), 1);
  EXPECT_EQ(d.knob("private_trans", -1), 0);
  const auto loops = upd.loops(d.knobs);
  ASSERT_EQ(loops.size(), 3u);
  EXPECT_TRUE(loops[2].reduction);
  EXPECT_FALSE(loops[0].reduction || loops[1].reduction);
  EXPECT_TRUE(upd.supports_parallel_reduction());
  EXPECT_EQ(GemmWorkload(shape, {}, GemmPassKind::bwd).specs({})[0].to_string(), "a_0_M,b_0_K,c_0_N");
  EXPECT_EQ(upd.specs({})[3].to_string(), "a_1_N,b_1_M,c_0_K");
}

TEST(GemmWorkload, TheUpdateGetsOneFilterCopyPerThreadAlongItsReduction) {
  EXPECT_EQ(partial_filters_for("abC", 4), 4);
  EXPECT_EQ(partial_filters_for("aBC", 3), 3);
  EXPECT_EQ(partial_filters_for("aB{R:2}C{C:3}", 6), 3);
  EXPECT_EQ(partial_filters_for("aBc", 4), 0);
  EXPECT_EQ(partial_filters_for("not a loop string", 4), 0);
  const tuner::TunedConfig tuned{{{"bm", 16}, {"nbf", 2}, {"private_trans", 1}}, "abC", {}};
  const auto c = ops::to_gemm_pass_config<GemmUpdConfig>(tuned, {64, 48, 32}, 2);
  EXPECT_EQ(c.n_partial_filters, 2);
  EXPECT_EQ(c.nbf, 2);
  EXPECT_TRUE(c.private_trans);
  EXPECT_EQ(c.bm, 16);
  EXPECT_EQ(c.bn, 32);  // the sample's default
}

using BestGemmConfig = test::TemporaryTuningDatabase;

TEST_F(BestGemmConfig, BackwardPassesTakeTheirOwnRecords) {
  const tuner::TuningDatabase db(path_);
  const GemmShape shape{64, 64, 64};
  add(gemm_key(GemmPassKind::bwd, shape, 2), {{{"bm", 16}, {"bn", 32}, {"bk", 16}, {"mbf", 2}, {"private_trans", 1}}, "ACb", {}});
  add(gemm_key(GemmPassKind::upd, shape, 2), {{{"bm", 16}, {"bn", 16}, {"bk", 32}, {"nbf", 2}, {"private_trans", 0}}, "aBC", {}});
  ops::GemmBwdConfig bwd;
  bwd.M = bwd.N = bwd.K = 64;
  const GemmBwdChoice b = best_gemm_config(bwd, 2, db);
  EXPECT_EQ(b.source, tuner::ConfigSource::exact) << b.detail;
  EXPECT_EQ(b.config.loop_string, "ACb");
  EXPECT_EQ(b.config.mbf, 2);
  EXPECT_TRUE(b.config.private_trans);
  EXPECT_EQ(b.describe().rfind("exact hit: ACb bm=16 bn=32 bk=16 mbf=2 private_trans=1 (", 0), 0u) << b.describe();

  GemmUpdConfig upd;
  upd.M = 80, upd.N = 64, upd.K = 64;
  const ops::GemmUpdChoice u = best_gemm_config(upd, 2, db);
  EXPECT_EQ(u.source, tuner::ConfigSource::nearest) << u.detail;
  EXPECT_EQ(u.config.loop_string, "aBC");
  EXPECT_EQ(u.config.M, 80);
  EXPECT_EQ(u.config.n_partial_filters, 2);  // c is parallel
  ops::GemmUpd runs(u.config);

  // The forward pass does not take the backward passes' records, nor another team's.
  GemmFwdConfig fwd;
  fwd.M = fwd.N = fwd.K = 64;
  EXPECT_EQ(best_gemm_config(fwd, 2, db).source, tuner::ConfigSource::heuristic);
  const GemmBwdChoice other_team = best_gemm_config(bwd, 1, db);
  EXPECT_EQ(other_team.source, tuner::ConfigSource::heuristic);
  EXPECT_EQ(other_team.config.loop_string, "aBC");  // the sample's default
  EXPECT_EQ(other_team.config.M, 64);
}

// bf16 problems take bf16 records, else FP32 ones (validated in bf16: an odd tile where bf16 pairs
// is skipped), else the heuristic, in bf16 either way; FP32 problems never take bf16 records.
TEST_F(BestGemmConfig, TheDataTypeIsPartOfTheLookup) {
  const tuner::TuningDatabase db(path_);
  const GemmShape shape{64, 64, 64};
  add(gemm_key(GemmPassKind::fwd, shape, 1, jit::DataType::bf16), {{{"bm", 32}, {"bn", 64}, {"bk", 32}, {"kbf", 2}}, "acb", {}});
  add(gemm_key(GemmPassKind::bwd, shape, 1), {{{"bm", 32}, {"bn", 16}, {"bk", 32}, {"mbf", 1}, {"private_trans", 0}}, "bca", {}});
  add(gemm_key(GemmPassKind::upd, shape, 1), {{{"bm", 32}, {"bn", 15}, {"bk", 32}, {"nbf", 1}, {"private_trans", 0}}, "bca", {}});
  GemmFwdConfig fwd;
  fwd.M = fwd.N = fwd.K = 64;
  EXPECT_EQ(best_gemm_config(fwd, 1, db).source, tuner::ConfigSource::heuristic) << "an FP32 problem, a bf16 record";
  fwd.dtype = jit::DataType::bf16;
  const GemmChoice own = best_gemm_config(fwd, 1, db);
  EXPECT_EQ(own.source, tuner::ConfigSource::exact) << own.detail;
  EXPECT_EQ(own.config.loop_string, "acb");
  EXPECT_TRUE(own.config.bf16());
  EXPECT_NE(own.detail.find("gemm_fwd M=64 N=64 K=64 bf16 threads=1"), std::string::npos) << own.detail;

  ops::GemmBwdConfig bwd;
  bwd.M = bwd.N = bwd.K = 64;
  bwd.dtype = jit::DataType::bf16;
  const GemmBwdChoice fp32 = best_gemm_config(bwd, 1, db);
  EXPECT_EQ(fp32.source, tuner::ConfigSource::exact) << fp32.detail;
  EXPECT_EQ(fp32.config.loop_string, "bca");
  EXPECT_TRUE(fp32.config.bf16());
  EXPECT_EQ(fp32.detail.rfind("no BF16 record fits; the FP32 one, run in BF16: ", 0), 0u) << fp32.detail;
  ops::GemmBwd runs(fp32.config);

  GemmUpdConfig upd;
  upd.M = upd.N = upd.K = 64;
  EXPECT_EQ(best_gemm_config(upd, 1, db).source, tuner::ConfigSource::exact);  // FP32 takes bn = 15
  upd.dtype = jit::DataType::bf16;
  const ops::GemmUpdChoice odd = best_gemm_config(upd, 1, db);
  EXPECT_EQ(odd.source, tuner::ConfigSource::heuristic) << odd.detail;
  EXPECT_NE(odd.detail.find("does not fit this problem"), std::string::npos) << odd.detail;
  EXPECT_TRUE(odd.config.bf16());
  EXPECT_EQ(odd.config.loop_string, "aBC");  // the sample's default
}

// A layer whose weight layout fixes bm and bk: a tile-bound record of those tiles, else a free
// record with them (bf16 then FP32), else the heuristic with them; free lookups skip tile-bound
// records; a tiling the pass refuses throws.
TEST_F(BestGemmConfig, TilesBindTheLookup) {
  const tuner::TuningDatabase db(path_);
  GemmUpdConfig problem;
  problem.M = problem.N = problem.K = 128;
  tuner::WorkloadKey bound = gemm_key(GemmPassKind::upd, {128, 128, 128}, 1);
  bound.tiles = {{"bm", 32}, {"bk", 64}};
  add(gemm_key(GemmPassKind::upd, {128, 128, 128}, 1),
      {{{"bm", 64}, {"bn", 32}, {"bk", 64}, {"nbf", 1}, {"private_trans", 0}}, "aBC", {}});
  add(bound, {{{"bm", 32}, {"bn", 64}, {"bk", 64}, {"nbf", 2}, {"private_trans", 0}}, "bca", {}});
  EXPECT_EQ(best_gemm_config(problem, 1, db).config.loop_string, "aBC");
  const GemmUpdChoice tiled = best_gemm_config(problem, 1, {{"bm", 32}, {"bk", 64}}, db);
  EXPECT_EQ(tiled.source, tuner::ConfigSource::exact) << tiled.detail;
  EXPECT_EQ(tiled.config.loop_string, "bca");
  EXPECT_EQ(tiled.config.bn, 64);
  const GemmUpdChoice same = best_gemm_config(problem, 1, {{"bm", 64}, {"bk", 64}}, db);
  EXPECT_EQ(same.config.loop_string, "aBC") << same.detail;
  // bf16 without a bf16 record: the FP32 tile-bound one.
  problem.dtype = jit::DataType::bf16;
  const GemmUpdChoice bf16 = best_gemm_config(problem, 1, {{"bm", 32}, {"bk", 64}}, db);
  EXPECT_EQ(bf16.config.loop_string, "bca") << bf16.detail;
  const GemmUpdChoice untuned = best_gemm_config(problem, 1, {{"bm", 16}, {"bk", 16}}, db);
  EXPECT_EQ(untuned.source, tuner::ConfigSource::heuristic);
  EXPECT_EQ(untuned.config.bm, 16);
  EXPECT_EQ(untuned.config.bk, 16);
  EXPECT_THROW(best_gemm_config(problem, 1, {{"bq", 16}}, db), Error);
}

TEST(GemmWorkload, TileBoundSearchesKeyAndBaselineTheirTiles) {
  GemmSearchOptions search;
  search.bm = {16};
  search.bk = {32};
  search.tile_bound = true;
  const GemmWorkload workload({64, 64, 64}, search, GemmPassKind::bwd);
  EXPECT_EQ(workload.key(1).tiles, (tuner::Knobs{{"bm", 16}, {"bk", 32}}));
  const tuner::TunedConfig baseline = workload.default_config(1);
  EXPECT_EQ(baseline.knob("bm", 0), 16);
  EXPECT_EQ(baseline.knob("bk", 0), 32);
  search.bm = {16, 32};
  EXPECT_THROW(GemmWorkload({64, 64, 64}, search, GemmPassKind::bwd), Error);
}

TEST_F(BestGemmConfig, AnMlpTakesItsOwnRecordElseASingleLayersWithBkEqualBm) {
  const tuner::TuningDatabase db(path_);
  GemmFwdConfig mlp;
  mlp.M = mlp.N = mlp.K = 64;
  mlp.n_layers = 3;
  add(gemm_key(GemmPassKind::fwd, {64, 64, 64}, 2), {{{"bm", 32}, {"bn", 16}, {"bk", 16}, {"kbf", 1}}, "aBC", {}});
  GemmChoice layer = best_gemm_config(mlp, 2, db);
  EXPECT_EQ(layer.source, tuner::ConfigSource::exact) << layer.detail;
  EXPECT_NE(layer.detail.find("gemm_fwd"), std::string::npos) << layer.detail;
  EXPECT_EQ(layer.config.bk, 32);
  EXPECT_EQ(layer.config.n_layers, 3);
  add(gemm_key(GemmPassKind::fwd, {64, 64, 64, 4}, 2), {{{"bm", 16}, {"bn", 16}, {"bk", 16}, {"kbf", 2}}, "aCB", {}});
  const GemmChoice own = best_gemm_config(mlp, 2, db);
  EXPECT_EQ(own.source, tuner::ConfigSource::nearest) << own.detail;  // 4 layers tuned, 3 asked
  EXPECT_NE(own.detail.find("gemm_mlp"), std::string::npos) << own.detail;
  EXPECT_EQ(own.config.loop_string, "aCB");
  EXPECT_EQ(own.config.n_layers, 3);
}
#endif

}  // namespace
}  // namespace weft::samples
