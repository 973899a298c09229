// The tuning databases that ship with weft (shipped_tuning.hpp): which folder is read
// ($WEFT_SHIPPED_TUNING_DIR, empty for none), which records are this machine's (CPU model, L1d and
// L2 equal; the CPU count and L3 free; fp32 code the same on avx512 and avx512_bf16), weft's
// version not compared, every *.jsonl of the folder read in name order, and trouble with a file
// warned about once and never thrown.
#include <weft/tuner/shipped_tuning.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <gtest/gtest.h>

namespace weft::tuner {
namespace {

namespace fs = std::filesystem;

class ShippedTuningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("weft-shipped-tuning-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    if (const char* env = std::getenv("WEFT_SHIPPED_TUNING_DIR")) saved_env_ = env;
  }
  void TearDown() override {
    if (saved_env_) ::setenv("WEFT_SHIPPED_TUNING_DIR", saved_env_->c_str(), 1);
    else ::unsetenv("WEFT_SHIPPED_TUNING_DIR");
    fs::remove_all(dir_);
  }

  static WorkloadKey key(long m, std::string dtype = "fp32") {
    return {.kind = "gemm_fwd", .shape = {{"M", m}, {"N", 64}}, .dtype = std::move(dtype), .threads = 2};
  }
  // A record of another weft version, tuned on a guest of this machine's core with more CPUs and
  // another L3 slice: a shipped file's record that this machine takes.
  static TuningRecord record(long m, const std::string& loop_string, double gflops) {
    TuningRecord r;
    r.key = key(m);
    r.machine = MachineFingerprint::current();
    r.machine.logical_cpus += 62;
    r.machine.l3_bytes += 1 << 20;
    r.weft_version = "0.0.1";
    r.config = {{{"bm", 32}}, loop_string, {}};
    r.gflops = gflops;
    return r;
  }
  void write(const std::string& name, const std::string& text) const { std::ofstream(dir_ / name) << text; }

