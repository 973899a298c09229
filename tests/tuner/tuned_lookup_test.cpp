// find_tuned_config, what every sample's `auto` mode looks its configuration up with: keys in
// order, exact before nearest, records the problem rejects skipped (a nearest one retried without
// its block lists), and database trouble reported as a heuristic result, never thrown; the shipped
// databases after the user's, per key: user exact, shipped exact, user nearest, shipped nearest.
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
    shipped_dir_ = path_;
    shipped_dir_.replace_extension(".shipped");
    fs::remove_all(path_);
    fs::remove_all(shipped_dir_);
  }
  void TearDown() override {
    fs::remove_all(path_);
    fs::remove_all(shipped_dir_);
  }

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
  // A record in the shipped folder's zen.jsonl, of another weft version and a guest with more
  // CPUs of this machine's core (shipped_tuning.hpp: it matches).
  void ship(const WorkloadKey& k, const std::string& loop_string, double gflops) const {
    TuningRecord r;
    r.key = k;
    r.machine = MachineFingerprint::current();
    r.machine.logical_cpus += 30;
    r.weft_version = "0.0.1";
    r.config = {{{"bm", 32}}, loop_string, {}};
    r.gflops = gflops;
    TuningDatabase(shipped_dir_ / "zen.jsonl").append(r);
  }
  TunedLookup find(const WorkloadKey& k) const {
    const WorkloadKey keys[] = {k};
    return find_tuned_config(TuningDatabase(path_), keys, anything, ShippedTuning(shipped_dir_));
  }
  static bool anything(const TunedConfig&) { return true; }

  fs::path path_, shipped_dir_;
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

TEST_F(TunedLookupTest, TheUsersExactRecordThenTheShippedExactThenTheUsersNearestThenTheShippedNearest) {
  ship(key("pass_a", 64), "shipped_64", 90);
  ship(key("pass_a", 32), "shipped_32", 90);
  add(key("pass_a", 64), "user_64", 10);
  add(key("pass_a", 128), "user_128", 10);
  const fs::path shipped_file = shipped_dir_ / "zen.jsonl";

  TunedLookup found = find(key("pass_a", 64));
  EXPECT_EQ(found.source, ConfigSource::exact);
  ASSERT_TRUE(found.config);
  EXPECT_EQ(found.config->loop_string, "user_64") << "the user's own, though slower";
  EXPECT_EQ(found.detail.rfind(path_.string() + ": ", 0), 0u) << found.detail;

  // A shipped exact record beats the user's nearest (128 is near 100).
  ship(key("pass_a", 100), "shipped_100", 5);
  found = find(key("pass_a", 100));
  EXPECT_EQ(found.source, ConfigSource::exact);
  EXPECT_EQ(found.config->loop_string, "shipped_100");
  EXPECT_EQ(found.detail.rfind(shipped_file.string() + ": pass_a M=100 N=64 fp32 threads=2, 5 GFLOPS", 0), 0u)
      << found.detail;

  // No exact record: the user's nearest (64), though a shipped one (32) is nearer and faster.
  found = find(key("pass_a", 40));
  EXPECT_EQ(found.source, ConfigSource::nearest);
  EXPECT_EQ(found.config->loop_string, "user_64");
  EXPECT_EQ(found.detail.rfind(path_.string() + ": ", 0), 0u) << found.detail;

  // Only shipped records near: the shipped nearest.
  fs::remove(path_);
  found = find(key("pass_a", 40));
  EXPECT_EQ(found.source, ConfigSource::nearest);
  EXPECT_EQ(found.config->loop_string, "shipped_32");
  EXPECT_EQ(found.detail.rfind(shipped_file.string() + ": ", 0), 0u) << found.detail;
}

TEST_F(TunedLookupTest, ShippedRecordsIgnoreTheVersionTheUsersDoNot) {
  TuningRecord older;
  older.key = key("pass_a", 64);
  older.machine = MachineFingerprint::current();
  older.weft_version = "0.0.1";
  older.config = {{{"bm", 32}}, "user_older", {}};
  older.gflops = 500;
  TuningDatabase(path_).append(older);
  EXPECT_EQ(find(key("pass_a", 64)).source, ConfigSource::heuristic);
  ship(key("pass_a", 64), "shipped_older", 10);  // also 0.0.1
  const TunedLookup found = find(key("pass_a", 64));
  EXPECT_EQ(found.source, ConfigSource::exact);
  EXPECT_EQ(found.config->loop_string, "shipped_older");
}

TEST_F(TunedLookupTest, ShippedRecordsTheProblemRejectsAreSkippedAndAnUnreadableUserDatabaseLeavesThem) {
  ship(key("pass_a", 64), "rejected", 90);
  add(key("pass_a", 100), "user_nearest", 10);
  const WorkloadKey k[] = {key("pass_a", 64)};
  const ShippedTuning shipped(shipped_dir_);
  const TunedLookup found = find_tuned_config(
      TuningDatabase(path_), k, [](const TunedConfig& c) { return c.loop_string != "rejected"; }, shipped);
  EXPECT_EQ(found.config->loop_string, "user_nearest");
  const TunedLookup none = find_tuned_config(TuningDatabase(path_), k, [](const TunedConfig&) { return false; }, shipped);
  EXPECT_EQ(none.source, ConfigSource::heuristic);
  EXPECT_NE(none.detail.find("rejected bm=32 (" + (shipped_dir_ / "zen.jsonl").string() + ")"), std::string::npos)
      << none.detail;

  fs::remove(path_);
  fs::create_directories(path_);  // a directory where the user's file should be
  const TunedLookup shipped_only = find(key("pass_a", 64));
  EXPECT_EQ(shipped_only.source, ConfigSource::exact);
  EXPECT_EQ(shipped_only.config->loop_string, "rejected");
  const TunedLookup nothing = find(key("pass_b", 64));
  EXPECT_NE(nothing.detail.find("database unreadable"), std::string::npos) << nothing.detail;
}

}  // namespace
}  // namespace weft::tuner
