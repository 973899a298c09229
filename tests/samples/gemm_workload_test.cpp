// The GEMM passes as tuner workloads: shapes beyond the machine refused before allocating, every
// candidate of every pass (MLP and the update's partial filters included) right on small shapes
// with remainders, distinct database kinds, and the tuned configurations the samples' `auto`
// mode runs.
#include <omp.h>

#include <ostream>
#include <string>

#include <gtest/gtest.h>

#include <weft/jit/error.hpp>

#if defined(WEFT_HAVE_GEMM_TUNING)  // the GEMM workload is built with the tuner
#include <weft/parlooper/loop_string.hpp>
#include <weft/tuner/tuner.hpp>

#include "best_gemm_config.hpp"
#include "temporary_tuning_database.hpp"
#include "gemm_workload.hpp"
#endif

namespace weft::tuner {
namespace {

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
  EXPECT_THROW(parse_gemm_pass("mlp"), Error);
  EXPECT_EQ(parse_gemm_pass("upd"), GemmPassKind::upd);
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
  TunerOptions options;
  options.threads = 2;
  options.blocks.max_choices = 2;
  const SearchSpace space = build_search_space(workload, options);
  ASSERT_GT(space.candidates.size(), 20u);
  omp_set_num_threads(2);  // prepare() takes the team from OpenMP, as under tune()
  std::size_t parallel_reductions = 0;
  for (const Candidate& candidate : space.candidates) {
    const int reduction = c.pass == GemmPassKind::fwd ? 0 : c.pass == GemmPassKind::bwd ? 1 : 2;
    for (const auto& level : parlooper::parse_loop_string(candidate.config.loop_string, 3).levels)
      parallel_reductions += level.loop == reduction && level.par != parlooper::ParKind::none;
    const CheckResult check = workload.prepare(candidate.config)->check();
    EXPECT_TRUE(check.passed) << c.name << " " << candidate.config.to_string() << ": " << check.message;
  }
  // Only the update combines partial results, so only its reduction may run in parallel.
  if (c.pass == GemmPassKind::upd) EXPECT_GT(parallel_reductions, 0u);
  else EXPECT_EQ(parallel_reductions, 0u);
  EXPECT_TRUE(workload.prepare(workload.default_config(2))->check().passed);
}

// Every order and parallelization of the three loops, and one blocked output loop: the blocked
// strings of the default specs add JIT time, not kinds of candidates.
std::vector<LoopSpecification> specs(const char* unblocked, const char* blocked) {
  return {parse_loop_spec(unblocked), parse_loop_spec(blocked)};
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
                  .specs = specs("a_0_N,b_0_M,c_0_K", "a_0_N,b_1_M,c_0_K")}}),
    [](const auto& p) { return std::string(p.param.name); });

TEST(GemmWorkload, PassesAreDistinctWorkloadsWithTheirOwnReductionKnob) {
  const GemmShape shape{64, 32, 64};
  EXPECT_EQ(gemm_key(GemmPassKind::fwd, shape, 2).kind, "gemm_fwd");
  EXPECT_EQ(gemm_key(GemmPassKind::bwd, shape, 2).kind, "gemm_bwd");
  EXPECT_EQ(gemm_key(GemmPassKind::upd, shape, 2).kind, "gemm_upd");
  const WorkloadKey mlp = gemm_key(GemmPassKind::fwd, {64, 32, 64, 4}, 2);
  EXPECT_EQ(mlp.to_string(), "gemm_mlp M=64 N=32 K=64 layers=4 fp32 threads=2");
  const GemmWorkload upd(shape, {}, GemmPassKind::upd);
  const TunedConfig d = upd.default_config(2);
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
  const TunedConfig tuned{{{"bm", 16}, {"nbf", 2}, {"private_trans", 1}}, "abC", {}};
  const auto c = to_gemm_pass_config<samples::GemmUpdConfig>(tuned, {64, 48, 32}, 2);
  EXPECT_EQ(c.n_partial_filters, 2);
  EXPECT_EQ(c.nbf, 2);
  EXPECT_TRUE(c.private_trans);
  EXPECT_EQ(c.bm, 16);
  EXPECT_EQ(c.bn, 32);  // the sample's default
}