  fs::path dir_;
  std::optional<std::string> saved_env_;
};

TEST_F(ShippedTuningTest, TheFolderIsTheEnvironmentsElseTheInstalledOrTheSourceTrees) {
  write("zen.jsonl", to_json_line(record(64, "aBC", 10)) + "\n");
  ::setenv("WEFT_SHIPPED_TUNING_DIR", dir_.c_str(), 1);
  EXPECT_EQ(shipped_tuning_dir(), dir_);
  EXPECT_EQ(ShippedTuning().dir(), dir_);
  EXPECT_EQ(ShippedTuning().lookup(key(64), MachineFingerprint::current()).match, TuningDatabase::Match::exact);

  // Set and empty: no shipped records at all.
  ::setenv("WEFT_SHIPPED_TUNING_DIR", "", 1);
  EXPECT_EQ(shipped_tuning_dir(), fs::path());
  EXPECT_TRUE(ShippedTuning().files().empty());
  EXPECT_EQ(ShippedTuning().lookup(key(64), MachineFingerprint::current()).match, TuningDatabase::Match::none);

  // Unset: the installed folder where it exists, else the source tree's.
  ::unsetenv("WEFT_SHIPPED_TUNING_DIR");
  const fs::path found = shipped_tuning_dir();
  EXPECT_TRUE(found == fs::path(WEFT_SHIPPED_TUNING_SOURCE_DIR) ||
              (found.is_absolute() && found.filename() == "tuning" && fs::is_directory(found)))
      << found;
}

TEST_F(ShippedTuningTest, ARecordMatchesTheSameCoreAndCachesAndCodeForItsDataType) {
  MachineFingerprint zen4{.cpu_model = "AMD EPYC", .isa = "avx512_bf16", .logical_cpus = 2,
                          .l1d_bytes = 32768, .l2_bytes = 1048576, .l3_bytes = 335544320};
  const auto tuned_on = [](MachineFingerprint machine, std::string dtype) {
    TuningRecord r;
    r.key = key(64, std::move(dtype));
    r.machine = std::move(machine);
    return r;
  };
  const auto with = [&](auto change) {
    MachineFingerprint m = zen4;
    change(m);
    return m;
  };
  EXPECT_TRUE(shipped_record_matches(tuned_on(zen4, "fp32"), zen4));
  EXPECT_FALSE(shipped_record_matches(tuned_on(with([](auto& m) { m.cpu_model = "AMD EPYC 7B13"; }), "fp32"), zen4));
  EXPECT_FALSE(shipped_record_matches(tuned_on(with([](auto& m) { m.l1d_bytes = 49152; }), "fp32"), zen4));
  EXPECT_FALSE(shipped_record_matches(tuned_on(with([](auto& m) { m.l2_bytes = 524288; }), "fp32"), zen4));
  // A 64-vCPU guest of the same core, with another slice of the L3: the team is in the key.
  EXPECT_TRUE(shipped_record_matches(tuned_on(with([](auto& m) { m.logical_cpus = 64; }), "fp32"), zen4));
  EXPECT_TRUE(shipped_record_matches(tuned_on(with([](auto& m) { m.l3_bytes = 1 << 25; }), "fp32"), zen4));

  // fp32 and fp64 code is the same on avx512 and avx512_bf16, in either direction; bf16 code is not.
  const MachineFingerprint avx512 = with([](auto& m) { m.isa = "avx512"; });
  EXPECT_TRUE(shipped_record_matches(tuned_on(avx512, "fp32"), zen4));
  EXPECT_TRUE(shipped_record_matches(tuned_on(avx512, "fp64"), zen4));
  EXPECT_TRUE(shipped_record_matches(tuned_on(zen4, "fp32"), avx512));
  EXPECT_FALSE(shipped_record_matches(tuned_on(zen4, "bf16"), avx512));
  EXPECT_FALSE(shipped_record_matches(tuned_on(avx512, "bf16"), zen4));
  EXPECT_TRUE(shipped_record_matches(tuned_on(zen4, "bf16"), zen4));
  const MachineFingerprint avx2 = with([](auto& m) { m.isa = "avx2"; });
  EXPECT_FALSE(shipped_record_matches(tuned_on(avx2, "fp32"), avx512));
  EXPECT_FALSE(shipped_record_matches(tuned_on(avx512, "fp32"), avx2));
}

TEST_F(ShippedTuningTest, EveryJsonlFileIsReadInNameOrderWhateverTheVersion) {
  TuningRecord elsewhere = record(64, "cab", 900);
  elsewhere.machine.l2_bytes += 1;
  write("b.jsonl", to_json_line(record(64, "Bca", 50)) + "\n" + to_json_line(record(64, "bCa", 70)) + "\n");
  write("a.jsonl", to_json_line(record(64, "aBC", 70)) + "\n" + to_json_line(record(48, "acB", 80)) + "\n" +
                       to_json_line(elsewhere) + "\n");
  write("notes.txt", to_json_line(record(64, "txt", 1000)) + "\n");
  const ShippedTuning shipped(dir_);
  ASSERT_EQ(shipped.files(), (std::vector<fs::path>{dir_ / "a.jsonl", dir_ / "b.jsonl"}));
  const MachineFingerprint here = MachineFingerprint::current();

  // The fastest exact record; of two as fast, the first file's.
  const ShippedTuning::Lookup exact = shipped.lookup(key(64), here);
  ASSERT_EQ(exact.match, TuningDatabase::Match::exact);
  EXPECT_EQ(exact.record->config.loop_string, "aBC");
  EXPECT_EQ(exact.file, dir_ / "a.jsonl");
  write("b.jsonl", to_json_line(record(64, "bCa", 71)) + "\n");
  const ShippedTuning::Lookup faster = shipped.lookup(key(64), here);
  EXPECT_EQ(faster.record->config.loop_string, "bCa");
  EXPECT_EQ(faster.file, dir_ / "b.jsonl");

  // Else the nearest shape, across files.
  const ShippedTuning::Lookup nearest = shipped.lookup(key(50), here);
  ASSERT_EQ(nearest.match, TuningDatabase::Match::nearest);
  EXPECT_EQ(nearest.record->config.loop_string, "acB");
  EXPECT_EQ(shipped.lookup(key(64, "bf16"), here).match, TuningDatabase::Match::none);
}

TEST_F(ShippedTuningTest, AMissingFolderHasNoRecordsAndSaysNothing) {
  const ShippedTuning missing(dir_ / "missing");
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(missing.files().empty());
  EXPECT_EQ(missing.lookup(key(64), MachineFingerprint::current()).match, TuningDatabase::Match::none);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

// The warning goes to stderr through weft::log(), whose default level (WEFT_LOG_LEVEL unset) shows it.
TEST_F(ShippedTuningTest, AFileWithBadLinesOrUnreadableIsWarnedAboutOnceAndTheRestStillServes) {
  if (const char* level = std::getenv("WEFT_LOG_LEVEL"); level != nullptr && *level != '\0')
    GTEST_SKIP() << "WEFT_LOG_LEVEL is set";
  write("a.jsonl", to_json_line(record(64, "aBC", 70)) + "\nnot json\n" + to_json_line(record(32, "acB", 80)) + "\n");
  fs::create_directories(dir_ / "b.jsonl");  // opens, but does not read
  const ShippedTuning shipped(dir_);
  const MachineFingerprint here = MachineFingerprint::current();
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(shipped.lookup(key(64), here).record->config.loop_string, "aBC");
  EXPECT_EQ(shipped.lookup(key(32), here).record->config.loop_string, "acB");
  const std::string err = ::testing::internal::GetCapturedStderr();
  const std::string bad_line = "tuning database " + (dir_ / "a.jsonl").string() + ": line 2 is no tuning record";
  const std::string unreadable = "tuning database " + (dir_ / "b.jsonl").string() + ": cannot read";
  EXPECT_NE(err.find(bad_line), std::string::npos) << err;
  EXPECT_EQ(err.find(bad_line), err.rfind(bad_line)) << "warned more than once:\n" << err;
  EXPECT_NE(err.find(unreadable), std::string::npos) << err;
  EXPECT_EQ(err.find(unreadable), err.rfind(unreadable)) << "warned more than once:\n" << err;
}

}  // namespace
}  // namespace weft::tuner
