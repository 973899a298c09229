// The convolution's backward pass by weights (ConvUpd) against the double-precision reference, on
// small shapes: strides, paddings, filter sizes, C = 3, channel remainders, collapse and grid
// strings with and without partial filters, 1-4 threads; the strings that would race; and
// weft-conv-upd run as a program.
#include <omp.h>

#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <weft/ops/verification.hpp>

#include <weft/ops/conv_layout.hpp>
#include <weft/ops/conv_model.hpp>
#include <weft/ops/conv_reference.hpp>
#include "conv_test_support.hpp"
#include <weft/ops/conv_upd.hpp>
#include "sample_driver.hpp"
#include "run_program.hpp"

namespace {

using namespace weft::samples;
using weft::ops::blocked_to_kcrs;
using weft::ops::compare;
using weft::ops::conv_bwd_weights_reference;
using weft::ops::ConvMachine;
using weft::ops::ConvShape;
using weft::ops::ConvUpd;
using weft::ops::ConvUpdConfig;
using weft::ops::fill_random;
using weft::ops::model_conv_upd_config;
using weft::ops::nchw_to_blocked;
using weft::ops::round_to_bf16;
using weft::ops::sum_tolerance;
using weft::ops::to_bf16;
using weft::ops::vnni2_to_filter;

struct Case {
  std::string loop_string;
  ConvShape shape;
  std::int64_t bc, bk;
  int threads;
  bool partial;                // expected: the run accumulates into partial filters
  std::int64_t h_in_gemm = 0;  // 0: automatic
  bool bf16 = false;
};

Case bf16(Case c) {
  c.bf16 = true;
  return c;
}

// gtest prints a case by this (its names list the bytes otherwise).
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.loop_string << " " << c.shape.to_string() << " bc " << c.bc << " bk " << c.bk << " threads " << c.threads
      << " h_in_gemm " << c.h_in_gemm << (c.bf16 ? " bf16" : "");
}

ConvUpdConfig config_of(const std::string& loop_string, const ConvShape& shape, std::int64_t bc, std::int64_t bk,
                        std::int64_t h_in_gemm = 0, bool use_mb_par_f32 = true, bool bf16 = false) {
  ConvUpdConfig c;
  if (bf16) c.dtype = weft::jit::DataType::bf16;
  c.loop_string = loop_string;
  c.shape = shape;
  c.bc = bc;
  c.bk = bk;
  c.h_in_gemm = h_in_gemm;
  c.use_mb_par_f32 = use_mb_par_f32;
  return c;
}

ConvShape shape(std::int64_t N, std::int64_t H, std::int64_t W, std::int64_t C, std::int64_t K, std::int64_t RS,
                std::int64_t stride, std::int64_t pad) {
  return {.N = N, .H = H, .W = W, .C = C, .K = K, .R = RS, .S = RS,
          .stride_h = stride, .stride_w = stride, .pad_h = pad, .pad_w = pad};
}

// The pass run twice on a grad_filter that starts as garbage (the second run must not see the
// first one's sums), against the reference. In bf16 on bf16 inputs (the reference gets the same
// values), grad_filter read back from its VNNI-2 tiles.
Verdict upd_error(const ConvUpd& upd) {
  const ConvShape& s = upd.config().shape;
  const bool bf16 = upd.config().bf16();
  std::vector<float> input(static_cast<std::size_t>(s.N * s.C * s.H * s.W));
  std::vector<float> grad_output(static_cast<std::size_t>(s.N * s.K * s.ofh() * s.ofw()));
  fill_random(input.data(), static_cast<std::int64_t>(input.size()), 31);
  fill_random(grad_output.data(), static_cast<std::int64_t>(grad_output.size()), 32);
  if (bf16) {
    round_to_bf16(input);
    round_to_bf16(grad_output);
  }
  const std::vector<float> in_blocked = nchw_to_blocked(input.data(), upd.input_layout());
  const std::vector<float> out_blocked = nchw_to_blocked(grad_output.data(), upd.grad_output_layout());
  std::vector<float> filter_blocked(static_cast<std::size_t>(upd.filter_layout().size()), 555.0f);
  if (bf16) {
    const std::vector<weft::jit::bfloat16> in16 = to_bf16(in_blocked), out16 = to_bf16(out_blocked);
    std::vector<weft::jit::bfloat16> filter16 = to_bf16(filter_blocked);
    upd.run(in16.data(), out16.data(), filter16.data());
    upd.run(in16.data(), out16.data(), filter16.data());
    filter_blocked = vnni2_to_filter(filter16.data(), upd.filter_layout());
  } else {
    upd.run(in_blocked.data(), out_blocked.data(), filter_blocked.data());
    upd.run(in_blocked.data(), out_blocked.data(), filter_blocked.data());
  }

  std::vector<float> result(static_cast<std::size_t>(s.K * s.C * s.R * s.S)), reference(result.size());
  blocked_to_kcrs(filter_blocked.data(), result.data(), upd.filter_layout());
  conv_bwd_weights_reference(s, input.data(), grad_output.data(), reference.data());
  return {compare(result.data(), reference.data(), static_cast<std::int64_t>(result.size())), upd.tolerance()};
}

