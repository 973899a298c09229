// The convolution samples' shared pieces (samples/conv): shape, blocked layouts, the double
// precision reference, and the common command line.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <weft/jit/error.hpp>
#include <weft/ops/verification.hpp>

#include "conv_args.hpp"
#include <weft/ops/conv_layout.hpp>
#include <weft/ops/conv_reference.hpp>
#include <weft/ops/conv_shape.hpp>
#include "conv_test_support.hpp"
#include <weft/ops/rim_taps.hpp>

namespace {

using weft::samples::test::random_floats;
using weft::samples::test::square_shape;

using namespace weft::samples;
using weft::ops::conv_bwd_data_reference;
using weft::ops::conv_bwd_weights_reference;
using weft::ops::conv_fwd_reference;
using weft::ops::ConvLoops;
using weft::ops::ConvShape;
using weft::ops::edge_chunks;
using weft::ops::rim_taps;
using weft::ops::RimTaps;
using weft::ops::TapRange;
using ::testing::HasSubstr;


double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += double(a[i]) * double(b[i]);
  return sum;
}

TEST(ConvShape, DerivesTheOutputAndRejectsWhatHasNone) {
  const ConvShape resnet_stem{.N = 1, .H = 224, .W = 224, .C = 3, .K = 64, .R = 7, .S = 7,
                              .stride_h = 2, .stride_w = 2, .pad_h = 3, .pad_w = 3};
  EXPECT_EQ(resnet_stem.ofh(), 112);
  EXPECT_EQ(resnet_stem.ofw(), 112);
  EXPECT_DOUBLE_EQ(resnet_stem.flops(), 2.0 * 3 * 64 * 49 * 112 * 112);
  EXPECT_NO_THROW(resnet_stem.validate());

  ConvShape bad = resnet_stem;
  bad.R = 231;
  EXPECT_THAT([&] { bad.validate(); }, ::testing::ThrowsMessage<weft::Error>(HasSubstr("taller")));
  bad = resnet_stem;
  bad.stride_w = 0;
  EXPECT_THAT([&] { bad.validate(); }, ::testing::ThrowsMessage<weft::Error>(HasSubstr("stride_w")));
  bad = resnet_stem;
  bad.pad_h = -1;
  EXPECT_THAT([&] { bad.validate(); }, ::testing::ThrowsMessage<weft::Error>(HasSubstr("pad_h")));
  // Every extent in range, their product not: the blocked layouts' 64-bit offsets would wrap
  // (a Python caller reached a segmentation fault through a layout of 0 elements).
  const ConvShape huge{.N = 1 << 20, .H = 1 << 20, .W = 1 << 20, .C = 1 << 20, .K = 16, .R = 1, .S = 1};
  EXPECT_THAT([&] { huge.validate(); },
              ::testing::ThrowsMessage<weft::Error>(HasSubstr("the input would hold about 2^80 elements")));
  bad = resnet_stem;
  bad.C = bad.K = 1 << 20;  // the filter: 2^40 x 64 x 64 elements
  bad.H = bad.W = 1024;
  bad.R = bad.S = 64;
  EXPECT_THAT([&] { bad.validate(); }, ::testing::ThrowsMessage<weft::Error>(HasSubstr("the filter would hold")));
  bad = resnet_stem;
  bad.N = 1 << 12;  // 2^12 x 3 channels (+ a block) x 230 x 230: 2^40, fine
  EXPECT_NO_THROW(bad.validate());
}