using BestGemmConfig = test::TemporaryTuningDatabase;

TEST_F(BestGemmConfig, BackwardPassesTakeTheirOwnRecords) {
  const TuningDatabase db(path_);
  const GemmShape shape{64, 64, 64};
  add(gemm_key(GemmPassKind::bwd, shape, 2), {{{"bm", 16}, {"bn", 32}, {"bk", 16}, {"mbf", 2}, {"private_trans", 1}}, "ACb", {}});
  add(gemm_key(GemmPassKind::upd, shape, 2), {{{"bm", 16}, {"bn", 16}, {"bk", 32}, {"nbf", 2}, {"private_trans", 0}}, "aBC", {}});
  samples::GemmBwdConfig bwd;
  bwd.M = bwd.N = bwd.K = 64;
  const GemmBwdChoice b = best_gemm_config(bwd, 2, db);
  EXPECT_EQ(b.source, ConfigSource::exact) << b.detail;
  EXPECT_EQ(b.config.loop_string, "ACb");
  EXPECT_EQ(b.config.mbf, 2);
  EXPECT_TRUE(b.config.private_trans);
  EXPECT_EQ(b.describe().rfind("exact hit: ACb bm=16 bn=32 bk=16 mbf=2 private_trans=1 (", 0), 0u) << b.describe();

  samples::GemmUpdConfig upd;
  upd.M = 80, upd.N = 64, upd.K = 64;
  const GemmUpdChoice u = best_gemm_config(upd, 2, db);
  EXPECT_EQ(u.source, ConfigSource::nearest) << u.detail;
  EXPECT_EQ(u.config.loop_string, "aBC");
  EXPECT_EQ(u.config.M, 80);
  EXPECT_EQ(u.config.n_partial_filters, 2);  // c is parallel
  samples::GemmUpd runs(u.config);

  // The forward pass does not take the backward passes' records, nor another team's.
  samples::GemmFwdConfig fwd;
  fwd.M = fwd.N = fwd.K = 64;
  EXPECT_EQ(best_gemm_config(fwd, 2, db).source, ConfigSource::heuristic);
  const GemmBwdChoice other_team = best_gemm_config(bwd, 1, db);
  EXPECT_EQ(other_team.source, ConfigSource::heuristic);
  EXPECT_EQ(other_team.config.loop_string, "aBC");  // the sample's default
  EXPECT_EQ(other_team.config.M, 64);
}

TEST_F(BestGemmConfig, AnMlpTakesItsOwnRecordElseASingleLayersWithBkEqualBm) {
  const TuningDatabase db(path_);
  samples::GemmFwdConfig mlp;
  mlp.M = mlp.N = mlp.K = 64;
  mlp.n_layers = 3;
  add(gemm_key(GemmPassKind::fwd, {64, 64, 64}, 2), {{{"bm", 32}, {"bn", 16}, {"bk", 16}, {"kbf", 1}}, "aBC", {}});
  GemmChoice layer = best_gemm_config(mlp, 2, db);
  EXPECT_EQ(layer.source, ConfigSource::exact) << layer.detail;
  EXPECT_NE(layer.detail.find("gemm_fwd"), std::string::npos) << layer.detail;
  EXPECT_EQ(layer.config.bk, 32);
  EXPECT_EQ(layer.config.n_layers, 3);
  add(gemm_key(GemmPassKind::fwd, {64, 64, 64, 4}, 2), {{{"bm", 16}, {"bn", 16}, {"bk", 16}, {"kbf", 2}}, "aCB", {}});
  const GemmChoice own = best_gemm_config(mlp, 2, db);
  EXPECT_EQ(own.source, ConfigSource::nearest) << own.detail;  // 4 layers tuned, 3 asked
  EXPECT_NE(own.detail.find("gemm_mlp"), std::string::npos) << own.detail;
  EXPECT_EQ(own.config.loop_string, "aCB");
  EXPECT_EQ(own.config.n_layers, 3);
}
#endif

}  // namespace
}  // namespace weft::tuner