class ConvUpdCases : public ::testing::TestWithParam<Case> {};
TEST_P(ConvUpdCases, MatchesReference) {
  const Case& c = GetParam();
  omp_set_num_threads(c.threads);
  const ConvUpd upd(config_of(c.loop_string, c.shape, c.bc, c.bk, c.h_in_gemm, true, c.bf16));
  EXPECT_EQ(upd.uses_partial_filters(), c.partial);
  const Verdict v = upd_error(upd);
  EXPECT_EQ(v.tolerance, sum_tolerance(c.shape.N * c.shape.ofh() * c.shape.ofw()) + (c.bf16 ? 0x1p-8 : 0.0));
  EXPECT_TRUE(v.norms.passed(v.tolerance)) << v.norms.to_string();
}
INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvUpdCases,
    ::testing::Values(
        // 3x3, stride 1, pad 1: images split among threads (partial filters), or one thread (direct).
        Case{"Abcdefg", shape(2, 8, 8, 16, 16, 3, 1, 1), 8, 8, 2, true},
        Case{"Abcdefg", shape(2, 8, 8, 16, 16, 3, 1, 1), 8, 8, 1, false},
        // Channel blocks shared out: every tile has one owner, direct accumulation.
        Case{"aBCdefg", shape(2, 8, 8, 16, 16, 3, 1, 1), 8, 8, 2, false},
        // Stride 2, odd sizes, 3 threads.
        Case{"aBcdefg", shape(2, 9, 9, 8, 16, 3, 2, 1), 4, 8, 3, false},
        // 1x1, stride 2, no padding.
        Case{"abCdefg", shape(1, 10, 10, 16, 8, 1, 2, 0), 8, 4, 2, false},
        // The 7x7 stem: C = 3 (bc = 3), stride 2, pad 3.
        Case{"Abcdefg", shape(2, 16, 16, 3, 8, 7, 2, 3), 3, 8, 2, true},
        Case{"abC{R:2}deF{C:2}g", shape(1, 16, 16, 3, 16, 7, 2, 3), 3, 8, 4, false},
        // Channel remainders: C = 10 in blocks of 4, K = 13 in blocks of 8.
        Case{"aBCdefg", shape(2, 7, 6, 10, 13, 3, 1, 1), 4, 8, 4, false},
        Case{"Abcdefg", shape(3, 7, 6, 10, 13, 3, 1, 1), 4, 8, 4, true},
        // Grid mode: images over the rows of the grid (partial filters), or only channel blocks.
        Case{"A{R:2}bC{C:2}defg", shape(2, 6, 6, 8, 16, 3, 1, 1), 8, 8, 4, true},
        Case{"aB{R:2}C{C:2}defg", shape(2, 6, 6, 16, 16, 3, 1, 1), 8, 8, 4, false},
        // Output rows in parallel: one row per BRGEMM by default, partial filters.
        Case{"abcDefg", shape(1, 8, 8, 8, 8, 3, 1, 1), 8, 8, 2, true},
        // Several rows per BRGEMM with a shorter last batch (8 = 3 + 3 + 2).
        Case{"aBcdefg", shape(2, 8, 8, 8, 16, 3, 1, 1), 8, 8, 2, false, 3},
        Case{"abcDefg", shape(1, 8, 8, 8, 16, 3, 1, 1), 8, 8, 3, true, 3},
        // A dynamic schedule inside the image loop: tiles change hands, so partial filters ...
        Case{"aBCdefg@schedule(dynamic,1)", shape(2, 6, 6, 16, 16, 3, 1, 1), 8, 8, 2, true},
        // ... but not when the reduction loops are all inside the work-shared ones.
        Case{"BCadefg@schedule(dynamic,1)", shape(2, 6, 6, 16, 16, 3, 1, 1), 8, 8, 2, false},
        // Blocked loops (PARLOOPER's default block sizes), with and without a split reduction.
        Case{"Afgbdced", shape(2, 8, 8, 16, 16, 3, 1, 1), 8, 8, 2, true, 2},
        Case{"bcBCadefg", shape(2, 6, 6, 32, 32, 3, 1, 1), 8, 8, 3, false},
        // One image: a parallel image loop has nothing to share out.
        Case{"Abcdefg", shape(1, 6, 6, 8, 8, 3, 1, 0), 8, 8, 4, false}));

