// The backward-by-data convolution sample (samples/conv/conv_bwd): every path (gather at stride 1,
// 1x1 and tap scatters at larger strides) against the double-precision reference on small shapes,
// its remainders, loop strings (collapse, grid, PARLOOPER's), thread counts, run() and
// run_transposed() alike, and the configurations it refuses.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <weft/cli/values.hpp>
#include <weft/jit/error.hpp>
#include <weft/ops/verification.hpp>

#include <weft/ops/conv_bwd.hpp>
#include <weft/ops/conv_layout.hpp>
#include <weft/ops/conv_model.hpp>
#include <weft/ops/conv_reference.hpp>
#include "conv_args.hpp"
#include "conv_test_support.hpp"
#include "run_program.hpp"

namespace {

using weft::samples::test::fill_rims;
using weft::samples::test::random_floats;
using weft::samples::test::square_shape;

using namespace weft::samples;
using weft::ops::ActivationLayout;
using weft::ops::blocked_to_nchw;
using weft::ops::compare;
using weft::ops::conv_bwd_data_reference;
using weft::ops::ConvBwd;
using weft::ops::ConvBwdConfig;
using weft::ops::ConvBwdPath;
using weft::ops::ConvMachine;
using weft::ops::ConvShape;
using weft::ops::ErrorNorms;
using weft::ops::filter_to_vnni2;
using weft::ops::FilterLayout;
using weft::ops::kcrs_to_blocked;
using weft::ops::model_conv_bwd_config;
using weft::ops::nchw_to_blocked;
using weft::ops::round_to_bf16;
using weft::ops::sum_tolerance;
using weft::ops::to_bf16;
using weft::ops::to_floats;
using weft::ops::TransposedFilterLayout;
using ::testing::HasSubstr;

struct Case {
  std::string name;
  std::string loop_string;
  ConvShape shape;
  std::int64_t bc, bk;
  std::int64_t h_block = 1, w_block = 1, c_block = 1, k_block = 1, h_in_gemm = 1;
  int threads = 2;
  ConvBwdPath path = ConvBwdPath::gather;
  bool bf16 = false;
  bool plain = false;  // plain_grad_input
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name << " (" << c.loop_string << ")"; }

Case bf16(Case c) {
  c.bf16 = true;
  return c;
}

Case plain(Case c) {
  c.plain = true;
  return c;
}

ConvBwdConfig config_of(const Case& c) {
  ConvBwdConfig config;
  config.loop_string = c.loop_string;
  config.shape = c.shape;
  config.bc = c.bc, config.bk = c.bk;
  config.h_block = c.h_block, config.w_block = c.w_block, config.c_block = c.c_block;
  config.k_block = c.k_block, config.h_in_gemm = c.h_in_gemm;
  if (c.bf16) config.dtype = weft::jit::DataType::bf16;
  config.plain_grad_input = c.plain;
  return config;
}



struct Outcome {
  ErrorNorms norms, transposed_norms;  // run(), run_transposed() against the reference
  double tolerance;
  std::int64_t nonzero_padding_channels;  // of grad_input
  std::int64_t transposed_differs;        // grad_input elements where run_transposed() differs from run()
  std::int64_t guard_changed;             // of the floats past grad_input's end, in either run
};

// The image of blocked grad_input, as NCHW.
std::vector<float> image_of(const std::vector<float>& grad_input, const ConvBwd& bwd) {
  const ConvShape& s = bwd.config().shape;
  std::vector<float> image(static_cast<std::size_t>(s.N * s.C * s.H * s.W));
  blocked_to_nchw(grad_input.data(), image.data(), bwd.grad_input_layout());
  return image;
}

// Runs the pass on a grad_input full of garbage (so every pixel must be written), then again with
// another filter (so the second run must neither build on the first nor reuse its transposed
// tiles), and compares the image with the reference of the second; likewise run_transposed() on
// the two filters transposed (a run that kept the first one's tiles, or read the filter
// untransposed, would fail).
// The passes' buffers in the element type of the pass: floats, or bf16 (the filters' tiles in VNNI-2
// along C, as the forward pass takes them), handed back as floats.
struct Buffers {
  const ConvBwd& bwd;
  bool bf16() const { return bwd.config().bf16(); }
  std::vector<weft::jit::bfloat16> low(const std::vector<float>& v, bool filter) const {
    return filter ? filter_to_vnni2(v, bwd.filter_layout()) : to_bf16(v);
  }
  // run(filter, grad_output) or, with `transposed`, transpose_filter then run_transposed, into a
  // grad_input full of garbage.
  std::vector<float> run(const std::vector<float>& filter, const std::vector<float>& grad_output, bool transposed,
                         std::vector<float> grad_input) const {
    const auto t_size = static_cast<std::size_t>(bwd.transposed_filter_layout().size());
    if (!bf16()) {
      std::vector<float> t(t_size);
      if (!transposed) {
        bwd.run(filter.data(), grad_output.data(), grad_input.data());
      } else {
        bwd.transpose_filter(filter.data(), t.data());
        bwd.run_transposed(t.data(), grad_output.data(), grad_input.data());
      }
      return grad_input;
    }
    const auto f = low(filter, true), go = low(grad_output, false);
    auto gi = low(grad_input, false);
    std::vector<weft::jit::bfloat16> t(t_size);
    if (!transposed) {
      bwd.run(f.data(), go.data(), gi.data());
    } else {
      bwd.transpose_filter(f.data(), t.data());
      bwd.run_transposed(t.data(), go.data(), gi.data());
    }
    return to_floats(gi.data(), static_cast<std::int64_t>(gi.size()));
  }
};

Outcome run_case(const ConvBwd& bwd, int threads) {
  omp_set_num_threads(threads);
  const ConvShape& s = bwd.config().shape;
  std::vector<float> grad_output = random_floats(s.N * s.K * s.ofh() * s.ofw(), 31);
  std::vector<float> filter = random_floats(s.K * s.C * s.R * s.S, 32);
  if (bwd.config().bf16()) {
    round_to_bf16(grad_output);  // what the run reads, for the reference
    round_to_bf16(filter);
  }
  const std::vector<float> grad_output_blocked = nchw_to_blocked(grad_output.data(), bwd.grad_output_layout());
  const std::vector<float> filter_blocked = kcrs_to_blocked(filter.data(), bwd.filter_layout());
  const std::vector<float> first_filter = random_floats(bwd.filter_layout().size(), 33);
  const ActivationLayout& in = bwd.grad_input_layout();
  const Buffers buffers{bwd};
  // Garbage, and a guard past the end that no run may write.
  constexpr std::int64_t kGuard = 4096;
  const float garbage_value = bwd.config().bf16() ? weft::jit::to_float(weft::jit::to_bfloat16(555.0f)) : 555.0f;
  const std::vector<float> garbage(static_cast<std::size_t>(in.size() + kGuard), garbage_value);
  // A first run on another filter, then the one compared; run() keeps no tiles from the first.
  buffers.run(first_filter, grad_output_blocked, false, garbage);
  const std::vector<float> grad_input = buffers.run(filter_blocked, grad_output_blocked, false, garbage);
  const std::vector<float> grad_input_t = buffers.run(filter_blocked, grad_output_blocked, true, garbage);

  const std::int64_t count = s.N * s.C * s.H * s.W;
  const std::vector<float> result = image_of(grad_input, bwd), result_t = image_of(grad_input_t, bwd);
  std::vector<float> reference(result.size());
  conv_bwd_data_reference(s, grad_output.data(), filter.data(), reference.data());
  std::int64_t differs = 0;
  for (std::size_t i = 0; i < result.size(); ++i) differs += result[i] != result_t[i];
  std::int64_t guard_changed = 0;
  for (const std::vector<float>* run : {&grad_input, &grad_input_t}) {
    guard_changed += std::count_if(run->end() - kGuard, run->end(), [&](float v) { return v != garbage_value; });
  }
  std::int64_t padding = 0;
  const std::int64_t bc = in.channels.block;
  for (std::int64_t n = 0; n < in.images; ++n)
    for (std::int64_t c = s.C; c < in.channels.padded(); ++c)
      for (std::int64_t y = 0; y < in.h; ++y)
        for (std::int64_t x = 0; x < in.w; ++x)
          padding += grad_input[static_cast<std::size_t>(in.offset(n, c / bc, y + in.pad_h, x + in.pad_w) + c % bc)] != 0;
  return {compare(result.data(), reference.data(), count), compare(result_t.data(), reference.data(), count),
          bwd.tolerance(), padding, differs, guard_changed};
}

class ConvBwdCases : public ::testing::TestWithParam<Case> {};

TEST_P(ConvBwdCases, MatchesTheReference) {
  const Case& c = GetParam();
  const ConvBwd bwd(config_of(c));
  EXPECT_EQ(bwd.path(), c.path);
  const Outcome o = run_case(bwd, c.threads);
  EXPECT_TRUE(o.norms.passed(o.tolerance)) << o.norms.to_string();
  EXPECT_TRUE(o.transposed_norms.passed(o.tolerance)) << "run_transposed: " << o.transposed_norms.to_string();
  EXPECT_EQ(o.nonzero_padding_channels, 0);
  // The same tiles and batch order as run()'s, only read from elsewhere: the same sums.
  EXPECT_EQ(o.transposed_differs, 0);
  EXPECT_EQ(o.guard_changed, 0);
}

using P = ConvBwdPath;
INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvBwdCases,
    ::testing::Values(
        // Stride 1: the gather, "same" convolutions as PARLOOPER's, and the shapes beyond them.
        Case{"same3x3", "Abcdefg", square_shape(2, 6, 16, 16, 3, 1, 1), 8, 8},
        Case{"pointwise", "Abcdefg", square_shape(2, 5, 16, 24, 1, 1, 0), 8, 8},
        Case{"valid3x3", "Abcdefg", square_shape(1, 7, 8, 8, 3, 1, 0), 8, 8},              // grad_output rims 2
        Case{"pad3_3x3", "Abcdefg", square_shape(1, 4, 8, 8, 3, 1, 3), 8, 8},              // pad > R - 1
        Case{"pad1_1x1", "Abcdefg", square_shape(1, 4, 8, 8, 1, 1, 1), 8, 8},
        Case{"same7x7", "Abcdefg", square_shape(1, 9, 8, 8, 7, 1, 3), 8, 8},
        Case{"rect", "Abcdefg", {.N = 1, .H = 6, .W = 5, .C = 8, .K = 8, .R = 3, .S = 1, .pad_h = 1}, 8, 8},
        Case{"channel_remainders", "Abcdefg", square_shape(2, 5, 10, 13, 3, 1, 1), 4, 8},
        Case{"first_layer_c3", "Abcdefg", square_shape(1, 6, 3, 16, 3, 1, 1), 3, 8},
        Case{"w_block_remainder", "Abcdefg", square_shape(1, 7, 8, 8, 3, 1, 1), 8, 8, 1, 2},
        Case{"w_block_all", "Abcdefg", square_shape(1, 5, 8, 8, 3, 1, 1), 8, 8, 1, 5},
        Case{"h_in_gemm", "Abcdefg", square_shape(1, 6, 8, 8, 3, 1, 1), 8, 8, 1, 1, 1, 1, 2},
        Case{"h_in_gemm_remainder", "Abcdefg", square_shape(2, 7, 8, 8, 3, 1, 1), 8, 8, 1, 1, 1, 1, 3},
        Case{"h_in_gemm_1x1", "Abcdefg", square_shape(1, 5, 8, 8, 1, 1, 0), 8, 8, 1, 1, 1, 1, 5},
        Case{"h_in_gemm_1x1_pad", "Abcdefg", square_shape(1, 4, 8, 8, 1, 1, 1), 8, 8, 1, 1, 1, 1, 3},
        Case{"k_block_remainder", "Abcdefg", square_shape(1, 5, 8, 40, 3, 1, 1), 8, 8, 1, 1, 1, 2},
        Case{"k_block_each", "Abcdefg", square_shape(1, 5, 8, 24, 3, 1, 1), 8, 8, 1, 1, 1, 3},
        Case{"c_block_remainder", "aBbcdefg", square_shape(1, 5, 24, 8, 3, 1, 1), 8, 8, 1, 1, 2},
        Case{"h_block", "aBdcdefg", square_shape(1, 7, 8, 16, 3, 1, 1), 8, 8, 4, 1, 1, 1, 2, 3},
        Case{"collapse", "ABcdefg", square_shape(2, 5, 16, 8, 3, 1, 1), 8, 8, 1, 1, 1, 1, 1, 3},
        Case{"collapse_rows", "abcDEfg", square_shape(1, 6, 8, 16, 3, 1, 1), 8, 8, 1, 2, 1, 2, 1, 4},
        Case{"parallel_single_chunk", "abCdefg", square_shape(1, 5, 8, 16, 3, 1, 1), 8, 8},
        Case{"grid", "A{R:2}B{C:2}cdefg", square_shape(2, 5, 16, 8, 3, 1, 1), 8, 8, 1, 1, 1, 1, 1, 4},
        Case{"grid_rows", "A{R:2}D{C:2}bcefg", square_shape(2, 6, 8, 8, 3, 1, 1), 8, 8, 1, 1, 1, 1, 2, 4},
        Case{"parlooper_afgbdced", "Afgbdced", square_shape(2, 6, 16, 16, 3, 1, 1), 8, 8, 2, 1, 1, 2, 1, 3},
        Case{"one_thread", "bcdefga", square_shape(1, 4, 8, 8, 3, 1, 1), 8, 8, 1, 1, 1, 1, 1, 1},
        Case{"images_per_thread", "Abcdefg", square_shape(3, 4, 16, 16, 3, 1, 1), 8, 8, 1, 1, 1, 2, 1, 1},
        Case{"images_inside_c_blocks", "BAcdefg", square_shape(3, 4, 24, 16, 3, 1, 1), 8, 8, 1, 1, 1, 2, 1, 2},
        Case{"rows_outside_chunks", "Adbcefg", square_shape(2, 5, 16, 24, 3, 1, 1), 8, 8, 1, 1, 1, 2, 1, 2},
        // Strides > 1 with a 1x1 filter: scatter, pixels no output reads from are zero.
        Case{"s2_1x1", "Abcdefg", square_shape(2, 7, 16, 16, 1, 2, 0), 8, 8, 1, 1, 1, 1, 1, 2, P::scatter_1x1},
        Case{"s2_1x1_even", "ABcdefg", square_shape(1, 8, 8, 16, 1, 2, 0), 8, 8, 1, 2, 1, 2, 1, 3, P::scatter_1x1},
        Case{"s3_1x1_pad", "abcDEfg", square_shape(1, 7, 8, 8, 1, 3, 1), 8, 8, 1, 2, 1, 1, 1, 4, P::scatter_1x1},
        Case{"s2_1x1_remainders", "Abcdefg", square_shape(1, 9, 10, 13, 1, 2, 0), 4, 8, 1, 2, 1, 2, 1, 2, P::scatter_1x1},
        Case{"mixed_1x1", "Abcdefg", {.N = 1, .H = 5, .W = 6, .C = 8, .K = 8, .stride_w = 2}, 8, 8, 1, 1, 1, 1, 1, 2,
             P::scatter_1x1},
        // ... with several grad_output rows per GEMM (the packed scatter): K chunks stored then
        // added, a shorter last block of rows, rows in parallel, padding, one stride only.
        Case{"s2_1x1_rows", "Abcdefg", square_shape(2, 14, 16, 16, 1, 2, 0), 8, 8, 1, 1, 1, 2, 7, 2, P::scatter_1x1},
        Case{"s2_1x1_rows_tail", "abcDefg", square_shape(1, 9, 10, 13, 1, 2, 0), 4, 8, 1, 1, 1, 2, 2, 2,
             P::scatter_1x1},
        Case{"s3_1x1_pad_rows", "Abcdefg", square_shape(1, 7, 8, 8, 1, 3, 1), 8, 8, 1, 1, 1, 1, 3, 1, P::scatter_1x1},
        Case{"mixed_1x1_rows", "Acbdefg", {.N = 1, .H = 5, .W = 6, .C = 8, .K = 24, .stride_w = 2}, 8, 8, 1, 1, 1, 3, 2,
             2, P::scatter_1x1},
        // Strides > 1 with R x S filters: per-tap scatter.
        Case{"s2_3x3", "Abcdefg", square_shape(2, 7, 16, 16, 3, 2, 1), 8, 8, 1, 1, 1, 1, 1, 2, P::scatter_taps},
        Case{"s2_3x3_blocks", "Afgbcde", square_shape(1, 8, 16, 24, 3, 2, 1), 8, 8, 1, 2, 1, 2, 1, 2, P::scatter_taps},
        Case{"s2_7x7_c3", "Abcdefg", square_shape(1, 12, 3, 16, 7, 2, 3), 3, 8, 1, 1, 1, 1, 1, 2, P::scatter_taps},
        Case{"s2_3x3_pad0", "aBcdefg", square_shape(1, 8, 8, 8, 3, 2, 0), 8, 8, 1, 1, 1, 1, 1, 2, P::scatter_taps},
        // R <= stride: rows and columns of distinct iterations never meet, so d..g may run in
        // parallel (grad_input is then zeroed by a loop of its own).
        Case{"s2_2x2_parallel", "abcDEFG", square_shape(1, 8, 8, 8, 2, 2, 0), 8, 8, 1, 1, 1, 1, 1, 4, P::scatter_taps},
        Case{"s3_3x3_parallel", "abcDGef", square_shape(2, 9, 8, 8, 3, 3, 1), 8, 8, 1, 1, 1, 1, 1, 3, P::scatter_taps}),
    [](const ::testing::TestParamInfo<Case>& p) { return p.param.name; });

