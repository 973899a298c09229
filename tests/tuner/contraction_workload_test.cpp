#include <weft/tuner/contraction_workload.hpp>
#include <weft/tuner/tuner.hpp>

#include <unistd.h>

#include <cmath>
#include <filesystem>

#include <gtest/gtest.h>

#include <weft/tensor/reference.hpp>

namespace weft::tuner {
namespace {

namespace fs = std::filesystem;

TEST(ContractionProblem, DenseLayoutPutsMAndKUnitStride) {
  const auto p = parse_contraction_problem("m,n,k", "", "8,4,6", "brgemm", "zero", "none");
  ASSERT_EQ(p.op.dims.size(), 3u);
  EXPECT_EQ(p.op.dims[0].stride_in0, 1);   // in0 = [k][m]
  EXPECT_EQ(p.op.dims[2].stride_in0, 8);
  EXPECT_EQ(p.op.dims[2].stride_in1, 1);   // in1 = [n][k]
  EXPECT_EQ(p.op.dims[1].stride_in1, 6);
  EXPECT_EQ(p.op.dims[1].stride_out, 8);   // out = [n][m]
  EXPECT_THROW(parse_contraction_problem("m,x", "", "1,2", "gemm", "zero", "none"), Error);
  EXPECT_THROW(parse_contraction_problem("m,n", "", "1", "gemm", "zero", "none"), Error);
}

TEST(ContractionProblem, ErrorsNameTheOptionAndEntry) {
  struct Case {
    const char *dims, *sizes, *prim, *first, *last, *says;
  };
  const Case cases[] = {
      {"m,n,k", "8,8,12abc", "brgemm", "zero", "none", "--sizes entry 2 is '12abc'"},
      {"m,n,k", "8,8,1e3", "brgemm", "zero", "none", "--sizes entry 2 is '1e3'"},
      {"m,n,k", "8, 8,8", "brgemm", "zero", "none", "--sizes entry 1 is ' 8'"},
      {"m,n,k", "8,8,3000000000", "brgemm", "zero", "none", "not an integer in 1..2147483647"},
      {"m,n,k", "8,8,", "brgemm", "zero", "none", "--sizes entry 2 is ''"},
      {"m,n,", "8,8,8", "brgemm", "zero", "none", "--dims entry 2 is ''"},
      {"", "", "brgemm", "zero", "none", "needs --dims and --sizes"},
      {"m,n,k", "8,8,8", "foo", "zero", "none", "--prim 'foo' is no primitive"},
      {"m,n,k", "8,8,8", "brgemm", "foo", "none", "--first 'foo'"},
      {"m,n,k", "8,8,8", "brgemm", "zero", "foo", "--last 'foo'"},
  };
  for (const Case& c : cases) {
    try {
      parse_contraction_problem(c.dims, "", c.sizes, c.prim, c.first, c.last);
      ADD_FAILURE() << c.dims << " / " << c.sizes << " parsed";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << e.what();
    }
  }
}

TEST(ContractionProblem, TensorsBeyond64BitsOrThisMachineAreRefusedWithTheirSize) {
  // The strides of in0 (m, k, m, k) overflow int64: they used to wrap to negative values.
  try {
    parse_contraction_problem("m,n,k,m,n,k", "", "2000000000,2000000000,2000000000,2000000000,2000000000,2000000000",
                              "brgemm", "zero", "none");
    FAIL();
  } catch (const MemoryError& e) {
    EXPECT_EQ(e.reason(), MemoryError::Reason::overflow);
    EXPECT_NE(std::string(e.what()).find("tensor in0"), std::string::npos) << e.what();
  }
  // 16 TB per tensor: a std::length_error from vector::resize before.
  const auto p = parse_contraction_problem("m,n,k", "", "2000000,2000000,2000000", "brgemm", "zero", "none");
  try {
    ContractionWorkload w(p, 1);
    FAIL();
  } catch (const MemoryError& e) {
    EXPECT_EQ(e.reason(), MemoryError::Reason::beyond_machine);
    EXPECT_EQ(e.bytes(), std::uint64_t{4} * 4000000000000 * 4);  // in0, in1, out and its reference
    EXPECT_NE(std::string(e.what()).find("58.2 TiB of memory"), std::string::npos) << e.what();
  }
}

TEST(ContractionWorkload, RefusesFp64Problems) {
  // The workload's tensors and checks are float; an fp64 operation (valid since the tensor layer
  // takes fp64) would run over them as doubles.
  auto p = parse_contraction_problem("m,n,k", "", "8,4,6", "brgemm", "zero", "none");
  p.op.dtype = tensor::dtype_t::fp64;
  try {
    ContractionWorkload w(p, 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fp64"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fp32 operations only"), std::string::npos) << e.what();
  }
}

TEST(ContractionWorkload, TunesAndTensorOperationUsesTheTunedLoops) {
  const auto p = parse_contraction_problem("m,m,n,n,k,k", "", "8,32,6,32,4,32", "brgemm", "zero", "none");
  ContractionWorkload w(p, 2, {32, 64});
  TunerOptions options;
  options.threads = 2;
  options.budget_seconds = 1.0;
  options.top_k = 12;
  options.quick = {1, 2, 20, 0.002, 1.5};
  options.thorough = {1, 3, 50, 0.01, 0};
  const TuningResult r = tune(w, options);
  for (const auto& c : r.measured) EXPECT_FALSE(c.failed) << c.config.to_string() << ": " << c.message;
  ASSERT_GT(r.best.thorough_gflops, 0);

  const fs::path db_path = fs::temp_directory_path() / ("weft-tuner-contraction-" + std::to_string(::getpid()) + ".jsonl");
  fs::remove(db_path);
  const TuningDatabase db(db_path);
  bool found = true;
  tuned_operation_options(p.op, 2, db, &found);
  EXPECT_FALSE(found);
  // Store a deliberately non-default choice so that we can see it being used.
  TuningRecord rec = r.record();
  rec.config = {{{"split", 32}}, "", {}};
  const auto loops = w.loops(rec.config.knobs);
  rec.config.loop_string = std::string(loops.size(), 'a');
  for (std::size_t i = 0; i < loops.size(); ++i) rec.config.loop_string[i] = static_cast<char>('a' + i);
  for (std::size_t i = 0; i < loops.size(); ++i)
    if (!loops[i].reduction) {
      rec.config.loop_string[i] = static_cast<char>('A' + i);
      break;
    }
  db.append(rec);
  const auto options_found = tuned_operation_options(p.op, 2, db, &found);
  EXPECT_TRUE(found);
  EXPECT_EQ(options_found.loops.loop_string, rec.config.loop_string);
  einsum::backend::TensorOperation op;
  ASSERT_EQ(setup_tuned(op, p.op, 2, db), tensor::error_t::success) << op.error_message();
  EXPECT_NE(op.describe().find(rec.config.loop_string), std::string::npos) << op.describe();

  // And it computes the contraction.
  std::vector<float> a(8 * 32 * 4 * 32), b(6 * 32 * 4 * 32), c(8 * 32 * 6 * 32), ref(c.size());
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 7) % 11) * 0.1f - 0.5f;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 5) % 13) * 0.1f - 0.6f;
  op.execute(a.data(), b.data(), c.data());
  tensor::reference_contraction(p.op, a.data(), b.data(), ref.data());
  for (std::size_t i = 0; i < c.size(); ++i) ASSERT_NEAR(c[i], ref[i], 1e-3) << i;
  fs::remove(db_path);
}

}  // namespace
}  // namespace weft::tuner