// bf16: odd ofw (the zero extra pixel), strides 2 and 3 (phases), the stem, channel remainders,
// partial filters, rows per BRGEMM with a shorter last batch, grids.
INSTANTIATE_TEST_SUITE_P(
    Bf16, ConvUpdCases,
    ::testing::Values(
        bf16(Case{"Abcdefg", shape(2, 8, 8, 16, 16, 3, 1, 1), 8, 8, 2, true}),
        bf16(Case{"aBCdefg", shape(2, 7, 7, 16, 16, 3, 1, 1), 8, 8, 2, false}),
        bf16(Case{"aBcdefg", shape(2, 9, 9, 8, 16, 3, 2, 1), 4, 8, 3, false}),
        bf16(Case{"abCdefg", shape(1, 10, 10, 16, 8, 1, 2, 0), 8, 4, 2, false}),
        bf16(Case{"abCdefg", shape(1, 11, 11, 8, 8, 1, 3, 0), 8, 4, 2, false}),
        bf16(Case{"Abcdefg", shape(2, 16, 16, 3, 8, 7, 2, 3), 4, 8, 2, true}),
        bf16(Case{"aBCdefg", shape(2, 7, 6, 10, 13, 3, 1, 1), 4, 8, 4, false}),
        bf16(Case{"aBCdefg", shape(2, 7, 6, 10, 13, 3, 1, 1), 4, 5, 2, false}),
        bf16(Case{"Abcdefg", shape(1, 7, 7, 8, 8, 1, 1, 0), 8, 8, 1, false}),
        bf16(Case{"Abcdefg", shape(2, 7, 7, 8, 8, 1, 1, 0), 8, 8, 2, true}),
        bf16(Case{"aBcdefg", shape(2, 7, 7, 8, 8, 1, 1, 0), 8, 8, 2, false, 3}),
        bf16(Case{"aBcdefg", shape(2, 8, 8, 8, 16, 3, 1, 1), 8, 8, 2, false, 3}),
        bf16(Case{"abcDefg", shape(1, 8, 8, 8, 16, 3, 1, 1), 8, 8, 3, true, 3}),
        bf16(Case{"A{R:2}bC{C:2}defg", shape(2, 6, 6, 8, 16, 3, 1, 1), 8, 8, 4, true}),
        bf16(Case{"Abcdefg", shape(1, 3, 1, 4, 4, 1, 1, 0), 4, 4, 1, false})));