// bf16: the three paths, chunks, column blocks and rows per GEMM, per-chunk and up-front transposes.
INSTANTIATE_TEST_SUITE_P(
    Bf16, ConvBwdCases,
    ::testing::Values(
        bf16(Case{"same3x3", "Abcdefg", square_shape(2, 6, 16, 16, 3, 1, 1), 8, 8}),
        bf16(Case{"pointwise", "Abcdefg", square_shape(2, 5, 16, 24, 1, 1, 0), 8, 8}),
        bf16(Case{"valid3x3_rims", "Abcdefg", square_shape(1, 7, 8, 8, 3, 1, 0), 8, 8}),
        bf16(Case{"same7x7_edge_columns", "Abcdefg", square_shape(1, 9, 8, 8, 7, 1, 3), 8, 8}),
        bf16(Case{"channel_remainders", "Abcdefg", square_shape(2, 5, 10, 13, 3, 1, 1), 4, 8}),
        bf16(Case{"first_layer_c3", "Abcdefg", square_shape(1, 6, 3, 16, 3, 1, 1), 4, 8}),
        bf16(Case{"h_in_gemm_remainder", "Abcdefg", square_shape(2, 7, 8, 8, 3, 1, 1), 8, 8, 1, 1, 1, 1, 3}),
        bf16(Case{"k_block_remainder", "Abcdefg", square_shape(1, 5, 8, 40, 3, 1, 1), 8, 8, 1, 1, 1, 2}),
        bf16(Case{"w_block_grid", "A{R:2}B{C:2}cdefg", square_shape(2, 5, 16, 8, 3, 1, 1), 8, 8, 1, 2, 1, 1, 1, 4}),
        bf16(Case{"rows_outside_chunks", "Adbcefg", square_shape(2, 5, 16, 24, 3, 1, 1), 8, 8, 1, 1, 1, 2, 1, 2}),
        bf16(Case{"s2_1x1", "Abcdefg", square_shape(2, 7, 16, 16, 1, 2, 0), 8, 8, 1, 1, 1, 1, 1, 2, P::scatter_1x1}),
        bf16(Case{"s2_1x1_rows", "abcDefg", square_shape(1, 14, 16, 24, 1, 2, 0), 8, 8, 1, 1, 1, 3, 3, 2,
                  P::scatter_1x1}),
        bf16(Case{"s2_3x3", "Abcdefg", square_shape(2, 7, 16, 16, 3, 2, 1), 8, 8, 1, 1, 1, 2, 1, 2, P::scatter_taps}),
        bf16(Case{"s2_7x7_c3", "Abcdefg", square_shape(1, 12, 3, 16, 7, 2, 3), 4, 8, 1, 1, 1, 1, 1, 2, P::scatter_taps})),
    [](const ::testing::TestParamInfo<Case>& p) { return p.param.name; });

