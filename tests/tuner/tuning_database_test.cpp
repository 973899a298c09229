#include <weft/tuner/tuning_database.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <utility>

#include <gtest/gtest.h>

#include "weft/jit/error.hpp"

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

// A tile-bound record keeps its tiles through the file, and only keys of the same tiles find it:
// a free lookup never takes the best of a constrained search, nor the other way round.
TEST_F(TuningDatabaseTest, TileBoundRecordsAreFoundOnlyByTheirTiles) {
  const TuningDatabase db(path_);
  TuningRecord bound = record(512, 300, "bca");
  bound.key.tiles = {{"bm", 64}, {"bk", 32}};
  db.append(bound);
  db.append(record(512, 150, "aBC"));
  const auto contents = db.load();
  ASSERT_EQ(contents.records.size(), 2u);
  EXPECT_EQ(contents.records[0].key, bound.key);
  EXPECT_TRUE(contents.records[1].key.tiles.empty());
  EXPECT_EQ(to_json_line(contents.records[1]).find("tiles"), std::string::npos);  // free records as before
  EXPECT_TRUE(bound.key.to_string().ends_with("fp32 threads=2 tiles bm=64 bk=32")) << bound.key.to_string();
  const MachineFingerprint here = MachineFingerprint::current();
  EXPECT_EQ(db.lookup(record(512, 0).key, here).record->config.loop_string, "aBC");
  EXPECT_EQ(db.lookup(bound.key, here).record->config.loop_string, "bca");
  WorkloadKey near = record(600, 0).key;
  near.tiles = bound.key.tiles;
  EXPECT_EQ(db.lookup(near, here).match, TuningDatabase::Match::nearest);
  near.tiles = {{"bm", 32}, {"bk", 32}};
  EXPECT_EQ(db.lookup(near, here).match, TuningDatabase::Match::none);
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

// fuzz/corpus/tuning_database/threads-float-out-of-range.jsonl and its kin: get<int>() of 1e300 is
// undefined behaviour (UBSan: float-cast-overflow), of 2^32 a wrapped number; -1 became a cache of
// 16 EiB. Each is a line that does not parse, and the error names the field and its range.
TEST_F(TuningDatabaseTest, IntegerFieldsOutOfTheirRangeAreBadLines) {
  const std::string good = to_json_line(record(512, 100));
  const auto replaced = [&](const std::string& from, const std::string& to) {
    std::string line = good;
    const std::size_t at = line.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return line.replace(at, from.size(), to);
  };
  const std::pair<std::string, std::string> cases[] = {
      {replaced("\"threads\":2", "\"threads\":1e300"), "field \"threads\" is 1e+300, not an integer in -2147483648..2147483647"},
      {replaced("\"threads\":2", "\"threads\":4294967298"), "field \"threads\" is 4294967298"},
      {replaced("\"threads\":2", "\"threads\":2.5"), "field \"threads\" is 2.5"},
      {replaced("\"format\":1", "\"format\":4294967297"), "field \"format\" is 4294967297"},
      {replaced("\"l1d\":", "\"l1d\":-1,\"was\":"), "field \"l1d\" is -1, not an integer in 0..18446744073709551615"},
      {replaced("[\"M\",512]", "[\"M\",1e19]"), "field \"shape\" is 1e+19"},
      {replaced("[\"bm\",32]", "[\"bm\",-1e300]"), "field \"knobs\" is -1e+300"},
      {replaced("[8]", "[9.5e18]"), "field \"blocks\" is 9.5e+18"},
      {replaced("[8]", "8"), "field \"blocks\" holds 8, not a list"},
      {replaced("\"time\":1700000000", "\"time\":1e30"), "field \"time\" is 1e+30"},
  };
  for (const auto& [line, message] : cases) {
    SCOPED_TRACE(line);
    try {
      parse_json_line(line);
      ADD_FAILURE() << "parsed";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(parse_json_line(replaced("\"threads\":2", "\"threads\":2147483647")).key.threads, 2147483647);
}

// The warning goes to stderr through weft::log(), whose default level (WEFT_LOG_LEVEL unset) shows it.
TEST_F(TuningDatabaseTest, ACorruptFileIsWarnedAboutOnceNamingItsFirstBadLine) {
  if (const char* level = std::getenv("WEFT_LOG_LEVEL"); level != nullptr && *level != '\0')
    GTEST_SKIP() << "WEFT_LOG_LEVEL is set";
  const TuningDatabase db(path_);
  db.append(record(512, 100));
  {
    std::ofstream out(path_, std::ios::app);
    out << "\n{\"format\":1}\nnot json\n";
  }
  db.append(record(512, 200));
  const TuningDatabase also(path_);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(db.lookup(record(512, 0).key, MachineFingerprint::current()).record->gflops, 200);
  EXPECT_EQ(also.lookup(record(256, 0).key, MachineFingerprint::current()).match, TuningDatabase::Match::nearest);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("tuning database " + path_.string() + ": line 3 is no tuning record ("), std::string::npos) << err;
  EXPECT_NE(err.find("), nor is 1 later line; going on without those records"), std::string::npos) << err;
  EXPECT_EQ(err.find("tuning database"), err.rfind("tuning database")) << "warned more than once:\n" << err;
  EXPECT_EQ(db.load().first_bad_line, 3u);
}

TEST_F(TuningDatabaseTest, AnUnreadableFileIsWarnedAboutOnce) {
  if (const char* level = std::getenv("WEFT_LOG_LEVEL"); level != nullptr && *level != '\0')
    GTEST_SKIP() << "WEFT_LOG_LEVEL is set";
  fs::create_directories(path_);  // a directory opens, but does not read
  const TuningDatabase db(path_);
  ::testing::internal::CaptureStderr();
  EXPECT_THROW(db.lookup(record(512, 0).key, MachineFingerprint::current()), Error);
  EXPECT_THROW(db.lookup(record(512, 0).key, MachineFingerprint::current()), Error);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("tuning database " + path_.string() + ": cannot read: Is a directory; going on without"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("tuning database"), err.rfind("tuning database")) << "warned more than once:\n" << err;
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