TEST(ConvUpd, Bf16PixelsPerGemmRow) {
  omp_set_num_threads(1);
  const ConvShape pointwise7 = shape(1, 7, 7, 8, 8, 1, 1, 0);
  EXPECT_EQ(ConvUpd(config_of("Abcdefg", pointwise7, 8, 8)).pixels_per_gemm_row(), 7);
  EXPECT_EQ(ConvUpd(config_of("Abcdefg", pointwise7, 8, 8, 3, true, true)).pixels_per_gemm_row(), 8);
  EXPECT_EQ(ConvUpd(config_of("Abcdefg", pointwise7, 8, 8, 0, true, true)).pixels_per_gemm_row(), 50)
      << "all 49 pixels as one row, not 7 rows of 8";
  EXPECT_EQ(ConvUpd(config_of("Abcdefg", shape(1, 8, 8, 8, 8, 1, 1, 0), 8, 8, 0, true, true)).pixels_per_gemm_row(), 8);
  EXPECT_EQ(ConvUpd(config_of("Abcdefg", shape(1, 9, 9, 8, 8, 3, 1, 1), 8, 8, 0, true, true)).pixels_per_gemm_row(), 10);
}

// The filter's VNNI-2 pairs run along C: an odd bc is refused. K needs no pairs (grad_output pairs
// its pixels), so an odd bk runs (and matches the reference: the Bf16 cases above).
TEST(ConvUpd, Bf16NeedsAnEvenCBlock) {
  omp_set_num_threads(1);
  const ConvShape s = shape(1, 6, 6, 8, 8, 3, 1, 1);
  EXPECT_THROW(ConvUpd(config_of("Abcdefg", s, 3, 8, 0, true, true)), weft::Error);
  EXPECT_NO_THROW(ConvUpd(config_of("Abcdefg", s, 8, 5, 0, true, true)));
  EXPECT_NO_THROW(ConvUpd(config_of("Abcdefg", s, 4, 8, 0, true, true)));
}

TEST(ConvUpd, RacingStringsNeedPartialFilters) {
  omp_set_num_threads(2);
  const ConvShape s = shape(2, 6, 6, 8, 8, 3, 1, 1);
  for (const char* racing : {"Abcdefg", "abcDefg", "A{R:2}bcdefg", "aB{R:2}cD{C:2}efg", "aBCdefg@schedule(dynamic)",
                             "aBCdefg@schedule(runtime)"}) {
    EXPECT_THROW(ConvUpd(config_of(racing, s, 8, 8, 1, false)), weft::Error) << racing;
    EXPECT_NO_THROW(ConvUpd(config_of(racing, s, 8, 8, 1, true))) << racing;
  }
  // Race-free without partial filters: reductions sequential, or split but of one iteration.
  for (const char* safe : {"aBCdefg", "aBcdefg@schedule(static,1)", "BCadefg@schedule(dynamic)", "aB{R:2}C{C:1}defg",
                          "aB{R:2}cD{C:1}efg"}) {
    const ConvUpd upd(config_of(safe, s, 8, 8, 1, false));
    EXPECT_FALSE(upd.uses_partial_filters()) << safe;
  }
  EXPECT_NO_THROW(ConvUpd(config_of("abcDefg", s, 8, 8, 6, false)));  // d: one batch of all 6 rows
  omp_set_num_threads(1);  // one thread races with nobody
  EXPECT_NO_THROW(ConvUpd(config_of("Abcdefg", s, 8, 8, 1, false)));
}

TEST(ConvUpd, RacingStringsRaceWithoutPartialFilters) {
  // The check above is not overcautious: the same string with partial filters forced off by a
  // one-thread build is refused when run on two threads, rather than run wrongly.
  omp_set_num_threads(1);
  const ConvUpd upd(config_of("A{R:2}bcdefg", shape(2, 6, 6, 8, 8, 3, 1, 1), 8, 8));
  EXPECT_FALSE(upd.uses_partial_filters());
  omp_set_num_threads(2);
  std::vector<float> in(static_cast<std::size_t>(upd.input_layout().size())),
      out(static_cast<std::size_t>(upd.grad_output_layout().size())),
      filter(static_cast<std::size_t>(upd.filter_layout().size()));
  EXPECT_THROW(upd.run(in.data(), out.data(), filter.data()), weft::Error);
}