// plain_grad_input: grad_input in NCHW, each call's rows moved out of a per-thread scratch (from
// garbage, every pixel written). The gather's GEMMs along rows and over several rows, channel and
// column remainders (the transposes of the last C block and column block), edge columns (computed
// along the rows), rows and grids in parallel, per-chunk and up-front transposes, bf16.
INSTANTIATE_TEST_SUITE_P(
    PlainGradInput, ConvBwdCases,
    ::testing::Values(
        plain(Case{"same3x3", "Abcdefg", square_shape(2, 6, 16, 16, 3, 1, 1), 8, 8}),
        plain(Case{"pointwise_rows", "Abcdefg", square_shape(2, 5, 16, 24, 1, 1, 0), 8, 8, 1, 1, 1, 1, 5}),
        plain(Case{"edge_columns_7x7", "Abcdefg", square_shape(1, 9, 8, 8, 7, 1, 3), 8, 8}),
        plain(Case{"channel_remainders", "Abcdefg", square_shape(2, 5, 10, 13, 3, 1, 1), 4, 8}),
        plain(Case{"w_block_remainder_parallel", "abcdEfg", square_shape(1, 7, 12, 8, 3, 1, 1), 8, 8, 1, 3, 1, 1, 1, 3}),
        plain(Case{"h_in_gemm_remainder", "Abcdefg", square_shape(2, 7, 8, 8, 3, 1, 1), 8, 8, 1, 1, 1, 1, 3}),
        plain(Case{"grid", "A{R:2}B{C:2}cdefg", square_shape(2, 5, 16, 8, 3, 1, 1), 8, 8, 1, 1, 1, 1, 1, 4}),
        plain(Case{"rows_outside_chunks", "Adbcefg", square_shape(2, 5, 16, 24, 3, 1, 1), 8, 8, 1, 1, 1, 1, 1, 2}),
        plain(bf16(Case{"bf16_same3x3", "Abcdefg", square_shape(2, 6, 16, 16, 3, 1, 1), 8, 8})),
        plain(bf16(Case{"bf16_channel_remainders_rows", "Abcdefg", square_shape(2, 7, 10, 13, 3, 1, 1), 4, 8, 1, 1, 1, 1,
                        3}))),
    [](const ::testing::TestParamInfo<Case>& p) { return p.param.name; });

