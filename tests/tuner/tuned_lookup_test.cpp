// find_tuned_config, what every sample's `auto` mode looks its configuration up with: keys in
// order, exact before nearest, records the problem rejects skipped (a nearest one retried without
// its block lists), and database trouble reported as a heuristic result, never thrown.
#include <weft/tuner/tuned_lookup.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace weft::tuner {
namespace {

namespace fs = std::filesystem;

class TunedLookupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() / ("weft-tuned-lookup-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".jsonl");
    fs::remove_all(path_);
  }
  void TearDown() override { fs::remove_all(path_); }

  static WorkloadKey key(const std::string& kind, long m) {
    return {.kind = kind, .shape = {{"M", m}, {"N", 64}}, .dtype = "fp32", .threads = 2};
  }
  void add(const WorkloadKey& k, const std::string& loop_string, double gflops, std::vector<std::vector<long>> blocks = {}) const {
    TuningRecord r;
    r.key = k;
    r.machine = MachineFingerprint::current();
    r.weft_version = std::string(weft_version());
    r.config = {{{"bm", 32}}, loop_string, std::move(blocks)};
    r.gflops = gflops;
    TuningDatabase(path_).append(r);
  }
  static bool anything(const TunedConfig&) { return true; }

  fs::path path_;
};

TEST_F(TunedLookupTest, ExactBeforeNearestAndKeysInOrder) {
  add(key("pass_a", 64), "aBC", 10);
  add(key("pass_a", 128), "BCa", 20);
  add(key("pass_b", 64), "Cab", 30);
  const TuningDatabase db(path_);
  const WorkloadKey exact[] = {key("pass_a", 64)};
  TunedLookup found = find_tuned_config(db, exact, anything);
  EXPECT_EQ(found.source, ConfigSource::exact);
  ASSERT_TRUE(found.config);
  EXPECT_EQ(found.config->loop_string, "aBC");
  EXPECT_NE(found.detail.find(path_.string()), std::string::npos) << found.detail;

  const WorkloadKey nearest[] = {key("pass_a", 100)};
  found = find_tuned_config(db, nearest, anything);
  EXPECT_EQ(found.source, ConfigSource::nearest);
  EXPECT_EQ(found.config->loop_string, "BCa");

  // The first key that has a record wins, even a nearest one over a later exact one.
  const WorkloadKey two[] = {key("pass_c", 64), key("pass_b", 64)};
  found = find_tuned_config(db, two, anything);
  EXPECT_EQ(found.source, ConfigSource::exact);
  EXPECT_EQ(found.config->loop_string, "Cab");
}

TEST_F(TunedLookupTest, RecordsTheProblemRejectsAreSkippedNearestOnesRetriedWithoutBlocks) {
  add(key("pass_a", 128), "bcaBCb", 20, {{}, {8}, {4}});
  const TuningDatabase db(path_);
  const WorkloadKey k[] = {key("pass_a", 64)};
  // Accepts only configurations without block lists: the retry without them fits.
  const TunedLookup retried = find_tuned_config(db, k, [](const TunedConfig& c) { return c.blocks.empty(); });
  EXPECT_EQ(retried.source, ConfigSource::nearest);
  ASSERT_TRUE(retried.config);
  EXPECT_TRUE(retried.config->blocks.empty());
  EXPECT_EQ(retried.config->loop_string, "bcaBCb");

  const TunedLookup rejected = find_tuned_config(db, k, [](const TunedConfig&) { return false; });
  EXPECT_EQ(rejected.source, ConfigSource::heuristic);
  EXPECT_FALSE(rejected.config);
  EXPECT_NE(rejected.detail.find("does not fit this problem: bcaBCb"), std::string::npos) << rejected.detail;
}

TEST_F(TunedLookupTest, NoRecordOrAnUnreadableDatabaseIsTheHeuristicNeverAnError) {
  const WorkloadKey k[] = {key("pass_a", 64)};
  const TunedLookup none = find_tuned_config(TuningDatabase(path_), k, anything);
  EXPECT_EQ(none.source, ConfigSource::heuristic);
  EXPECT_NE(none.detail.find("no record for this machine and 2 threads"), std::string::npos) << none.detail;

  fs::create_directories(path_);  // a directory where the file should be
  const TunedLookup unreadable = find_tuned_config(TuningDatabase(path_), k, anything);
  EXPECT_EQ(unreadable.source, ConfigSource::heuristic);
  EXPECT_NE(unreadable.detail.find("database unreadable"), std::string::npos) << unreadable.detail;
  EXPECT_EQ(to_string(ConfigSource::nearest), "nearest tuned shape");
}

}  // namespace
}  // namespace weft::tuner