TEST(ConvUpd, BadConfigurationsAreErrors) {
  omp_set_num_threads(2);
  const ConvShape s = shape(1, 8, 8, 8, 8, 3, 1, 1);
  EXPECT_THROW(ConvUpd(config_of("abcdefg", s, 8, 8, 9)), weft::Error);  // h_in_gemm > ofh
  EXPECT_THROW(ConvUpd(config_of("abcdefg", s, 8, 8, -1)), weft::Error);
  EXPECT_THROW(ConvUpd(config_of("abcdef", s, 8, 8)), weft::Error);       // a letter missing
  EXPECT_THROW(ConvUpd(config_of("abcd[0,4,]efg", s, 8, 8)), weft::Error);  // inline bounds
  EXPECT_NO_THROW(ConvUpd(config_of("abcdd[,,,(4)]efg", s, 8, 8, 2)));     // inline blocks
  EXPECT_THROW(ConvUpd(config_of("abcdefg", s, 0, 8)), weft::Error);
  EXPECT_THROW(ConvUpd(config_of("abcdefg", shape(1, 2, 2, 8, 8, 3, 1, 0), 8, 8)), weft::Error);  // R > H
  const ConvUpd upd(config_of("aBcdefg", s, 8, 8));
  std::vector<float> buffer(1024);
  EXPECT_THROW(upd.run(nullptr, buffer.data(), buffer.data()), weft::Error);
  int refused = 0;
#pragma omp parallel num_threads(2) reduction(+ : refused)
  try {
    upd.run(buffer.data(), buffer.data(), buffer.data());
  } catch (const weft::Error&) {
    refused += 1;
  }
  EXPECT_EQ(refused, 2);
}

TEST(ConvUpd, AutomaticRowsAndTag) {
  omp_set_num_threads(2);
  const ConvShape s = shape(1, 8, 8, 8, 8, 3, 1, 1);
  EXPECT_EQ(ConvUpd(config_of("aBcdefg", s, 8, 8)).rows_per_gemm(), 8);  // all rows
  EXPECT_EQ(ConvUpd(config_of("abcDefg", s, 8, 8)).rows_per_gemm(), 1);  // d shared out
  const ConvUpd upd(config_of("aBcdefg", s, 8, 8, 4, false));
  EXPECT_EQ(upd.rows_per_gemm(), 4);
  EXPECT_EQ(upd.measure_tag(2), "aBcdefg_hg=4_mbpar=0_threads2");
  EXPECT_EQ(upd.reduction_length(), 64);
  EXPECT_DOUBLE_EQ(upd.flops(), 2.0 * 8 * 8 * 9 * 64);
}

#ifndef WEFT_CONV_UPD_PATH
#define WEFT_CONV_UPD_PATH ""
#endif

weft::test::ProgramResult run_upd(const std::string& args) {
  return weft::test::run_program("'" + std::string(WEFT_CONV_UPD_PATH) + "' " + args + " --warmup 0", "weft_conv_upd");
}

class ConvUpdCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(WEFT_CONV_UPD_PATH).empty()) GTEST_SKIP() << "weft-conv-upd was not built";
  }
};