TEST(ConvReference, ForwardMatchesAHandComputedCase) {
  // One 3x3 image, one channel, a 2x2 filter of ones, stride 1, pad 1: each output is the sum of
  // the input pixels under the filter, with the padding contributing nothing.
  const ConvShape s{.N = 1, .H = 3, .W = 3, .C = 1, .K = 1, .R = 2, .S = 2, .pad_h = 1, .pad_w = 1};
  const std::vector<float> in{1, 2, 3, 4, 5, 6, 7, 8, 9}, w{1, 1, 1, 1};
  std::vector<float> out(16);
  conv_fwd_reference(s, in.data(), w.data(), nullptr, false, out.data());
  EXPECT_EQ(out, (std::vector<float>{1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9}));
  const float bias = -10;
  conv_fwd_reference(s, in.data(), w.data(), &bias, true, out.data());
  EXPECT_EQ(out, (std::vector<float>{0, 0, 0, 0, 0, 2, 6, 0, 1, 14, 18, 5, 0, 5, 7, 0}));
}

// The fused ReLU follows the library's rule (weft/tpp/min_max_relu.hpp): a NaN sum stays NaN (the
// reference wrote 0 for it, where the kernels' ReLU keeps NaN), a negative one becomes +0.
TEST(ConvReference, ForwardReluKeepsNaN) {
  const ConvShape s{.N = 1, .H = 1, .W = 3, .C = 1, .K = 1, .R = 1, .S = 1};
  const std::vector<float> in{std::numeric_limits<float>::quiet_NaN(), -2, 3}, w{1};
  std::vector<float> out(3);
  conv_fwd_reference(s, in.data(), w.data(), nullptr, true, out.data());
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_TRUE(out[1] == 0 && !std::signbit(out[1]));
  EXPECT_EQ(out[2], 3);
}

// Backward by data and by weights are the adjoints of forward: <fwd(x, w), y> = <x, bwd_data(y, w)>
// = <w, bwd_weights(x, y)>, for strides, paddings and filters that leave pixels unread.
TEST(ConvReference, BackwardPassesAreTheAdjointsOfForward) {
  const std::vector<ConvShape> shapes{
      {.N = 2, .H = 7, .W = 6, .C = 3, .K = 4, .R = 3, .S = 3, .stride_h = 1, .stride_w = 1, .pad_h = 1, .pad_w = 1},
      {.N = 1, .H = 9, .W = 8, .C = 2, .K = 3, .R = 3, .S = 2, .stride_h = 2, .stride_w = 3, .pad_h = 0, .pad_w = 1},
      {.N = 1, .H = 11, .W = 11, .C = 3, .K = 2, .R = 7, .S = 7, .stride_h = 2, .stride_w = 2, .pad_h = 3, .pad_w = 3},
      {.N = 2, .H = 5, .W = 5, .C = 4, .K = 2, .R = 1, .S = 1, .stride_h = 2, .stride_w = 2, .pad_h = 0, .pad_w = 0}};
  for (const ConvShape& s : shapes) {
    SCOPED_TRACE(s.to_string());
    const auto x = random_floats(s.N * s.C * s.H * s.W, 1);
    const auto w = random_floats(s.K * s.C * s.R * s.S, 2);
    const auto y = random_floats(s.N * s.K * s.ofh() * s.ofw(), 3);
    std::vector<float> fwd(y.size()), gx(x.size()), gw(w.size());
    conv_fwd_reference(s, x.data(), w.data(), nullptr, false, fwd.data());
    conv_bwd_data_reference(s, y.data(), w.data(), gx.data());
    conv_bwd_weights_reference(s, x.data(), y.data(), gw.data());
    const double forward = dot(fwd, y);
    EXPECT_NEAR(dot(x, gx), forward, 1e-4 * (1 + std::fabs(forward)));
    EXPECT_NEAR(dot(w, gw), forward, 1e-4 * (1 + std::fabs(forward)));
  }
}

