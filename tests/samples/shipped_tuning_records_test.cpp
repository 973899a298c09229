// Every record that ships with weft (the source tree's share/weft/tuning/*.jsonl, shipped_tuning.hpp)
// parses, holds the key its sample looks it up with, and is a configuration the sample accepts for
// that shape, data type and team: shipped records are taken whatever weft version wrote them, so
// this is what keeps them valid for this one. A file holds one machine's records.
#include <omp.h>

#include <cstddef>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#if defined(WEFT_HAVE_GEMM_TUNING)  // the tuning libraries are built with the tuner
#include <weft/jit/error.hpp>
#include <weft/ops/conv_workload.hpp>
#include <weft/ops/gemm_bwd.hpp>
#include <weft/ops/gemm_fwd.hpp>
#include <weft/ops/gemm_upd.hpp>
#include <weft/ops/gemm_workload.hpp>
#include <weft/tuner/shipped_tuning.hpp>
#include <weft/tuner/tile_bound.hpp>
#include <weft/tuner/tuning_database.hpp>

#endif

namespace weft::samples {
namespace {

using weft::ops::ConvPassKind;

#if defined(WEFT_HAVE_GEMM_TUNING)

// A tile-bound record (weft-tune --tile-bound) binds the pass's weight tiles, `names`, and its
// configuration has them: the lookup asks for exactly those.
void expect_tiles_of_the_weight(const tuner::TuningRecord& record, const std::vector<std::string>& names) {
  if (record.key.tiles.empty()) return;
  ASSERT_EQ(record.key.tiles.size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) EXPECT_EQ(record.key.tiles[i].first, names[i]);
  EXPECT_TRUE(tuner::has_tiles(record.config, record.key.tiles)) << "a configuration of other tiles than its key's";
}

// The key the sample looks `record` up with: its own, bound to the record's tiles if it has any.
tuner::WorkloadKey looked_up_as(tuner::WorkloadKey key, const tuner::TuningRecord& record) {
  key.tiles = record.key.tiles;
  return key;
}

// What best_conv_config does with a record for its problem (to_conv_*_config, the problem's data
// type, the pass's check), on the record's own shape and team.
void expect_the_conv_sample_accepts(const tuner::TuningRecord& record) {
  const ConvPassKind pass = ops::parse_conv_pass(record.key.kind.substr(std::string("conv_").size()));
  ASSERT_EQ(record.key.shape.size(), 11u);
  const auto size = [&](std::size_t i) { return record.key.shape[i].second; };
  const ops::ConvShape shape{.N = size(0), .H = size(1), .W = size(2), .C = size(3), .K = size(4), .R = size(5),
                             .S = size(6), .stride_h = size(7), .stride_w = size(8), .pad_h = size(9), .pad_w = size(10)};
  const jit::DataType dtype = record.key.dtype == "bf16" ? jit::DataType::bf16 : jit::DataType::f32;
  ASSERT_EQ(looked_up_as(ops::conv_key(pass, shape, record.key.threads, dtype), record), record.key)
      << "not the key weft-conv-" << ops::to_string(pass) << " looks up";
  expect_tiles_of_the_weight(record, {"bc", "bk"});
  omp_set_num_threads(record.key.threads);  // the update's partial filters follow the team
  try {
    switch (pass) {
      case ConvPassKind::fwd: {
        ops::ConvFwdConfig c = ops::to_conv_fwd_config(record.config, shape);
        c.dtype = dtype;
        ops::ConvFwd::check(c);
        break;
      }
      case ConvPassKind::bwd: {
        ops::ConvBwdConfig c = ops::to_conv_bwd_config(record.config, shape);
        c.dtype = dtype;
        ops::ConvBwd::check(c);
        break;
      }
      case ConvPassKind::upd: {
        ops::ConvUpdConfig c = ops::to_conv_upd_config(record.config, shape);
        c.dtype = dtype;
        ops::ConvUpd::check(c);
        break;
      }
    }
  } catch (const Error& e) {
    ADD_FAILURE() << "the sample refuses it: " << e.what();
  }
}

// The same for a GEMM pass's record: to_gemm_pass_config, the record's data type, the pass's check
// (best_gemm_config's steps). Kinds gemm_fwd, gemm_bwd, gemm_upd, and gemm_mlp (a forward of layers).
template <class Config, class Pass>
void expect_the_gemm_pass_accepts(const tuner::TuningRecord& record, const ops::GemmShape& shape,
                                  ops::GemmPassKind pass, jit::DataType dtype) {
  ASSERT_EQ(looked_up_as(ops::gemm_key(pass, shape, record.key.threads, dtype), record), record.key)
      << "not the key the GEMM samples look up";
  expect_tiles_of_the_weight(record, {"bm", "bk"});
  Config c = ops::to_gemm_pass_config<Config>(record.config, shape, record.key.threads);
  c.dtype = dtype;
  try {
    Pass::check(c);
  } catch (const Error& e) {
    ADD_FAILURE() << "the sample refuses it: " << e.what();
  }
}

void expect_the_gemm_sample_accepts(const tuner::TuningRecord& record) {
  const bool mlp = record.key.kind == "gemm_mlp";
  const ops::GemmPassKind pass = mlp ? ops::GemmPassKind::fwd : ops::parse_gemm_pass(record.key.kind.substr(5));
  ASSERT_EQ(record.key.shape.size(), mlp ? 4u : 3u);
  const auto size = [&](std::size_t i) { return record.key.shape[i].second; };
  const ops::GemmShape shape{.M = size(0), .N = size(1), .K = size(2), .layers = mlp ? static_cast<int>(size(3)) : 1};
  const jit::DataType dtype = record.key.dtype == "bf16"   ? jit::DataType::bf16
                              : record.key.dtype == "fp64" ? jit::DataType::f64
                                                           : jit::DataType::f32;
  omp_set_num_threads(record.key.threads);  // the update's partial filters follow the team
  switch (pass) {
    case ops::GemmPassKind::fwd: return expect_the_gemm_pass_accepts<ops::GemmFwdConfig, ops::GemmFwd>(record, shape, pass, dtype);
    case ops::GemmPassKind::bwd: return expect_the_gemm_pass_accepts<ops::GemmBwdConfig, ops::GemmBwd>(record, shape, pass, dtype);
    case ops::GemmPassKind::upd: return expect_the_gemm_pass_accepts<ops::GemmUpdConfig, ops::GemmUpd>(record, shape, pass, dtype);
  }
}

TEST(ShippedTuningRecords, EveryRecordParsesAndItsSampleAcceptsIt) {
  const tuner::ShippedTuning shipped(WEFT_SHIPPED_TUNING_SOURCE_DIR);
  const auto files = shipped.files();
  ASSERT_FALSE(files.empty()) << "no *.jsonl in " << shipped.dir();
  const int team = omp_get_max_threads();
  std::size_t checked = 0;
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    const tuner::TuningDatabase::Contents contents = tuner::TuningDatabase(file).load();
    EXPECT_EQ(contents.skipped_lines, 0u) << "line " << contents.first_bad_line << ": " << contents.first_bad_problem;
    ASSERT_FALSE(contents.records.empty());
    const tuner::MachineFingerprint& machine = contents.records.front().machine;
    for (const tuner::TuningRecord& record : contents.records) {
      SCOPED_TRACE(record.key.to_string() + ": " + record.config.to_string());
      EXPECT_TRUE(record.machine.cpu_model == machine.cpu_model && record.machine.l1d_bytes == machine.l1d_bytes &&
                  record.machine.l2_bytes == machine.l2_bytes)
          << "another machine's record (" << record.machine.to_string() << ") in the file of " << machine.to_string();
      if (record.key.kind.starts_with("conv_")) {
        expect_the_conv_sample_accepts(record);
      } else if (record.key.kind.starts_with("gemm_")) {
        expect_the_gemm_sample_accepts(record);
      } else {
        ADD_FAILURE() << "no check here for records of kind " << record.key.kind << ": add one";
      }
      ++checked;
    }
  }
  omp_set_num_threads(team);
  EXPECT_GT(checked, 0u);
}

#endif

}  // namespace
}  // namespace weft::samples