TEST(ConvBwd, PlainGradInputIsNchwAndPaysForPointwiseFilters) {
  ConvBwdConfig config = config_of(plain(Case{"", "Abcdefg", square_shape(2, 6, 10, 16, 3, 1, 1), 4, 8, 1, 1, 1, 1, 2}));
  const ConvBwd bwd(config);
  EXPECT_TRUE(weft::samples::test::is_nchw(bwd.grad_input_layout(), 2, 10, 6, 6));
  // Two rows of 6 + 2 rims, bc 4, per thread, beside the per-chunk tiles.
  const ConvBwd blocked([&] { ConvBwdConfig c = config; c.plain_grad_input = false; return c; }());
  EXPECT_EQ(bwd.run_memory_bytes(3), blocked.run_memory_bytes(3) + 3 * (2 * 8 * 4 * sizeof(float)));
  EXPECT_FALSE(ConvBwd::plain_grad_input_pays(config));  // 3x3: the GEMMs lose what the transposes save
  config.shape = square_shape(2, 56, 16, 32, 1, 1, 0);
  config.h_in_gemm = 1;
  EXPECT_TRUE(ConvBwd::plain_grad_input_pays(config));
  config.k_block = 2;
  EXPECT_FALSE(ConvBwd::plain_grad_input_pays(config));  // two calls sum into a block
  config.k_block = 1;
  config.shape = square_shape(1, 8, 8, 8, 1, 2, 0);
  EXPECT_FALSE(ConvBwd::plain_grad_input_pays(config));  // stride 2: a scatter
  config.shape = square_shape(1, 6, 8, 8, 1, 1, 0);
  config.h_in_gemm = 9;  // refused by the constructor
  EXPECT_FALSE(ConvBwd::plain_grad_input_pays(config));
}

TEST(ConvBwd, Bf16NeedsEvenChannelBlocks) {
  EXPECT_THROW(ConvBwd(config_of(bf16({"odd_bk", "Abcdefg", square_shape(1, 5, 8, 8, 3, 1, 1), 8, 5}))), weft::Error);
  EXPECT_THROW(ConvBwd(config_of(bf16({"odd_bc", "Abcdefg", square_shape(1, 5, 8, 8, 3, 1, 1), 3, 8}))), weft::Error);
}

// avoid_rim_fmas in the gather: the taps of a GEMM whose grad_output pixels are rims for all its
// pixels are left out (filter rows; with one row per GEMM also filter columns, the edge columns
// being GEMMs down the image), so the rims are never read. NaN there shows it; with two rows per
// GEMM the edge columns' taps read them (the half that shows the test can fail). Column blocks,
// K chunks with a shorter last one, rows in parallel, run() and run_transposed() go through the
// same batches.
TEST(ConvBwd, GatherWithOneRowPerGemmSkipsTheTapsOnRims) {
  struct Variant {
    std::string loops;
    std::int64_t w_block, k_block, h_in_gemm;
  };
  for (const ConvShape& shape : {square_shape(1, 7, 8, 8, 3, 1, 1), square_shape(2, 9, 8, 16, 3, 1, 0),
                                 square_shape(1, 9, 8, 8, 7, 1, 3), square_shape(1, 6, 8, 40, 5, 1, 2),
                                 square_shape(1, 2, 8, 8, 3, 1, 1), square_shape(1, 14, 8, 8, 3, 1, 1)}) {
    const bool rows_fit = shape.S == 2 * shape.pad_w + 1;  // several rows per GEMM: 'same' convolutions
    for (const Variant& v : {Variant{"Abcdefg", 1, 1, 1}, Variant{"abcDefg", 3, 1, 1},
                             Variant{"aDbcefg", 1, 2, 1}, Variant{"Abcdefg", 1, 1, 2}}) {
      if ((v.h_in_gemm > 1 && !rows_fit) || v.w_block > shape.W || v.k_block * 8 > shape.K) continue;
      const std::string what = std::to_string(shape.H) + "x" + std::to_string(shape.R) + " pad " +
                               std::to_string(shape.pad_h) + ", " + v.loops + " w_block " + std::to_string(v.w_block) +
                               " k_block " + std::to_string(v.k_block) + " h_in_gemm " + std::to_string(v.h_in_gemm);
      const ConvBwd bwd(config_of({"rims", v.loops, shape, 8, 8, 1, v.w_block, 1, v.k_block, v.h_in_gemm}));
      const std::vector<float> grad_output = random_floats(shape.N * shape.K * shape.ofh() * shape.ofw(), 41);
      const std::vector<float> filter = random_floats(shape.K * shape.C * shape.R * shape.S, 42);
      std::vector<float> grad_output_blocked = nchw_to_blocked(grad_output.data(), bwd.grad_output_layout());
      fill_rims(grad_output_blocked, bwd.grad_output_layout(), std::numeric_limits<float>::quiet_NaN());
      const std::vector<float> filter_blocked = kcrs_to_blocked(filter.data(), bwd.filter_layout());
      std::vector<float> grad_input(static_cast<std::size_t>(bwd.grad_input_layout().size()), 555.0f);
      bwd.run(filter_blocked.data(), grad_output_blocked.data(), grad_input.data());
      std::vector<float> reference(static_cast<std::size_t>(shape.N * shape.C * shape.H * shape.W));
      conv_bwd_data_reference(shape, grad_output.data(), filter.data(), reference.data());
      const std::vector<float> result = image_of(grad_input, bwd);
      const ErrorNorms e = compare(result.data(), reference.data(), static_cast<std::int64_t>(reference.size()));
      if (v.h_in_gemm == 1) {
        EXPECT_TRUE(e.passed(sum_tolerance(bwd.reduction_terms()))) << what << ": " << e.to_string();
      } else {
        EXPECT_GT(e.non_finite, 0) << what << ": two rows per GEMM read the rim columns";
      }
    }
  }
}