TEST_F(ConvUpdCli, RunsParloopersArguments) {
  const auto ok = run_upd("Abcdefg 2 8 8 16 16 3 3 1 1 1 1 8 8 2 1 --threads 2");
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_NE(ok.out.find("check: PASSED"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("a partial filter per thread"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find(" Abcdefg_hg=8_mbpar=1_threads2\n"), std::string::npos) << ok.out;
  const auto direct = run_upd("aBcdefg 1 8 8 16 16 1 1 2 2 0 0 8 8 --threads 2 --h-in-gemm 2");
  EXPECT_EQ(direct.status, 0) << direct.err;
  EXPECT_NE(direct.out.find(" aBcdefg_hg=2_mbpar=1_threads2\n"), std::string::npos) << direct.out;
}

// USE_BF16=1: bf16 tensors, checked, "BF16" in the header and "_bf16" ending the tag.
TEST_F(ConvUpdCli, RunsInBf16) {
  const auto bf16 = weft::test::run_program("USE_BF16=1 '" + std::string(WEFT_CONV_UPD_PATH) +
                                                "' Abcdefg 2 7 7 16 16 3 3 2 2 1 1 8 8 2 0 --threads 2 --warmup 0",
                                            "weft_conv_upd_bf16");
  EXPECT_EQ(bf16.status, 0) << bf16.err;
  EXPECT_NE(bf16.out.find("weft-conv-upd: BF16, "), std::string::npos) << bf16.out;
  EXPECT_NE(bf16.out.find("check: PASSED"), std::string::npos) << bf16.out;
  EXPECT_NE(bf16.out.find(" Abcdefg_hg=4_mbpar=1_threads2_bf16\n"), std::string::npos) << bf16.out;
}

TEST_F(ConvUpdCli, RefusesWhatItDoesNotDo) {
  const auto racing = run_upd("Abcdefg 2 8 8 16 16 3 3 1 1 1 1 8 8 2 0 --threads 2");
  EXPECT_EQ(racing.status, 2);
  EXPECT_NE(racing.err.find("use_mb_par_f32"), std::string::npos) << racing.err;
  const auto bf16 = run_upd("Abcdefg 2 8 8 16 16 3 3 1 1 1 1 8 8 2 1 1 1 1 0 0 0 7 4 0 0 1 0");
  EXPECT_EQ(bf16.status, 2);
  EXPECT_NE(bf16.err.find("bf16 tuning knobs"), std::string::npos) << bf16.err;
  // USE_BF16: argument 16 is PARLOOPER's bf16_use_nchw_format there; weft reads blocked layouts only.
  const auto nchw = weft::test::run_program(
      "USE_BF16=1 '" + std::string(WEFT_CONV_UPD_PATH) + "' Abcdefg 2 8 8 16 16 3 3 1 1 1 1 8 8 2 1 --warmup 0",
      "weft_conv_upd_bf16_nchw");
  EXPECT_EQ(nchw.status, 2);
  EXPECT_NE(nchw.err.find("bf16_use_nchw_format"), std::string::npos) << nchw.err;
  const auto odd = weft::test::run_program(
      "USE_BF16=1 '" + std::string(WEFT_CONV_UPD_PATH) + "' Abcdefg 2 8 8 16 16 3 3 1 1 1 1 7 8 2 --warmup 0",
      "weft_conv_upd_bf16_odd");
  EXPECT_EQ(odd.status, 2);
  EXPECT_NE(odd.err.find("must be even"), std::string::npos) << odd.err;
  // auto takes the shape and n_iters only (the rest is the tuner's: weft_tune_cli_test.cpp).
  for (const char* line : {"auto", "auto 2 8 8 16 16 3 3 1 1 1 1 10 1"}) {
    const auto tuned = run_upd(line);
    EXPECT_EQ(tuned.status, 2) << line;
  }
  const auto flag = run_upd("Abcdefg 2 8 8 16 16 3 3 1 1 1 1 8 8 2 2");
  EXPECT_EQ(flag.status, 2);
  EXPECT_NE(flag.err.find("use_mb_par_f32"), std::string::npos) << flag.err;
}

// ---- The untuned choice from the machine model (conv_model.hpp) ----

using weft::samples::test::kSmallL2;
using weft::samples::test::square_shape;

ConvUpdConfig modeled(const ConvShape& shape, int threads, weft::jit::DataType dtype = weft::jit::DataType::f32) {
  ConvUpdConfig problem;
  problem.shape = shape;
  problem.dtype = dtype;
  return model_conv_upd_config(problem, threads, kSmallL2);
}

TEST(ConvUpdModel, ATeamTakesImagesOnLargeImagesAndChannelBlocksOnSmallOnes) {
  EXPECT_EQ(modeled(square_shape(2, 7, 512, 512, 3, 1, 1), 2).loop_string, "aBCdefg");      // 49 pixels
  EXPECT_EQ(modeled(square_shape(2, 14, 1024, 2048, 1, 2, 0), 2).loop_string, "aBCdefg");   // 7x7 outputs
  EXPECT_EQ(modeled(square_shape(2, 14, 256, 256, 3, 1, 1), 2).loop_string, "aBCdefg");     // 196 pixels
  EXPECT_EQ(modeled(square_shape(2, 28, 128, 128, 3, 1, 1), 2).loop_string, "Abcdefg");     // 784 pixels
  EXPECT_EQ(modeled(square_shape(2, 56, 64, 64, 1, 1, 0), 2).loop_string, "Abcdefg");
  // One C and one K block cannot keep two threads busy: images.
  EXPECT_EQ(modeled(square_shape(2, 7, 16, 16, 3, 1, 1), 2).loop_string, "Abcdefg");
  // One thread: the plain nest.
  EXPECT_EQ(modeled(square_shape(1, 7, 512, 512, 3, 1, 1), 1).loop_string, "Abcdefg");
}

TEST(ConvUpdModel, BlocksAreTheSamplesDefault) {
  const ConvUpdConfig c = modeled(square_shape(1, 7, 512, 48, 3, 1, 1), 2);
  EXPECT_EQ(c.bc, 32);
  EXPECT_EQ(c.bk, 32);
  EXPECT_EQ(modeled(square_shape(1, 9, 3, 13, 3, 1, 1), 1, weft::jit::DataType::bf16).bc, 4);  // VNNI-2 pairs along C
}

TEST(ConvUpdModel, RowsPerGemmKeepItsOperandsInAQuarterOfTheL2) {
  // 56x56, 32 + 32 channels: 14.3 KB per output row; a quarter of 512 KiB holds 9 rows.
  EXPECT_EQ(modeled(square_shape(1, 56, 64, 64, 1, 1, 0), 1).h_in_gemm, 9);
  // bf16 rows take half the bytes: 18.
  EXPECT_EQ(modeled(square_shape(1, 56, 64, 64, 1, 1, 0), 1, weft::jit::DataType::bf16).h_in_gemm, 18);
  // Small images fit whole: 7x7 at 32 + 32 channels, 1.8 KB per row: all 7 rows.
  EXPECT_EQ(modeled(square_shape(1, 7, 512, 48, 3, 1, 1), 2).h_in_gemm, 7);
  // conv1: 112 output columns of 3 + 32 channels, 15.7 KB per row: 8 of its 112 rows.
  EXPECT_EQ(modeled(square_shape(1, 224, 3, 64, 7, 2, 3), 1).h_in_gemm, 8);
}

// Every ResNet-50 layer and shapes outside it, on 1-3 threads, fp32 and bf16: the sample takes
// the choice.
TEST(ConvUpdModel, TheSampleTakesEveryChoice) {
  for (const ConvShape& shape : weft::samples::test::model_test_shapes(WEFT_RESNET50_LAYERS))
    for (int threads : {1, 2, 3})
      for (const auto dtype : {weft::jit::DataType::f32, weft::jit::DataType::bf16}) {
        omp_set_num_threads(threads);
        const ConvUpdConfig c = modeled(shape, threads, dtype);
        EXPECT_NO_THROW(ConvUpd::check(c)) << c.loop_string << " on " << shape.H << "x" << shape.W << " " << shape.C
                                           << " -> " << shape.K << ", " << threads << " threads";
      }
}

// Rows per GEMM short of all of them (30 rows of 16 + 16 channels in a 48 KiB L2's quarter: 3
// per GEMM, 10 GEMMs adding into one tile) compute the gradient.
TEST(ConvUpdModel, SeveralGemmsPerTileMatchTheReference) {
  ConvUpdConfig problem;
  problem.shape = square_shape(1, 30, 16, 16, 1, 1, 0);
  omp_set_num_threads(1);
  const ConvUpdConfig c = model_conv_upd_config(problem, 1, ConvMachine{.l2_bytes = 48 << 10});
  EXPECT_EQ(c.h_in_gemm, 3);
  const Verdict v = upd_error(ConvUpd(c));
  EXPECT_TRUE(v.norms.passed(v.tolerance)) << v.norms.to_string();
}

// The channel blocks in parallel compute the gradient (no partial filters), as the images do.
TEST(ConvUpdModel, ChoicesMatchTheReference) {
  for (const ConvShape& shape : {square_shape(2, 5, 40, 72, 3, 1, 1), square_shape(3, 30, 16, 16, 1, 1, 0)}) {
    omp_set_num_threads(2);
    const ConvUpdConfig c = modeled(shape, 2);
    const ConvUpd upd(c);
    EXPECT_EQ(upd.uses_partial_filters(), c.loop_string == "Abcdefg") << c.loop_string;
    const Verdict v = upd_error(upd);
    EXPECT_TRUE(v.norms.passed(v.tolerance)) << c.loop_string << ": " << v.norms.to_string();
  }
}

}  // namespace
