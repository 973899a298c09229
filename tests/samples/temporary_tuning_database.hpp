// A tuning database of the test's own (a file named after the test, removed before and after), and
// records added to it as this machine's and this version's, for the samples' `auto` lookups. The
// shipped databases are off meanwhile (WEFT_SHIPPED_TUNING_DIR empty): on a machine they were tuned
// on, their records would stand in for the heuristic results the tests expect.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include <weft/tuner/tuning_database.hpp>

namespace weft::samples::test {

class TemporaryTuningDatabase : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("weft-" + std::string(info->test_suite_name()) + "-" + std::to_string(::getpid()) + "-" + info->name() +
             ".jsonl");
    std::filesystem::remove(path_);
    if (const char* env = std::getenv("WEFT_SHIPPED_TUNING_DIR")) saved_shipped_dir_ = env;
    ::setenv("WEFT_SHIPPED_TUNING_DIR", "", 1);
  }
  void TearDown() override {
    std::filesystem::remove(path_);
    if (saved_shipped_dir_) ::setenv("WEFT_SHIPPED_TUNING_DIR", saved_shipped_dir_->c_str(), 1);
    else ::unsetenv("WEFT_SHIPPED_TUNING_DIR");
  }
  // A record of `config` for `key`, 100 GFLOPS.
  void add(const tuner::WorkloadKey& key, tuner::TunedConfig config) const {
    tuner::TuningRecord r;
    r.key = key;
    r.machine = tuner::MachineFingerprint::current();
    r.weft_version = std::string(tuner::weft_version());
    r.config = std::move(config);
    r.gflops = 100;
    tuner::TuningDatabase(path_).append(r);
  }
  std::filesystem::path path_;

 private:
  std::optional<std::string> saved_shipped_dir_;
};

}  // namespace weft::samples::test