TEST(ConvBwd, GradOutputRimsAreTheFullCorrelationsBorder) {
  ConvBwdConfig c;
  c.shape = square_shape(1, 8, 8, 8, 3, 1, 0);
  c.bc = c.bk = 8;
  EXPECT_EQ(ConvBwd(c).grad_output_layout().pad_h, 2);  // valid 3x3: R - 1 - pad
  c.shape = square_shape(1, 8, 8, 8, 3, 1, 1);
  EXPECT_EQ(ConvBwd(c).grad_output_layout().pad_w, 1);  // same: PARLOOPER's pad_out = pad
  c.shape = square_shape(1, 8, 8, 8, 3, 1, 3);
  EXPECT_EQ(ConvBwd(c).grad_output_layout().pad_h, 0);  // pad > R - 1: reads start inside
  c.shape = square_shape(1, 8, 8, 8, 3, 2, 1);
  const ConvBwd strided(c);
  EXPECT_EQ(strided.grad_output_layout().pad_h, 0);  // the scatter reads real pixels only
  EXPECT_EQ(strided.grad_input_layout().pad_h, 1);   // the forward input's layout
  EXPECT_EQ(strided.grad_input_layout().h, 8);
  EXPECT_EQ(strided.grad_output_layout().h, 4);
}

TEST(ConvBwd, TransposesPerChunkWhenChunksAreOutsideThePixels) {
  ConvBwdConfig c;
  c.shape = square_shape(1, 8, 8, 8, 3, 1, 1);
  c.bc = c.bk = 8;
  for (const char* s : {"Abcdefg", "ABcdefg", "bcadefg", "A{R:2}B{C:2}cdefg", "acbdGef"}) {
    c.loop_string = s;
    EXPECT_TRUE(ConvBwd(c).transposes_per_chunk()) << s;
  }
  for (const char* s : {"Adbcefg", "Afgbdced", "abdcefg", "Abcdefgb"}) {
    c.loop_string = s;
    EXPECT_FALSE(ConvBwd(c).transposes_per_chunk()) << s;
  }
}

// Tile (kb, cb, r, s) of the filter, transposed, at the layout's offset: element (ic, ik) at
// + ik * bc + ic. Channel remainders (C = 5, K = 7) and blocks bc != bk catch a swapped index.
TEST(ConvBwd, TransposedFilterLayoutHoldsTheTilesTransposed) {
  ConvBwdConfig c;
  c.loop_string = "Adbcefg";
  c.shape = square_shape(1, 6, 5, 7, 3, 1, 1);
  c.bc = 2, c.bk = 4;
  const ConvBwd bwd(c);
  const FilterLayout f = bwd.filter_layout();
  const TransposedFilterLayout t = bwd.transposed_filter_layout();
  ASSERT_EQ(t.size(), f.size());
  std::vector<float> filter(static_cast<std::size_t>(f.size()));
  for (std::size_t i = 0; i < filter.size(); ++i) filter[i] = static_cast<float>(i);
  std::vector<float> transposed(filter.size(), -1.0f);
  omp_set_num_threads(2);
  bwd.transpose_filter(filter.data(), transposed.data());
  std::int64_t wrong = 0;
  for (std::int64_t kb = 0; kb < f.k.blocks(); ++kb)
    for (std::int64_t cb = 0; cb < f.c.blocks(); ++cb)
      for (std::int64_t r = 0; r < 3; ++r)
        for (std::int64_t s = 0; s < 3; ++s)
          for (std::int64_t ic = 0; ic < c.bc; ++ic)
            for (std::int64_t ik = 0; ik < c.bk; ++ik)
              wrong += transposed[static_cast<std::size_t>(t.offset(kb, cb, r, s) + ik * c.bc + ic)] !=
                       filter[static_cast<std::size_t>(f.offset(kb, cb, r, s) + ic * c.bk + ik)];
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(t.offset(1, 0, 0, 0), c.bc * c.bk);  // the K blocks of a tap are neighbours
}

// run_transposed() reads the filter as given: handed the untransposed one, it is wrong (the
// comparison in run_case can fail).
TEST(ConvBwd, RunTransposedOnTheUntransposedFilterIsWrong) {
  ConvBwdConfig c;
  c.shape = square_shape(1, 5, 8, 8, 3, 1, 1);
  c.bc = c.bk = 8;
  const ConvBwd bwd(c);
  const ConvShape& s = c.shape;
  const std::vector<float> grad_output = random_floats(s.N * s.K * s.ofh() * s.ofw(), 41);
  const std::vector<float> filter = random_floats(s.K * s.C * s.R * s.S, 42);
  const std::vector<float> go = nchw_to_blocked(grad_output.data(), bwd.grad_output_layout());
  const std::vector<float> w = kcrs_to_blocked(filter.data(), bwd.filter_layout());
  std::vector<float> gi(static_cast<std::size_t>(bwd.grad_input_layout().size()));
  bwd.run_transposed(w.data(), go.data(), gi.data());
  std::vector<float> reference(static_cast<std::size_t>(s.N * s.C * s.H * s.W));
  conv_bwd_data_reference(s, grad_output.data(), filter.data(), reference.data());
  const std::vector<float> result = image_of(gi, bwd);
  EXPECT_FALSE(compare(result.data(), reference.data(), static_cast<std::int64_t>(result.size()))
                   .passed(sum_tolerance(bwd.reduction_terms())));
}

