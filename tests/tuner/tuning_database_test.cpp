#include <weft/tuner/tuning_database.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

namespace weft::tuner {
namespace {

namespace fs = std::filesystem;

class TuningDatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("weft-tuner-db-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    path_ = dir_ / "sub" / "tuning.jsonl";
  }
  void TearDown() override { fs::remove_all(dir_); }

  static TuningRecord record(long m, double gflops, std::string loop = "aCB") {
    TuningRecord r;
    r.key = {.kind = "gemm_fwd", .shape = {{"M", m}, {"N", 512}, {"K", 512}}, .dtype = "fp32", .threads = 2};
    r.machine = MachineFingerprint::current();
    r.weft_version = std::string(weft_version());
    r.config = {{{"bm", 32}, {"kbf", 2}}, std::move(loop), {{}, {8}, {4, 2}}};
    r.gflops = gflops;
    r.default_gflops = 100;
    r.unix_time = 1700000000;
    r.tuner = "test";
    return r;
  }

  fs::path dir_, path_;
};

TEST_F(TuningDatabaseTest, RoundTripsRecordsAndCreatesDirectories) {
  const TuningDatabase db(path_);
  EXPECT_TRUE(db.load().records.empty());  // missing file = empty
  const TuningRecord r = record(512, 150.5);
  db.append(r);
  const auto contents = db.load();
  ASSERT_EQ(contents.records.size(), 1u);
  const TuningRecord& back = contents.records[0];
  EXPECT_EQ(back.key, r.key);
  EXPECT_EQ(back.machine, r.machine);
  EXPECT_EQ(back.config, r.config);
  EXPECT_DOUBLE_EQ(back.gflops, 150.5);
  EXPECT_EQ(back.tuner, "test");
  EXPECT_EQ(parse_json_line(to_json_line(r)).config, r.config);
}

TEST_F(TuningDatabaseTest, LookupPrefersExactThenNearestAndTheFastest) {
  const TuningDatabase db(path_);
  db.append(record(512, 150, "aBC"));
  db.append(record(512, 170, "aCB"));
  db.append(record(2048, 180, "bcaBCb"));
  const MachineFingerprint here = MachineFingerprint::current();
  auto exact = db.lookup(record(512, 0).key, here);
  ASSERT_EQ(exact.match, TuningDatabase::Match::exact);
  EXPECT_EQ(exact.record->config.loop_string, "aCB");
  auto near = db.lookup(record(1800, 0).key, here);
  ASSERT_EQ(near.match, TuningDatabase::Match::nearest);
  EXPECT_EQ(near.record->config.loop_string, "bcaBCb");
  WorkloadKey other_threads = record(512, 0).key;
  other_threads.threads = 1;
  EXPECT_EQ(db.lookup(other_threads, here).match, TuningDatabase::Match::none);
}

// A convolution's key holds its padding, 0 for 1x1 layers: a zero used to make every distance
// infinite, so such shapes were never found, not even exactly.
TEST_F(TuningDatabaseTest, FindsShapesWithZeroSizesExactlyAndNearest) {
  const TuningDatabase db(path_);
  const auto conv = [](long h, long pad, std::string loop) {
    TuningRecord r = record(512, 100, std::move(loop));
    r.key = {.kind = "conv_bwd", .shape = {{"H", h}, {"pad", pad}}, .dtype = "fp32", .threads = 1};
    return r;
  };
  db.append(conv(56, 0, "acdbefg"));
  db.append(conv(56, 1, "Abcdefg"));
  const MachineFingerprint here = MachineFingerprint::current();
  const auto exact = db.lookup(conv(56, 0, "").key, here);
  ASSERT_EQ(exact.match, TuningDatabase::Match::exact);
  EXPECT_EQ(exact.record->config.loop_string, "acdbefg");
  const auto near = db.lookup(conv(28, 0, "").key, here);
  ASSERT_EQ(near.match, TuningDatabase::Match::nearest);
  EXPECT_EQ(near.record->config.loop_string, "acdbefg");
  EXPECT_EQ(db.lookup(conv(56, 1, "").key, here).record->config.loop_string, "Abcdefg");
  EXPECT_EQ(db.lookup(conv(56, 2, "").key, here).record->config.loop_string, "Abcdefg");  // 2 is nearer 1 than 0
}

TEST_F(TuningDatabaseTest, IgnoresOtherMachinesAndVersions) {
  const TuningDatabase db(path_);
  TuningRecord elsewhere = record(512, 500);
  elsewhere.machine.cpu_model = "Some Other CPU";
  db.append(elsewhere);
  TuningRecord older = record(512, 400);
  older.weft_version = "0.0.1";
  db.append(older);
  EXPECT_EQ(db.lookup(record(512, 0).key, MachineFingerprint::current()).match, TuningDatabase::Match::none);
  MachineFingerprint cached_size_differs = MachineFingerprint::current();
  cached_size_differs.l2_bytes += 1;
  db.append(record(512, 100));
  EXPECT_EQ(db.lookup(record(512, 0).key, cached_size_differs).match, TuningDatabase::Match::none);
  EXPECT_EQ(db.lookup(record(512, 0).key, MachineFingerprint::current()).record->gflops, 100);
}

TEST_F(TuningDatabaseTest, SkipsCorruptLinesAndRecoversFromAPartialLastLine) {
  const TuningDatabase db(path_);
  db.append(record(512, 100));
  {
    std::ofstream out(path_, std::ios::app);
    out << "not json at all\n{\"format\":1}\n\n" << to_json_line(record(512, 300)).substr(0, 40);  // crashed writer
  }
  db.append(record(512, 200));
  const auto contents = db.load();
  EXPECT_EQ(contents.records.size(), 2u);
  EXPECT_EQ(contents.skipped_lines, 3u);
  EXPECT_EQ(db.lookup(record(512, 0).key, MachineFingerprint::current()).record->gflops, 200);
}

TEST_F(TuningDatabaseTest, ConcurrentWritersFromThreadsAndProcessesLoseNothing) {
  const TuningDatabase db(path_);
  constexpr int kThreads = 4, kProcesses = 3, kEach = 40;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      for (int i = 0; i < kEach; ++i) db.append(record(1000 + p, i, std::string(200 + i, 'a')));
      ::_exit(0);
    }
    children.push_back(pid);
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) db.append(record(2000 + t, i, std::string(300 + i, 'b')));
    });
  for (auto& t : threads) t.join();
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const auto contents = db.load();
  EXPECT_EQ(contents.skipped_lines, 0u);
  EXPECT_EQ(contents.records.size(), static_cast<std::size_t>((kThreads + kProcesses) * kEach));
}

TEST_F(TuningDatabaseTest, DefaultPathFollowsTheApiThenTheEnvironment) {
  TuningDatabase::set_default_path(path_);
  EXPECT_EQ(TuningDatabase::default_path(), path_);
  TuningDatabase::set_default_path({});
  ::setenv("WEFT_TUNING_DB", "/tmp/weft-env-db.jsonl", 1);
  EXPECT_EQ(TuningDatabase::default_path(), fs::path("/tmp/weft-env-db.jsonl"));
  ::unsetenv("WEFT_TUNING_DB");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved = xdg ? xdg : "";
  ::setenv("XDG_CACHE_HOME", dir_.c_str(), 1);
  EXPECT_EQ(TuningDatabase::default_path(), dir_ / "weft" / "tuning.jsonl");
  if (xdg) ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else ::unsetenv("XDG_CACHE_HOME");
}

}  // namespace
}  // namespace weft::tuner