// A 3 x 3 filter over 5 output columns with one column of padding on each side: the first column
// keeps filter columns 1-2, the last 0-1, the others all three.
TEST(RimTaps, GroupsThePositionsByTheTapsThatReadTheImage) {
  const auto range_of = [](std::int64_t q) { return TapRange{std::max<std::int64_t>(0, 1 - q), std::min<std::int64_t>(3, 6 - q)}; };
  const RimTaps cut = rim_taps(5, 3, true, range_of);
  EXPECT_EQ(cut.ranges, (std::vector<TapRange>{{0, 3}, {1, 3}, {0, 2}}));
  EXPECT_EQ(cut.of_position, (std::vector<std::int32_t>{1, 0, 0, 0, 2}));
  EXPECT_DOUBLE_EQ(cut.saved_share(), 2.0 / 15.0);
  EXPECT_FALSE(rim_taps(5, 3, false, range_of).cuts());
  // A position that would keep no tap: every position keeps every one.
  const RimTaps none = rim_taps(3, 3, true, [](std::int64_t q) { return TapRange{q, q}; });
  EXPECT_FALSE(none.cuts());
  EXPECT_DOUBLE_EQ(none.saved_share(), 0.0);
}

TEST(RimTaps, EdgeChunksSplitRunsEvenlyIntoAtMostMaxRows) {
  // Runs: row 0, rows 1-12 (12 rows: 6 + 6 with at most 8), row 13.
  const auto same = [](std::int64_t y) { return y >= 1 && y + 1 <= 12; };
  EXPECT_EQ(edge_chunks(14, 8, same), (std::vector<std::int32_t>{1, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 6, 1}));
  // 17 rows in one run, at most 8: 6 + 6 + 5.
  const std::vector<std::int32_t> chunks = edge_chunks(17, 8, [](std::int64_t) { return true; });
  EXPECT_EQ(chunks[5], 6);
  EXPECT_EQ(chunks[11], 6);
  EXPECT_EQ(chunks[16], 5);
  EXPECT_EQ(std::count(chunks.begin(), chunks.end(), 0), 14);
}

TEST(ConvArgs, ReadsParloopersCommonPrefix) {
  SampleArgs args;
  ConvLoops loops;
  const char* argv[] = {"weft-conv-fwd", "Afgbdced", "2", "56", "56", "64", "64", "3", "3", "1", "1", "1", "1",
                        "32", "16", "--threads", "1"};
  parse_conv_arguments(args, loops, 17, const_cast<char**>(argv), 30, "LOOP_STRING ...");
  EXPECT_EQ(loops.loop_string, "Afgbdced");
  EXPECT_EQ(loops.shape.N, 2);
  EXPECT_EQ(loops.shape.C, 64);
  EXPECT_EQ(loops.shape.R, 3);
  EXPECT_EQ(loops.shape.pad_w, 1);
  EXPECT_EQ(loops.bc, 32);
  EXPECT_EQ(loops.bk, 16);
  EXPECT_EQ(loops.k_blocking().blocks(), 4);
  EXPECT_THAT(conv_header("weft-conv-fwd", loops), HasSubstr("N 2 H 56 W 56 C 64 K 64 R 3 S 3 stride 1 1 pad 1 1"));
}

TEST(ConvArgs, NamesTheMissingOrBadArgument) {
  {
    SampleArgs args;
    ConvLoops loops;
    const char* argv[] = {"weft-conv-fwd", "Abcdefg", "2", "56", "56", "64", "64", "3", "3", "1", "1", "1", "1", "32"};
    EXPECT_THAT([&] { parse_conv_arguments(args, loops, 14, const_cast<char**>(argv), 30, "..."); },
                ::testing::ThrowsMessage<UsageError>(HasSubstr("missing bk (argument 14)")));
  }
  {
    SampleArgs args;
    ConvLoops loops;
    const char* argv[] = {"weft-conv-fwd", "Abcdefg", "2", "56", "56", "64", "64", "3", "3", "0", "1", "1", "1", "32", "32"};
    EXPECT_THAT([&] { parse_conv_arguments(args, loops, 15, const_cast<char**>(argv), 30, "..."); },
                ::testing::ThrowsMessage<UsageError>(HasSubstr("stride_h")));
  }
}

}  // namespace
