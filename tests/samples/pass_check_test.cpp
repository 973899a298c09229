// The passes' static check(): it refuses exactly what the constructor refuses, with the same
// message, and it generates no code, so that the tuned-configuration lookups (best_conv_config,
// best_gemm_config) try stored records without filling the code arena.
#include <omp.h>

#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <weft/jit/code_arena.hpp>
#include <weft/jit/error.hpp>
#include <weft/ops/gemm_bwd.hpp>
#include <weft/ops/gemm_fwd.hpp>
#include <weft/ops/gemm_upd.hpp>

#include <weft/ops/conv_bwd.hpp>
#include <weft/ops/conv_fwd.hpp>
#include "conv_test_support.hpp"
#include <weft/ops/conv_upd.hpp>

#if defined(WEFT_HAVE_GEMM_TUNING)  // the tuning libraries are built with the tuner
#include <weft/ops/best_gemm_config.hpp>
#include <weft/ops/gemm_workload.hpp>

#include <weft/ops/best_conv_config.hpp>
#include <weft/ops/conv_workload.hpp>
#include "temporary_tuning_database.hpp"
#endif

namespace weft::samples {
namespace {

using weft::ops::best_conv_config;
using weft::ops::conv_key;
using weft::ops::ConvBwd;
using weft::ops::ConvBwdConfig;
using weft::ops::ConvFwd;
using weft::ops::ConvFwdConfig;
using weft::ops::ConvPassKind;
using weft::ops::ConvUpd;
using weft::ops::ConvUpdConfig;
using weft::ops::GemmFwd;
using weft::ops::GemmFwdConfig;
using weft::ops::GemmUpd;

using test::square_shape;

// The message `f` throws, "" when it throws nothing.
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Blocks of generated code the process holds: loop nests and TPP kernels stay in their caches, so
// any code generated since an earlier count shows here.
std::size_t code_blocks() { return jit::default_code_arena().stats().used_blocks; }

// check() and the constructor agree on `config`; returns the message ("" when both accept it).
template <class Pass, class Config>
std::string agreed_error(const Config& config) {
  const std::string checked = error_of([&] { Pass::check(config); });
  const std::string constructed = error_of([&] { const Pass pass(config); });
  EXPECT_EQ(checked, constructed) << "loop_string " << config.loop_string;
  return checked;
}

// Expects both to refuse `config` with a message containing `words`.
template <class Pass, class Config>
void expect_refused(const Config& config, const std::string& words) {
  const std::string message = agreed_error<Pass>(config);
  EXPECT_NE(message.find(words), std::string::npos) << "'" << message << "' lacks '" << words << "'";
}

ConvFwdConfig fwd_config() {
  ConvFwdConfig c;
  c.loop_string = "Abcdefg";
  c.shape = square_shape(1, 14, 64, 64, 3, 1, 1);
  c.bc = c.bk = 32;
  return c;
}

TEST(PassCheck, ConvFwdCheckAndConstructorAgree) {
  EXPECT_EQ(agreed_error<ConvFwd>(fwd_config()), "");
  ConvFwdConfig c = fwd_config();
  c.with_bias = c.with_relu = true;
  c.w_block = 2;
  EXPECT_EQ(agreed_error<ConvFwd>(c), "");
  c = fwd_config();
  c.logical_padding = true;  // the per-tap mode
  EXPECT_EQ(agreed_error<ConvFwd>(c), "");
  c.input_padding_copy = true;  // a scratch copy with its own kernel and loop
  EXPECT_EQ(agreed_error<ConvFwd>(c), "");

  c = fwd_config();
  c.c_block = 3;  // 2 C blocks
  expect_refused<ConvFwd>(c, "c_block = 3");
  c = fwd_config();
  c.w_block = 15;  // 14 output columns
  expect_refused<ConvFwd>(c, "w_block = 15");
  c = fwd_config();
  c.loop_string = "Abcd[0,8,]efg";
  expect_refused<ConvFwd>(c, "inline bounds");
  c = fwd_config();
  c.loop_string = "Abcdefz";
  expect_refused<ConvFwd>(c, "Abcdefz");
  c = fwd_config();
  c.loop_string = "aBcdefg";
  c.c_block = 2;  // two chunks of the reduction, in parallel
  expect_refused<ConvFwd>(c, "loop 'b' is the reduction");
  c = fwd_config();
  c.h_in_gemm = 2;
  c.h_block = 3;
  c.loop_string = "Abcddefg";
  expect_refused<ConvFwd>(c, "h_block = 3 must be a multiple of h_in_gemm = 2");
  // A shape every rule takes whose first BRGEMM the plan refuses: bk x 140000 output columns.
  c = fwd_config();
  c.shape = {.N = 1, .H = 1, .W = 140000, .C = 1, .K = 4096, .R = 1, .S = 1};
  c.bc = 1;
  c.bk = 4096;
  expect_refused<ConvFwd>(c, "brgemm descriptor");
}

ConvBwdConfig bwd_config() {
  ConvBwdConfig c;
  c.loop_string = "Abcdefg";
  c.shape = square_shape(1, 14, 64, 64, 3, 1, 1);
  c.bc = c.bk = 32;
  return c;
}

TEST(PassCheck, ConvBwdCheckAndConstructorAgree) {
  EXPECT_EQ(agreed_error<ConvBwd>(bwd_config()), "");
  ConvBwdConfig c = bwd_config();
  c.shape = square_shape(1, 14, 64, 64, 3, 2, 1);  // the scatter over taps, grad_input zeroed in a loop
  c.loop_string = "aBcdefg";
  EXPECT_EQ(agreed_error<ConvBwd>(c), "");
  c.loop_string = "abcDefg";  // output rows meet in grad_input
  expect_refused<ConvBwd>(c, "threads would race");

  c = bwd_config();
  c.k_block = 3;
  expect_refused<ConvBwd>(c, "k_block must be at most");
  c = bwd_config();
  c.loop_string = "abCdefg";
  c.k_block = 2;
  expect_refused<ConvBwd>(c, "loop 'c' is the reduction");
  c = bwd_config();
  c.loop_string = "Abcdef[0,2,]g";
  expect_refused<ConvBwd>(c, "inline bounds");
}

ConvUpdConfig upd_config() {
  ConvUpdConfig c;
  c.loop_string = "Abcdefg";
  c.shape = square_shape(1, 14, 64, 64, 3, 1, 1);
  c.bc = c.bk = 32;
  return c;
}

TEST(PassCheck, ConvUpdCheckAndConstructorAgree) {
  EXPECT_EQ(agreed_error<ConvUpd>(upd_config()), "");
  ConvUpdConfig c = upd_config();
  c.dtype = jit::DataType::bf16;  // the bf16 operands' kernels and loops
  EXPECT_EQ(agreed_error<ConvUpd>(c), "");
  c = upd_config();
  c.h_in_gemm = 15;
  expect_refused<ConvUpd>(c, "h_in_gemm");
  c = upd_config();
  c.loop_string = "abcd[0,4,]efg";
  expect_refused<ConvUpd>(c, "inline bounds");

  // The images split among two threads: partial filters, or refused without them.
  const int threads = omp_get_max_threads();
  omp_set_num_threads(2);
  c = upd_config();
  c.loop_string = "Abcdefg";
  c.shape.N = 2;
  c.use_mb_par_f32 = true;
  EXPECT_EQ(agreed_error<ConvUpd>(c), "");
  c.use_mb_par_f32 = false;
  expect_refused<ConvUpd>(c, "use_mb_par_f32");
  omp_set_num_threads(threads);
}

GemmFwdConfig gemm_config() {
  GemmFwdConfig c;
  c.loop_string = "aBC";
  c.M = c.N = c.K = 96;
  return c;
}

TEST(PassCheck, GemmPassesCheckAndConstructorAgree) {
  EXPECT_EQ(agreed_error<GemmFwd>(gemm_config()), "");
  GemmFwdConfig c = gemm_config();
  c.kbf = 0;
  expect_refused<GemmFwd>(c, "kbf must be positive");
  c = gemm_config();
  c.n_layers = 2;
  c.M = 64;
  expect_refused<GemmFwd>(c, "M == K");
  c = gemm_config();
  c.loop_string = "ABC";
  c.kbf = 3;
  expect_refused<GemmFwd>(c, "loop 'a' is the reduction");
  c = gemm_config();
  c.loop_string = "aBCx";
  expect_refused<GemmFwd>(c, "aBCx");

  ops::GemmBwdConfig bwd;
  bwd.loop_string = "aBC";
  bwd.M = bwd.N = bwd.K = 96;
  EXPECT_EQ(agreed_error<ops::GemmBwd>(bwd), "");
  bwd.mbf = 3;
  expect_refused<ops::GemmBwd>(bwd, "loop 'b' is the reduction");

  ops::GemmUpdConfig upd;
  upd.loop_string = "ABc";
  upd.M = upd.N = upd.K = 96;
  upd.dtype = jit::DataType::bf16;
  EXPECT_EQ(agreed_error<GemmUpd>(upd), "");
  upd.loop_string = "abC";
  upd.nbf = 3;
  expect_refused<GemmUpd>(upd, "loop 'c' is the reduction");
  upd.n_partial_filters = 2;
  EXPECT_EQ(agreed_error<GemmUpd>(upd), "");
}

// Shapes no other test uses, so that their kernels are not in the caches yet.
TEST(PassCheck, GeneratesNoCode) {
  ConvFwdConfig fwd = fwd_config();
  fwd.shape = square_shape(1, 13, 40, 24, 3, 1, 1);
  fwd.bc = 20;
  fwd.bk = 24;
  fwd.loop_string = "Acbdefg";
  ConvBwdConfig bwd = bwd_config();
  bwd.shape = fwd.shape;
  bwd.bc = 20;
  bwd.bk = 24;
  ConvUpdConfig upd = upd_config();
  upd.shape = fwd.shape;
  upd.bc = 20;
  upd.bk = 24;
  GemmFwdConfig gemm = gemm_config();
  gemm.M = 88;
  gemm.N = 76;
  gemm.K = 68;
  gemm.bm = 22;
  gemm.bn = 19;
  gemm.bk = 17;

  const std::size_t before = code_blocks();
  ConvFwd::check(fwd);
  ConvBwd::check(bwd);
  ConvUpd::check(upd);
  GemmFwd::check(gemm);
  EXPECT_EQ(code_blocks(), before);
  // A refused loop string, after its nest was parsed.
  fwd.loop_string = "gfedcBa";
  fwd.c_block = 2;
  EXPECT_THROW(ConvFwd::check(fwd), Error);
  EXPECT_EQ(code_blocks(), before);
  // The counter sees what the constructors generate for these shapes.
  fwd.loop_string = "Acbdefg";
  fwd.c_block = 1;
  const ConvFwd conv(fwd);
  EXPECT_GT(code_blocks(), before);
}

#if defined(WEFT_HAVE_GEMM_TUNING)
class BestConfigCheck : public test::TemporaryTuningDatabase {};

// The lookups try the stored record (refused: a parallel reduction), then the samples' default:
// neither is generated before the caller builds the pass it returns.
TEST_F(BestConfigCheck, LookupsGenerateNoCode) {
  const ops::ConvShape shape = square_shape(1, 11, 40, 36, 3, 1, 1);
  const tuner::TunedConfig parallel_c_chunks{{{"bc", 20}, {"bk", 12}, {"c_block", 2}, {"k_block", 2}}, "gfedcBa", {}};
  add(conv_key(ConvPassKind::fwd, shape, 1), parallel_c_chunks);
  add(conv_key(ConvPassKind::bwd, shape, 1), {{{"bc", 20}, {"bk", 12}, {"k_block", 3}}, "gfedCba", {}});
  add(conv_key(ConvPassKind::upd, shape, 1), {{{"bc", 20}, {"bk", 12}, {"h_in_gemm", 12}}, "gfedcba", {}});
  const ops::GemmShape gemm_shape{.M = 84, .N = 70, .K = 66};
  add(ops::gemm_key(ops::GemmPassKind::fwd, gemm_shape, 1), {{{"bm", 21}, {"bn", 14}, {"bk", 11}, {"kbf", 3}}, "CBA", {}});
  const tuner::TuningDatabase db(path_);

  const std::size_t before = code_blocks();
  ConvFwdConfig fwd;
  fwd.shape = shape;
  const ops::ConvFwdChoice fwd_choice = best_conv_config(fwd, 1, db);
  ConvBwdConfig bwd;
  bwd.shape = shape;
  const ops::ConvBwdChoice bwd_choice = best_conv_config(bwd, 1, db);
  ConvUpdConfig upd;
  upd.shape = shape;
  const ops::ConvUpdChoice upd_choice = best_conv_config(upd, 1, db);
  GemmFwdConfig gemm;
  gemm.M = gemm_shape.M;
  gemm.N = gemm_shape.N;
  gemm.K = gemm_shape.K;
  const ops::GemmChoice gemm_choice = ops::best_gemm_config(gemm, 1, db);
  EXPECT_EQ(code_blocks(), before);

  // Every record was refused, for the rule it breaks, and the default taken.
  for (const std::string& detail : {fwd_choice.detail, bwd_choice.detail, upd_choice.detail, gemm_choice.detail})
    EXPECT_NE(detail.find("does not fit"), std::string::npos) << detail;
  EXPECT_EQ(fwd_choice.source, tuner::ConfigSource::heuristic);
  EXPECT_EQ(gemm_choice.source, tuner::ConfigSource::heuristic);
  const ConvFwd chosen(fwd_choice.config);
  EXPECT_GT(code_blocks(), before);
}

// The convolution workloads keep the knob settings the sample accepts for the shape, which they
// find out without generating code (the tuner generates the candidates it measures, later).
TEST(ConvWorkloadKnobs, AreCheckedWithoutGeneratingCode) {
  const std::size_t before = code_blocks();
  for (const ConvPassKind pass : {ConvPassKind::fwd, ConvPassKind::bwd, ConvPassKind::upd}) {
    const ops::ConvWorkload workload(square_shape(1, 9, 44, 52, 3, 1, 1), pass);
    EXPECT_FALSE(workload.knob_choices().empty());
  }
  EXPECT_EQ(code_blocks(), before);
}
#endif

}  // namespace
}  // namespace weft::samples
