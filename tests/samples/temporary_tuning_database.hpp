// A tuning database of the test's own (a file named after the test, removed before and after), and
// records added to it as this machine's and this version's, for the samples' `auto` lookups.
#pragma once

#include <unistd.h>

#include <filesystem>
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
  }
  void TearDown() override { std::filesystem::remove(path_); }
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
};

}  // namespace weft::samples::test