TEST(ConvBwd, MeasureTagIsParloopers) {
  ConvBwdConfig c;
  c.loop_string = "Afgbdced";
  c.shape = square_shape(1, 8, 8, 8, 3, 1, 1);
  c.bc = c.bk = 8;
  c.h_block = 2, c.w_block = 1, c.c_block = 1, c.k_block = 1, c.h_in_gemm = 2;
  EXPECT_EQ(ConvBwd(c).measure_tag(4), "Afgbdced_hb=2_wb=1_cb=1_kb=1_hg=2_threads4");
  EXPECT_DOUBLE_EQ(ConvBwd(c).flops(), 2.0 * 8 * 8 * 9 * 8 * 8);
}

// The configuration of `loop_string` with one field changed, and what constructing it says.
std::string refusal(const std::string& loop_string, const ConvShape& s, void (*change)(ConvBwdConfig&)) {
  ConvBwdConfig c;
  c.loop_string = loop_string;
  c.shape = s;
  c.bc = c.bk = 8;
  change(c);
  try {
    ConvBwd bwd(c);
  } catch (const weft::Error& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(ConvBwd, RefusesWhatWouldRaceOrCannotBeDone) {
  const ConvShape same = square_shape(1, 6, 8, 32, 3, 1, 1), s2 = square_shape(1, 8, 8, 8, 3, 2, 1);
  const auto none = [](ConvBwdConfig&) {};
  // The reduction over K chunks in parallel.
  EXPECT_THAT(refusal("abCdefg", same, [](ConvBwdConfig& c) { c.k_block = 2; }),
              HasSubstr("loop 'c' is the reduction"));
  // Tap scatter: output rows, column blocks, filter rows / columns that meet in grad_input.
  EXPECT_THAT(refusal("abcDefg", s2, none), HasSubstr("loop 'd' (output rows) runs in parallel"));
  EXPECT_THAT(refusal("abcdEfg", s2, [](ConvBwdConfig& c) { c.w_block = 2; }), HasSubstr("loop 'e'"));
  EXPECT_THAT(refusal("abcdeFg", s2, none), HasSubstr("loop 'f' (filter rows)"));
  EXPECT_THAT(refusal("abcdefG", s2, none), HasSubstr("loop 'g'"));
  EXPECT_EQ(refusal("abcdEfg", s2, none), "(accepted)");  // one column block: nothing to meet
  EXPECT_EQ(refusal("ABcdefg", s2, none), "(accepted)");

  // h_in_gemm and the blocks.
  EXPECT_THAT(refusal("Abcdefg", same, [](ConvBwdConfig& c) { c.h_in_gemm = 7; }),
              HasSubstr("h_in_gemm must be at most the grad_input rows = 6"));
  EXPECT_THAT(refusal("Abcdefg", s2, [](ConvBwdConfig& c) { c.h_in_gemm = 2; }), HasSubstr("needs stride 1"));
  EXPECT_THAT(refusal("Abcdefg", same, [](ConvBwdConfig& c) { c.h_in_gemm = 2, c.w_block = 2; }),
              HasSubstr("needs w_block 1"));
  EXPECT_THAT(refusal("Abcdefg", square_shape(1, 6, 8, 8, 3, 1, 0), [](ConvBwdConfig& c) { c.h_in_gemm = 2; }),
              HasSubstr("as long as grad_input rows"));
  EXPECT_THAT(refusal("Abcdefg", same, [](ConvBwdConfig& c) { c.k_block = 5; }),
              HasSubstr("k_block must be at most the K blocks"));
  EXPECT_THAT(refusal("Abcdefg", same, [](ConvBwdConfig& c) { c.w_block = 7; }), HasSubstr("w_block must be at most"));
  EXPECT_THAT(refusal("Abcdefg", same, [](ConvBwdConfig& c) { c.h_in_gemm = 0; }),
              HasSubstr("h_in_gemm must be positive"));
  EXPECT_THAT(refusal("Abcddefg", same, [](ConvBwdConfig& c) { c.h_in_gemm = 2, c.h_block = 3; }),
              HasSubstr("h_block 3 must be a multiple of h_in_gemm 2"));
  EXPECT_THAT(refusal("Abcd[0,3,1]efg", same, none), HasSubstr("inline bounds of loop 'd'"));
  EXPECT_EQ(refusal("Abcd[,,,(2)]defg", same, none), "(accepted)");  // inline block sizes only
  EXPECT_THAT(refusal("Abcdef", same, none), HasSubstr("Abcdef"));  // a missing loop: the parser's caret
  EXPECT_THAT(refusal("Abcdefg", same, [](ConvBwdConfig& c) { c.bc = 0; }), HasSubstr("bc must be in"));
  // A plain grad_input is written by one call per block.
  EXPECT_THAT(refusal("Abcdefg", s2, [](ConvBwdConfig& c) { c.plain_grad_input = true; }),
              HasSubstr("plain_grad_input needs stride 1"));
  EXPECT_THAT(refusal("Abcdefg", same, [](ConvBwdConfig& c) { c.plain_grad_input = true, c.k_block = 2; }),
              HasSubstr("plain_grad_input needs k_block = 1 (got 2)"));
}

TEST(ConvBwd, RunRefusesNullBuffers) {
  ConvBwdConfig c;
  c.shape = square_shape(1, 4, 8, 8, 3, 1, 1);
  c.bc = c.bk = 8;
  const ConvBwd bwd(c);
  std::vector<float> buffer(4096);
  EXPECT_THAT([&] { bwd.run(nullptr, buffer.data(), buffer.data()); },
              ::testing::ThrowsMessage<weft::Error>(HasSubstr("ConvBwd::run: filter is null")));
  EXPECT_THAT([&] { bwd.run_transposed(buffer.data(), nullptr, buffer.data()); },
              ::testing::ThrowsMessage<weft::Error>(HasSubstr("ConvBwd::run_transposed: grad_output is null")));
  EXPECT_THAT([&] { bwd.transpose_filter(buffer.data(), nullptr); },
              ::testing::ThrowsMessage<weft::Error>(HasSubstr("ConvBwd::transpose_filter: transposed is null")));
}

// The command line, as weft-conv-bwd reads it.
ConvBwdConfig parsed(std::vector<std::string> words, std::size_t* n_iters_index = nullptr) {
  words.insert(words.begin(), "weft-conv-bwd");
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  SampleArgs args;
  ConvBwdConfig config;
  const std::size_t index = parse_conv_bwd_arguments(args, config, static_cast<int>(argv.size()), argv.data());
  if (n_iters_index != nullptr) *n_iters_index = index;
  return config;
}

TEST(ConvBwdArguments, TakesParloopersOrderAndDefaults) {
  std::size_t n_iters = 0;
  const ConvBwdConfig c = parsed({"Afgbdced", "2", "56", "56", "64", "64", "3", "3", "1", "1", "1", "1", "32", "32",
                                  "4", "2", "3", "2", "2", "7"},
                                 &n_iters);
  EXPECT_EQ(c.loop_string, "Afgbdced");
  EXPECT_EQ(c.shape.N, 2);
  EXPECT_EQ(c.shape.pad_w, 1);
  EXPECT_EQ(c.bk, 32);
  EXPECT_EQ(c.h_block, 4);
  EXPECT_EQ(c.w_block, 2);
  EXPECT_EQ(c.c_block, 3);
  EXPECT_EQ(c.k_block, 2);
  EXPECT_EQ(c.h_in_gemm, 2);
  EXPECT_EQ(n_iters, 19u);

  const ConvBwdConfig d = parsed({"Abcdefg", "1", "7", "7", "8", "8", "1", "1", "2", "2", "0", "0", "8", "8"});
  EXPECT_EQ(d.h_block, 1);
  EXPECT_EQ(d.w_block, 1);
  EXPECT_EQ(d.c_block, 1);
  EXPECT_EQ(d.k_block, 1);
  EXPECT_EQ(d.h_in_gemm, 1);
}

TEST(ConvBwdArguments, AutoTakesTheShapeOnlyAndExtraArgumentsAreRefused) {
  EXPECT_EQ(parsed({"auto", "1", "56", "56", "64", "64", "3", "3", "1", "1", "1", "1"}).shape.K, 64);
  EXPECT_THAT([] { parsed({"auto", "1", "56", "56", "64", "64", "3", "3", "1", "1", "1", "1", "10", "8"}); },
              ::testing::ThrowsMessage<weft::cli::UsageError>(HasSubstr("[n_iters]")));
  EXPECT_THAT([] {
    parsed({"Abcdefg", "1", "7", "7", "8", "8", "1", "1", "1", "1", "0", "0", "8", "8", "1", "1", "1", "1", "1", "10",
            "9"});
  },
              ::testing::ThrowsMessage<weft::cli::UsageError>(HasSubstr("unexpected argument '9'")));
  EXPECT_THAT([] { parsed({"Abcdefg", "1", "7", "7", "8", "8", "1", "1", "1", "1", "0", "0", "8", "8", "0"}); },
              ::testing::ThrowsMessage<weft::cli::UsageError>(HasSubstr("h_block")));
}

#ifdef WEFT_CONV_BWD_PATH
weft::test::ProgramResult run_program(const std::string& args) {
  return weft::test::run_program("'" WEFT_CONV_BWD_PATH "' " + args + " --threads 2 --warmup 0", "weft_conv_bwd");
}

// --pretransposed 1 times run_transposed(): the transpose on a line of its own, the same check.
TEST(ConvBwdProgram, PretransposedRunsOnTheFilterTransposedBefore) {
  for (const char* line : {"Abcdefg 2 8 8 8 16 3 3 1 1 1 1 8 8", "Afgbdced 1 8 8 16 8 3 3 2 2 1 1 8 8",
                           "Adbcefg 1 8 8 8 8 1 1 2 2 0 0 8 8"}) {
    const auto plain = run_program(std::string(line) + " 1 1 1 1 1 2");
    EXPECT_EQ(plain.status, 0) << line << "\n" << plain.err;
    EXPECT_THAT(plain.out, ::testing::Not(HasSubstr("filter transpose ("))) << line;
    const auto pre = run_program(std::string(line) + " 1 1 1 1 1 2 --pretransposed 1");
    EXPECT_EQ(pre.status, 0) << line << "\n" << pre.err;
    EXPECT_THAT(pre.out, HasSubstr("filter transposed before the runs")) << line;
    EXPECT_THAT(pre.out, HasSubstr("filter transpose (not timed with the kernel): blocked -> transposed")) << line;
    EXPECT_THAT(pre.out, HasSubstr("check: PASSED")) << line;
  }
  EXPECT_EQ(run_program("Abcdefg 1 8 8 8 8 3 3 1 1 1 1 8 8 --pretransposed 2").status, 2);
}

// USE_BF16=1: the three paths in bf16, checked, with "BF16" in the header and "_bf16" ending the
// tag; an odd bk is refused (exit status 2) before anything runs.
TEST(ConvBwdProgram, UseBf16RunsTheBf16Pass) {
  const auto bf16 = [](const std::string& args) {
    return weft::test::run_program("USE_BF16=1 '" WEFT_CONV_BWD_PATH "' " + args + " --threads 2 --warmup 0",
                                   "weft_conv_bwd_bf16");
  };
  for (const char* line : {"Abcdefg 2 8 8 8 16 3 3 1 1 1 1 8 8", "Afgbdced 1 8 8 16 8 3 3 2 2 1 1 8 8",
                           "Adbcefg 1 8 8 8 8 1 1 2 2 0 0 8 8"}) {
    for (const char* extra : {"", " --pretransposed 1"}) {
      const auto r = bf16(std::string(line) + extra);
      EXPECT_EQ(r.status, 0) << line << extra << "\n" << r.err;
      EXPECT_THAT(r.out, HasSubstr("weft-conv-bwd: BF16, ")) << line;
      EXPECT_THAT(r.out, HasSubstr("check: PASSED")) << line << extra << "\n" << r.out;
      EXPECT_THAT(r.out, HasSubstr("_threads2_bf16\n")) << line;
    }
  }
  const auto odd = bf16("Abcdefg 1 8 8 8 8 3 3 1 1 1 1 8 5");
  EXPECT_EQ(odd.status, 2);
  EXPECT_THAT(odd.err, HasSubstr("bk = 5 with bf16"));
}
#endif


// ---- The untuned choice from the machine model (conv_model.hpp) ----

using weft::samples::test::kAvx2Zen3;
using weft::samples::test::kLargeL2;
using weft::samples::test::kSmallL2;

ConvBwdConfig modeled(const ConvShape& shape, int threads, const ConvMachine& machine,
                      weft::jit::DataType dtype = weft::jit::DataType::f32) {
  ConvBwdConfig problem;
  problem.shape = shape;
  problem.dtype = dtype;
  return model_conv_bwd_config(problem, threads, machine);
}

TEST(ConvBwdModel, SmallImagesPutSeveralRowsIntoOneGemm) {
  // 1x1, stride 1, no padding: grad_input rows until about 64 columns.
  EXPECT_EQ(modeled(square_shape(1, 7, 2048, 512, 1, 1, 0), 1, kLargeL2).h_in_gemm, 7);
  EXPECT_EQ(modeled(square_shape(1, 14, 1024, 256, 1, 1, 0), 1, kLargeL2).h_in_gemm, 4);
  EXPECT_EQ(modeled(square_shape(1, 56, 64, 64, 1, 1, 0), 1, kLargeL2).h_in_gemm, 1);
  // Padding taps, or a stride (the scatter paths take one row): one row.
  EXPECT_EQ(modeled(square_shape(1, 7, 512, 512, 3, 1, 1), 1, kLargeL2).h_in_gemm, 1);
  // A strided 1x1 filter: grad_output rows shorter than 8 pixels (7x7 here) into one GEMM,
  // scattered from a scratch; longer rows (28 pixels) one per GEMM.
  EXPECT_EQ(modeled(square_shape(1, 14, 1024, 2048, 1, 2, 0), 1, kLargeL2).h_in_gemm, 7);
  EXPECT_EQ(modeled(square_shape(1, 56, 256, 512, 1, 2, 0), 1, kLargeL2).h_in_gemm, 1);
  EXPECT_EQ(modeled(square_shape(1, 14, 64, 64, 3, 2, 1), 1, kLargeL2).h_in_gemm, 1);  // taps: one row
}

TEST(ConvBwdModel, ChunksOfKKeepOneGemmsOperandsInAQuarterOfTheL2) {
  // 7x7, 512 -> 2048 forward: backward by data reduces over 32 K blocks of 64. Per K block,
  // filter 64 x 64 and grad_output 49 x 64 floats, 28.9 KB: a quarter of 512 KiB holds 4 (8
  // chunks), a quarter of 2 MiB 17 (2 chunks).
  const ConvShape deep = square_shape(1, 7, 512, 2048, 1, 1, 0);
  EXPECT_EQ(modeled(deep, 1, kSmallL2).k_block, 8);
  EXPECT_EQ(modeled(deep, 1, kLargeL2).k_block, 2);
  // 3x3 on 14x14, 256 -> 256: 147 KB of filter and 12 KB of grad_output per K block, 3 in a
  // quarter of 2 MiB: 4 blocks in 2 chunks.
  EXPECT_EQ(modeled(square_shape(1, 14, 256, 256, 3, 1, 1), 1, kLargeL2).k_block, 2);
  EXPECT_EQ(modeled(square_shape(1, 56, 64, 64, 3, 1, 1), 1, kSmallL2).k_block, 1);
  EXPECT_EQ(modeled(deep, 1, ConvMachine{.l2_bytes = 1024}).k_block, 32);
}

TEST(ConvBwdModel, BlocksFollowTheChannels) {
  const ConvBwdConfig odd = modeled(square_shape(1, 9, 40, 96, 3, 1, 1), 1, kSmallL2);
  EXPECT_EQ(odd.bc, 40);
  EXPECT_EQ(odd.bk, 64);
  // bf16: the backward filter's VNNI-2 pairs run along K, the forward's along C: both even.
  const ConvBwdConfig pairs = modeled(square_shape(1, 9, 3, 13, 3, 1, 1), 1, kSmallL2, weft::jit::DataType::bf16);
  EXPECT_EQ(pairs.bc, 4);
  EXPECT_EQ(pairs.bk, 14);
}

TEST(ConvBwdModel, TheInputChannelBlockIsOneRegisterRowPanel) {
  // Backward by data, C runs along the GEMM's rows: 32 with AVX2, 64 with AVX-512; K (the
  // reduction) keeps blocks of 64. Mirrors the forward pass.
  const ConvShape deep = square_shape(1, 14, 256, 1024, 1, 1, 0);
  EXPECT_EQ(modeled(deep, 1, kAvx2Zen3).bc, 32);
  EXPECT_EQ(modeled(deep, 1, kAvx2Zen3).bk, 64);
  EXPECT_EQ(modeled(deep, 1, kSmallL2).bc, 64);
  // bf16: the block stays even (the forward filter's VNNI-2 pairs).
  EXPECT_EQ(modeled(square_shape(1, 9, 3, 13, 3, 1, 1), 1, kAvx2Zen3, weft::jit::DataType::bf16).bc, 4);
  // The C blocks double, and with them the parallel loop's count: 8 C blocks of 32.
  EXPECT_EQ(modeled(square_shape(1, 14, 256, 256, 3, 1, 1), 2, kAvx2Zen3).loop_string, "acBdefg");
  EXPECT_EQ(modeled(square_shape(1, 14, 32, 256, 3, 1, 1), 2, kAvx2Zen3).loop_string, "acbDefg");  // 1 C block
}

TEST(ConvBwdModel, TheParallelLoopKeepsTheTeamBusy) {
  EXPECT_EQ(modeled(square_shape(2, 14, 256, 256, 3, 1, 1), 2, kSmallL2).loop_string, "Acbdefg");
  EXPECT_EQ(modeled(square_shape(1, 14, 256, 256, 3, 1, 1), 2, kSmallL2).loop_string, "acBdefg");  // 4 C blocks
  EXPECT_EQ(modeled(square_shape(1, 14, 64, 256, 3, 1, 1), 2, kSmallL2).loop_string, "acbDefg");   // 1 C block
  EXPECT_EQ(modeled(square_shape(3, 14, 64, 256, 3, 1, 1), 1, kSmallL2).loop_string, "Acbdefg");
}

// Every ResNet-50 layer and shapes outside it, on 1-3 threads, both L2 sizes and both row panels,
// fp32 and bf16: the sample takes the choice.
TEST(ConvBwdModel, TheSampleTakesEveryChoice) {
  const std::vector<ConvShape> shapes = weft::samples::test::model_test_shapes(WEFT_RESNET50_LAYERS);
  for (const ConvShape& shape : shapes)
    for (int threads : {1, 2, 3})
      for (const ConvMachine& machine : {kSmallL2, kLargeL2, kAvx2Zen3})
        for (const auto dtype : {weft::jit::DataType::f32, weft::jit::DataType::bf16}) {
          const ConvBwdConfig c = modeled(shape, threads, machine, dtype);
          EXPECT_NO_THROW(ConvBwd::check(c)) << c.loop_string << " on " << shape.H << "x" << shape.W << " "
                                             << shape.C << " -> " << shape.K << ", " << threads << " threads";
        }
}

// The choices compute the gradient: rows per GEMM with K in chunks and C blocks in parallel, rows
// in parallel, images in parallel on a strided (scatter) shape.
TEST(ConvBwdModel, ChoicesMatchTheReference) {
  const ConvMachine tiny{.l2_bytes = 96 << 10};  // chunks of a few K blocks on these small shapes
  for (const auto& [shape, threads] : std::vector<std::pair<ConvShape, int>>{
           {square_shape(1, 7, 128, 200, 1, 1, 0), 2},    // rows per GEMM, K chunks, C blocks in parallel
           {square_shape(1, 9, 24, 136, 3, 1, 1), 2},     // rows in parallel, K chunks
           {square_shape(2, 11, 80, 72, 3, 2, 1), 2}}) {  // images in parallel, scatter
    const ConvBwdConfig c = modeled(shape, threads, tiny);
    EXPECT_GT(c.k_block, 1) << c.loop_string;
    const ConvBwd bwd(c);
    const Outcome o = run_case(bwd, threads);
    EXPECT_TRUE(o.norms.passed(o.tolerance)) << c.loop_string << ": " << o.norms.to_string();
  }
}

}  // namespace
