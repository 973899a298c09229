// The forward convolution sample (samples/conv/conv_fwd.hpp) against the double-precision
// reference on small shapes: strides, paddings (physical, logical, logical with an input copy),
// filters 1x1 to 7x7, a C = 3 first layer, remainders of every blocking, packing, several rows per
// GEMM, bias and ReLU, the output rims, collapse and grid strings on 1-4 threads; and every refusal.
// Then the untuned machine model's choices (conv_model.hpp).
#include <weft/ops/conv_fwd.hpp>

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <weft/jit/cpu.hpp>
#include <weft/jit/error.hpp>
#include <weft/jit/isa_traits.hpp>
#include <weft/ops/verification.hpp>

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
using weft::ops::blocked_bias;
using weft::ops::blocked_to_nchw;
using weft::ops::compare;
using weft::ops::conv_fwd_reference;
using weft::ops::ConvFwd;
using weft::ops::ConvFwdConfig;
using weft::ops::ConvMachine;
using weft::ops::ConvShape;
using weft::ops::ErrorNorms;
using weft::ops::filter_to_vnni2;
using weft::ops::kcrs_to_blocked;
using weft::ops::model_conv_fwd_config;
using weft::ops::nchw_to_blocked;
using weft::ops::nonzero_rim_elements;
using weft::ops::round_to_bf16;
using weft::ops::sum_tolerance;
using weft::ops::to_bf16;
using weft::ops::to_floats;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

struct Case {
  std::string name = "";
  std::string loops = "Abcdefg";
  ConvShape shape;
  std::int64_t bc = 4, bk = 4;
  std::int64_t h_block = 1, w_block = 1, c_block = 1, k_block = 1, h_in_gemm = 1;
  bool pack = false, logical = false, copy = false, rims = false, bias = false, relu = false, plain = false;
  int threads = 1;
  bool bf16 = false;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

ConvFwdConfig config_of(const Case& c) {
  ConvFwdConfig config;
  config.loop_string = c.loops;
  config.shape = c.shape;
  config.bc = c.bc, config.bk = c.bk;
  config.h_block = c.h_block, config.w_block = c.w_block, config.c_block = c.c_block, config.k_block = c.k_block;
  config.h_in_gemm = c.h_in_gemm;
  config.pack_input = c.pack, config.logical_padding = c.logical, config.input_padding_copy = c.copy;
  config.zero_output_rims = c.rims, config.with_bias = c.bias, config.with_relu = c.relu;
  config.plain_output = c.plain;
  if (c.bf16) config.dtype = weft::jit::DataType::bf16;
  return config;
}



struct Outcome {
  ErrorNorms norms;
  std::int64_t nonzero_rims = 0;
  // Rim elements that differ from what the output held before the run (h_in_gemm > 1 writes the
  // left and right rims of the rows its GEMMs span: then only the rows above and below count).
  std::int64_t changed_rims = 0;
  bool guard_intact = true;  // the floats past the output's end
};

constexpr float kGarbage = 777.0f;

std::int64_t changed_rim_elements(const std::vector<float>& output, const ActivationLayout& l, bool rows_only) {
  std::int64_t changed = 0;
  for (std::int64_t n = 0; n < l.images; ++n)
    for (std::int64_t cb = 0; cb < l.channels.blocks(); ++cb)
      for (std::int64_t y = 0; y < l.padded_h(); ++y)
        for (std::int64_t x = 0; x < l.padded_w(); ++x) {
          const bool rim_row = y < l.pad_h || y >= l.pad_h + l.h, rim_col = x < l.pad_w || x >= l.pad_w + l.w;
          if (!rim_row && (rows_only || !rim_col)) continue;
          for (std::int64_t i = 0; i < l.channels.block; ++i)
            changed += output[static_cast<std::size_t>(l.offset(n, cb, y, x) + i)] != kGarbage;
        }
  return changed;
}

// Runs the sample twice on random inputs (into an output full of garbage) and compares it with the
// reference; counts the output's nonzero rim elements. In bf16 the inputs are rounded to bf16 first,
// so that the reference computes on what the run reads.
Outcome run_against_reference(const ConvFwdConfig& config, int threads) {
  omp_set_num_threads(threads);
  const ConvFwd conv(config);
  const ConvShape& s = config.shape;
  std::vector<float> input = random_floats(s.N * s.C * s.H * s.W, 21);
  std::vector<float> filter = random_floats(s.K * s.C * s.R * s.S, 22);
  std::vector<float> bias = random_floats(s.K, 23);
  if (config.bf16()) {
    for (std::vector<float>* v : {&input, &filter, &bias}) round_to_bf16(*v);
  }
  const std::vector<float> input_blocked = nchw_to_blocked(input.data(), conv.input_layout());
  const std::vector<float> filter_blocked = kcrs_to_blocked(filter.data(), conv.filter_layout());
  const std::vector<float> bias_blocked = blocked_bias(bias.data(), config.k_blocking());
  // Garbage in the output, and a guard past its end: nothing may read the one or write the other.
  constexpr std::int64_t guard = 4096;
  const auto elements = static_cast<std::size_t>(conv.output_layout().size() + guard);
  std::vector<float> output(elements, kGarbage);
  bool guard_intact = true;
  if (config.bf16()) {
    const std::vector<weft::jit::bfloat16> in = to_bf16(input_blocked), f = filter_to_vnni2(filter_blocked, conv.filter_layout()),
                                           b = to_bf16(bias_blocked);
    std::vector<weft::jit::bfloat16> out = to_bf16(output);
    conv.run(in.data(), f.data(), b.data(), out.data());
    conv.run(in.data(), f.data(), b.data(), out.data());
    const std::uint16_t garbage = weft::jit::to_bfloat16(kGarbage).bits;
    guard_intact = std::all_of(out.end() - guard, out.end(), [&](weft::jit::bfloat16 v) { return v.bits == garbage; });
    // As floats; the garbage as the float it stands for, for the rim counts below.
    output = to_floats(out.data(), static_cast<std::int64_t>(out.size()));
    for (float& v : output) v = v == weft::jit::to_float(weft::jit::bfloat16{garbage}) ? kGarbage : v;
  } else {
    conv.run(input_blocked.data(), filter_blocked.data(), bias_blocked.data(), output.data());
    conv.run(input_blocked.data(), filter_blocked.data(), bias_blocked.data(), output.data());
    guard_intact = std::all_of(output.end() - guard, output.end(), [](float v) { return v == kGarbage; });
  }

  std::vector<float> result(static_cast<std::size_t>(s.N * s.K * s.ofh() * s.ofw())), ref(result.size());
  blocked_to_nchw(output.data(), result.data(), conv.output_layout());
  conv_fwd_reference(s, input.data(), filter.data(), config.with_bias ? bias.data() : nullptr, config.with_relu,
                     ref.data());
  return {compare(result.data(), ref.data(), static_cast<std::int64_t>(ref.size())),
          nonzero_rim_elements(output.data(), conv.output_layout()),
          changed_rim_elements(output, conv.output_layout(), config.h_in_gemm > 1), guard_intact};
}

class ConvFwdCases : public ::testing::TestWithParam<Case> {};

TEST_P(ConvFwdCases, MatchesReference) {
  const Case& c = GetParam();
  const ConvFwdConfig config = config_of(c);
  const Outcome outcome = run_against_reference(config, c.threads);
  EXPECT_TRUE(outcome.norms.passed(ConvFwd(config).tolerance())) << outcome.norms.to_string();
  if (c.bf16) {
    // Not the f32 tolerance: the rounding to bf16 is there to see.
    EXPECT_GT(outcome.norms.l2_rel_error, sum_tolerance(c.shape.C * c.shape.R * c.shape.S + 1));
  }
  if (c.rims) {
    EXPECT_EQ(outcome.nonzero_rims, 0);
  } else {
    EXPECT_EQ(outcome.changed_rims, 0);
  }
  EXPECT_TRUE(outcome.guard_intact);
}

// A 3x3 stride 1 pad 1 layer of 2 images, 8 -> 8 channels in blocks of 4, 6 x 6 pixels.
const ConvShape k3x3 = square_shape(2, 6, 8, 8, 3, 1, 1);

INSTANTIATE_TEST_SUITE_P(
    Physical, ConvFwdCases,
    ::testing::Values(
        Case{.name = "s1p1_3x3", .shape = k3x3, .threads = 2},
        Case{.name = "s2p1_3x3", .loops = "Afgbdced", .shape = square_shape(1, 9, 8, 8, 3, 2, 1)},
        Case{.name = "s1p0_3x3", .shape = square_shape(1, 7, 8, 4, 3, 1, 0)},
        Case{.name = "s1p3_3x3", .shape = square_shape(1, 4, 4, 4, 3, 1, 3)},
        Case{.name = "s1p0_1x1", .loops = "Afgbcecd", .shape = square_shape(2, 5, 8, 12, 1, 1, 0), .k_block = 2},
        Case{.name = "s2p0_1x1", .loops = "Afgbdced", .shape = square_shape(1, 8, 8, 8, 1, 2, 0)},
        Case{.name = "s2p1_1x1", .shape = square_shape(1, 7, 4, 4, 1, 2, 1)},
        Case{.name = "first_layer_7x7_s2p3_c3", .loops = "Afgbdced", .shape = square_shape(1, 16, 3, 8, 7, 2, 3), .bc = 3,
             .bk = 8, .threads = 2},
        Case{.name = "channel_remainders", .shape = square_shape(1, 5, 5, 6, 3, 1, 1)},
        Case{.name = "rectangular", .shape = {.N = 1, .H = 6, .W = 9, .C = 4, .K = 4, .R = 3, .S = 5, .stride_h = 2,
                                              .stride_w = 1, .pad_h = 1, .pad_w = 2}},
        Case{.name = "w_block_remainder", .shape = square_shape(1, 7, 4, 4, 3, 1, 1), .w_block = 3},
        Case{.name = "w_block_even_split", .loops = "Afgbdced", .shape = square_shape(1, 7, 4, 4, 3, 1, 1), .w_block = 2},
        Case{.name = "c_block_remainder", .loops = "Afgbdced", .shape = square_shape(1, 5, 12, 4, 3, 1, 1), .c_block = 2},
        Case{.name = "c_block_1x1", .shape = square_shape(1, 4, 12, 4, 1, 1, 0), .c_block = 3},
        Case{.name = "k_block_remainder", .loops = "Afgbcdce", .shape = square_shape(1, 5, 4, 12, 3, 1, 1), .k_block = 2},
        Case{.name = "h_block_remainder", .loops = "Afgbdced", .shape = square_shape(1, 7, 4, 4, 3, 1, 1), .h_block = 3},
        Case{.name = "h_in_gemm", .loops = "Afgbdced", .shape = square_shape(1, 8, 4, 4, 3, 1, 1), .h_block = 4,
             .h_in_gemm = 2},
        Case{.name = "h_in_gemm_remainder", .shape = square_shape(1, 7, 8, 4, 3, 1, 1), .c_block = 2, .h_in_gemm = 3},
        Case{.name = "h_in_gemm_1x1", .shape = square_shape(2, 5, 4, 8, 1, 1, 0), .h_in_gemm = 5},
        Case{.name = "pack_input", .loops = "Afgbdced", .shape = square_shape(2, 8, 8, 8, 1, 2, 0), .pack = true,
             .threads = 2},
        Case{.name = "pack_input_h_in_gemm", .shape = square_shape(1, 14, 8, 4, 1, 2, 0), .h_in_gemm = 3, .pack = true},
        Case{.name = "pack_input_padded", .shape = square_shape(1, 7, 4, 4, 1, 2, 1), .pack = true},
        Case{.name = "bias_relu", .shape = k3x3, .c_block = 2, .bias = true, .relu = true},
        Case{.name = "bias_relu_1x1", .shape = square_shape(1, 4, 8, 8, 1, 1, 0), .bias = true, .relu = true},
        Case{.name = "zero_rims", .shape = k3x3, .c_block = 2, .rims = true, .relu = true},
        Case{.name = "zero_rims_parallel_columns", .loops = "abcdEfg", .shape = k3x3, .w_block = 3, .rims = true,
             .threads = 3},
        Case{.name = "zero_rims_h_in_gemm", .shape = square_shape(1, 7, 4, 4, 3, 1, 1), .h_in_gemm = 3, .rims = true},
        Case{.name = "zero_rims_7x7", .shape = square_shape(1, 9, 3, 4, 7, 2, 3), .bc = 3, .w_block = 2, .rims = true},
        Case{.name = "collapse", .loops = "ACDbefg", .shape = k3x3, .threads = 4},
        Case{.name = "collapse_blocked", .loops = "ACDEbfgcd", .shape = square_shape(2, 6, 8, 12, 3, 1, 1), .h_block = 2,
             .w_block = 2, .k_block = 2, .threads = 3},
        Case{.name = "grid", .loops = "A{R:2}C{C:2}bdefg", .shape = k3x3, .c_block = 2, .threads = 4},
        Case{.name = "grid_rows_columns", .loops = "A{C:2}D{R:2}fgbce", .shape = k3x3, .relu = true, .threads = 4},
        Case{.name = "reduction_outside_run", .loops = "bfgACDe", .shape = k3x3, .c_block = 2, .threads = 3},
        Case{.name = "resnet_string", .loops = "A{C:2}C{R:2}fgbcde", .shape = square_shape(2, 7, 8, 8, 3, 1, 1),
             .threads = 4}),
    [](const auto& test) { return test.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Logical, ConvFwdCases,
    ::testing::Values(
        Case{.name = "s1p1_3x3", .shape = k3x3, .logical = true, .threads = 2},
        Case{.name = "s2p1_3x3", .loops = "Afgbdced", .shape = square_shape(1, 9, 8, 8, 3, 2, 1), .logical = true},
        Case{.name = "s2p1_3x3_even", .shape = square_shape(1, 8, 4, 4, 3, 2, 1), .logical = true, .bias = true},
        Case{.name = "s1p3_3x3_rows_without_taps", .shape = square_shape(1, 4, 4, 4, 3, 1, 3), .logical = true,
             .bias = true, .relu = true},
        Case{.name = "s1p2_5x5_w_block", .shape = square_shape(1, 7, 4, 4, 5, 1, 2), .w_block = 2, .logical = true,
             .relu = true},
        Case{.name = "first_layer_7x7_s2p3_c3", .loops = "Afgbdced", .shape = square_shape(1, 16, 3, 8, 7, 2, 3), .bc = 3,
             .bk = 8, .logical = true, .bias = true, .relu = true, .threads = 2},
        Case{.name = "s1p1_1x1", .shape = square_shape(1, 5, 4, 4, 1, 1, 1), .logical = true, .bias = true},
        Case{.name = "rectangular", .shape = {.N = 1, .H = 6, .W = 9, .C = 5, .K = 6, .R = 3, .S = 5, .stride_h = 2,
                                              .stride_w = 3, .pad_h = 1, .pad_w = 2},
             .logical = true, .relu = true},
        Case{.name = "c_block_remainder", .loops = "Afgbdced", .shape = square_shape(1, 5, 12, 4, 3, 1, 1), .c_block = 2,
             .logical = true, .bias = true},
        Case{.name = "taps_outer", .loops = "fgAbcde", .shape = k3x3, .logical = true, .relu = true, .threads = 2},
        Case{.name = "unpadded", .shape = square_shape(1, 6, 4, 4, 1, 1, 0), .h_in_gemm = 2, .logical = true},
        Case{.name = "input_copy", .loops = "Afgbdced", .shape = k3x3, .logical = true, .copy = true, .bias = true,
             .threads = 2},
        Case{.name = "input_copy_7x7", .shape = square_shape(1, 16, 3, 8, 7, 2, 3), .bc = 3, .bk = 8, .logical = true,
             .copy = true, .relu = true},
        Case{.name = "grid", .loops = "A{R:2}C{C:2}bdefg", .shape = k3x3, .logical = true, .bias = true,
             .threads = 4}),
    [](const auto& test) { return test.param.name; });

// bf16 (USE_BF16): bf16 tensors, VNNI-2 filter tiles, fp32 accumulation, the output rounded per C
// chunk. Both modes, every kind of GEMM (rows, rims skipped and edge columns down the image,
// several rows, strided 1x1, per tap), chunks, epilogues and rims, the packed input and the padded
// copy (bf16 copy TPPs).
INSTANTIATE_TEST_SUITE_P(
    Bf16, ConvFwdCases,
    ::testing::Values(
        Case{.name = "s1p1_3x3", .shape = k3x3, .threads = 2, .bf16 = true},
        Case{.name = "s2p1_3x3", .loops = "Afgbdced", .shape = square_shape(1, 9, 8, 8, 3, 2, 1), .bf16 = true},
        Case{.name = "s1p0_1x1_k_block", .loops = "Afgbcecd", .shape = square_shape(2, 5, 8, 12, 1, 1, 0), .k_block = 2,
             .bf16 = true},
        Case{.name = "s2p0_1x1", .loops = "Afgbdced", .shape = square_shape(1, 8, 8, 8, 1, 2, 0), .bf16 = true},
        Case{.name = "first_layer_7x7_s2p3_c3", .loops = "Afgbdced", .shape = square_shape(1, 16, 3, 8, 7, 2, 3), .bc = 4,
             .bk = 8, .threads = 2, .bf16 = true},
        Case{.name = "edge_columns_7x7_image", .shape = square_shape(1, 7, 8, 16, 3, 1, 1), .bk = 16, .bf16 = true},
        Case{.name = "channel_remainders", .shape = square_shape(1, 5, 6, 6, 3, 1, 1), .bf16 = true},
        Case{.name = "c_block", .loops = "Afgbdced", .shape = square_shape(1, 5, 12, 4, 3, 1, 1), .c_block = 3,
             .bias = true, .relu = true, .bf16 = true},
        Case{.name = "h_in_gemm", .shape = square_shape(1, 7, 8, 4, 3, 1, 1), .c_block = 2, .h_in_gemm = 3,
             .bf16 = true},
        Case{.name = "zero_rims", .loops = "abcdEfg", .shape = k3x3, .w_block = 3, .rims = true, .threads = 3,
             .bf16 = true},
        Case{.name = "logical_per_tap", .shape = square_shape(1, 8, 4, 4, 3, 2, 1), .logical = true, .bias = true,
             .relu = true, .bf16 = true},
        Case{.name = "grid", .loops = "A{R:2}C{C:2}bdefg", .shape = k3x3, .c_block = 2, .threads = 4, .bf16 = true},
        Case{.name = "pack_input", .loops = "Afgbdced", .shape = square_shape(2, 8, 8, 8, 1, 2, 0), .pack = true,
             .threads = 2, .bf16 = true},
        Case{.name = "input_copy", .loops = "Afgbdced", .shape = k3x3, .logical = true, .copy = true, .bias = true,
             .threads = 2, .bf16 = true}),
    [](const auto& test) { return test.param.name; });

// plain_output: the output in NCHW, each call's rows moved out of a per-thread scratch (the output
// starts as garbage and has a guard: every element written, nothing past it). Every GEMM kind the
// batch-reduce mode has (rows with their rims' taps skipped, several rows, strided and packed 1x1,
// the padded copy), remainders of K blocks (the transposes of the last block) and column blocks,
// edge columns (computed along the rows instead), epilogues, parallel rows, columns and grids.
INSTANTIATE_TEST_SUITE_P(
    PlainOutput, ConvFwdCases,
    ::testing::Values(
        Case{.name = "s1p1_3x3", .shape = k3x3, .plain = true, .threads = 2},
        Case{.name = "s2p1_3x3", .loops = "Afgbdced", .shape = square_shape(1, 9, 8, 8, 3, 2, 1), .plain = true},
        Case{.name = "edge_columns_7x7_image", .shape = square_shape(1, 7, 8, 16, 3, 1, 1), .bk = 16, .bias = true,
             .plain = true},
        Case{.name = "channel_remainders", .shape = square_shape(1, 5, 5, 6, 3, 1, 1), .relu = true, .plain = true},
        Case{.name = "w_block_remainder_parallel_columns", .loops = "abcdEfg", .shape = square_shape(2, 7, 4, 6, 3, 1, 1),
             .w_block = 3, .plain = true, .threads = 3},
        Case{.name = "h_in_gemm_remainder", .shape = square_shape(1, 7, 8, 6, 3, 1, 1), .h_in_gemm = 3, .bias = true,
             .relu = true, .plain = true},
        Case{.name = "h_in_gemm_1x1", .loops = "ACbdefg", .shape = square_shape(2, 5, 4, 12, 1, 1, 0), .h_in_gemm = 5,
             .plain = true, .threads = 2},
        Case{.name = "pack_input_h_in_gemm", .shape = square_shape(1, 14, 8, 4, 1, 2, 0), .h_in_gemm = 3, .pack = true,
             .plain = true},
        Case{.name = "input_copy_7x7", .shape = square_shape(1, 16, 3, 8, 7, 2, 3), .bc = 3, .bk = 8, .logical = true,
             .copy = true, .relu = true, .plain = true},
        Case{.name = "logical_unpadded", .shape = square_shape(1, 6, 4, 4, 1, 1, 0), .h_in_gemm = 2, .logical = true,
             .plain = true},
        Case{.name = "grid", .loops = "A{R:2}C{C:2}bdefg", .shape = square_shape(2, 6, 8, 12, 3, 1, 1), .bias = true,
             .plain = true, .threads = 4},
        Case{.name = "bf16_3x3", .shape = square_shape(2, 6, 8, 6, 3, 1, 1), .bias = true, .relu = true, .plain = true,
             .threads = 2, .bf16 = true},
        Case{.name = "bf16_h_in_gemm_1x1", .shape = square_shape(1, 5, 4, 12, 1, 1, 0), .h_in_gemm = 5, .plain = true,
             .bf16 = true}),
    [](const auto& test) { return test.param.name; });

TEST(ConvFwd, PlainOutputIsNchwAndEqualsTheBlockedOutputConverted) {
  // Two rows per GEMM (no edge columns) compute the same sums either way: the values agree exactly.
  for (const bool bf16 : {false, true}) {
    ConvFwdConfig config = config_of({.shape = square_shape(2, 6, 8, 6, 3, 1, 1), .h_in_gemm = 2, .bias = true,
                                      .relu = true, .bf16 = bf16});
    const ConvFwd blocked(config);
    config.plain_output = true;
    const ConvFwd plain(config);
    const ActivationLayout& l = plain.output_layout();
    EXPECT_TRUE(weft::samples::test::is_nchw(l, 2, 6, 6, 6));
    EXPECT_EQ(plain.scratch_bytes(), static_cast<std::uint64_t>(omp_get_max_threads()) *
                                         ((2 * 8 * 4 * (bf16 ? 2 : 4) + 63) / 64 * 64));  // 2 rows of 6 + 2 rims, bk 4
    const ConvShape& s = config.shape;
    std::vector<float> input = random_floats(s.N * s.C * s.H * s.W, 31), filter = random_floats(s.K * s.C * 9, 32);
    std::vector<float> bias = random_floats(s.K, 33);
    const std::vector<float> x = nchw_to_blocked(input.data(), blocked.input_layout());
    const std::vector<float> w = kcrs_to_blocked(filter.data(), blocked.filter_layout());
    const std::vector<float> b = blocked_bias(bias.data(), config.k_blocking());
    std::vector<float> from_blocked(static_cast<std::size_t>(l.size())), out(from_blocked.size());
    if (bf16) {
      const auto xb = to_bf16(x), wb = filter_to_vnni2(w, blocked.filter_layout()), bb = to_bf16(b);
      std::vector<weft::jit::bfloat16> yb(static_cast<std::size_t>(blocked.output_layout().size()));
      std::vector<weft::jit::bfloat16> yp(out.size());
      blocked.run(xb.data(), wb.data(), bb.data(), yb.data());
      plain.run(xb.data(), wb.data(), bb.data(), yp.data());
      from_blocked = to_floats(yb.data(), static_cast<std::int64_t>(yb.size()));
      std::vector<float> converted(out.size());
      blocked_to_nchw(from_blocked.data(), converted.data(), blocked.output_layout());
      from_blocked = converted;
      out = to_floats(yp.data(), static_cast<std::int64_t>(yp.size()));
    } else {
      std::vector<float> y(static_cast<std::size_t>(blocked.output_layout().size()));
      blocked.run(x.data(), w.data(), b.data(), y.data());
      plain.run(x.data(), w.data(), b.data(), out.data());
      blocked_to_nchw(y.data(), from_blocked.data(), blocked.output_layout());
    }
    EXPECT_EQ(out, from_blocked) << (bf16 ? "bf16" : "f32");
  }
}

TEST(ConvFwd, Bf16NeedsAnEvenChannelBlock) {
  EXPECT_THAT([] { ConvFwd{config_of({.shape = k3x3, .bc = 3, .bf16 = true})}; },
              ThrowsMessage<weft::Error>(HasSubstr("bc = 3 with bf16: the filter's VNNI-2 pairs run along C")));
}

TEST(ConvFwd, LayoutsFollowThePadding) {
  ConvFwdConfig config = config_of({.shape = k3x3});
  const ConvFwd physical(config);
  EXPECT_EQ(physical.input_layout().pad_h, 1);
  EXPECT_EQ(physical.output_layout().pad_w, 1);
  EXPECT_EQ(physical.config().pad_h_out, 1);
  EXPECT_FALSE(physical.per_tap());
  EXPECT_EQ(physical.scratch_bytes(), 0u);
  config.logical_padding = true;
  const ConvFwd logical(config);
  EXPECT_EQ(logical.input_layout().pad_h, 0);
  EXPECT_EQ(logical.output_layout().pad_w, 0);
  EXPECT_TRUE(logical.per_tap());
  config.input_padding_copy = true;
  const ConvFwd copy(config);
  EXPECT_FALSE(copy.per_tap());
  EXPECT_EQ(copy.scratch_bytes(), 2u * 2 * 8 * 8 * 4 * sizeof(float));
  // Explicit rims that agree are taken.
  config = config_of({.shape = k3x3});
  config.pad_h_in = config.pad_w_in = config.pad_h_out = config.pad_w_out = 1;
  EXPECT_NO_THROW(ConvFwd{config});
}

TEST(ConvFwd, StepsAndTag) {
  const ConvFwd conv(config_of({.loops = "Afgbdced", .shape = square_shape(1, 7, 12, 4, 3, 1, 1), .h_block = 2,
                                .w_block = 2, .c_block = 2, .k_block = 1}));
  EXPECT_EQ(conv.c_step(), 2);  // 3 C blocks in 2 chunks: 2 + 1
  EXPECT_EQ(conv.w_step(), 4);  // 7 columns in 2 GEMMs: 4 + 3
  EXPECT_EQ(conv.measure_tag(2), "Afgbdced_hb=2_wb=2_cb=2_kb=1_hg=1_pu=0_threads2");
  EXPECT_DOUBLE_EQ(conv.flops(), 2.0 * 12 * 4 * 9 * 7 * 7);
}

// avoid_rim_fmas: with one output row per GEMM, the rows and columns whose window reaches into the
// input's rims reduce over their other taps (edge columns in GEMMs down the image), so the rims are
// never read. NaN there shows it: read, it would poison the output (as it does with two rows per
// GEMM, which must read them: that half shows the test can fail). Column blocks (w_block) with and
// without edge columns, bias, ReLU, zeroed output rims, several C chunks and rows in parallel go
// through the same GEMMs.
TEST(ConvFwd, OneRowPerGemmSkipsTheTapsOnRims) {
  struct Variant {
    std::string loops;
    std::int64_t h_in_gemm, w_block, c_block;
    bool bias_relu_rims;
  };
  for (const ConvShape& shape : {square_shape(1, 7, 12, 8, 3, 1, 1), square_shape(2, 9, 4, 8, 3, 2, 1),
                                 square_shape(1, 11, 3, 8, 7, 2, 3), square_shape(1, 6, 4, 4, 5, 1, 2),
                                 square_shape(1, 2, 4, 4, 3, 1, 1), square_shape(1, 14, 8, 4, 3, 1, 1)}) {
    // Several rows per GEMM need stride 1 and S = 2 pad + 1 (ConvFwd's check).
    const bool rows_fit = shape.stride_h == 1 && shape.S == 2 * shape.pad_w + 1;
    for (const Variant& v : {Variant{"Abcdefg", 1, 1, 1, false}, Variant{"abcDefg", 1, 3, 1, true},
                             Variant{"aDbcefg", 1, 1, 2, true}, Variant{"Abcdefg", 2, 1, 1, false}}) {
      if ((v.h_in_gemm > 1 && !rows_fit) || v.w_block > shape.ofw() || v.c_block * 4 > shape.C) continue;
      const std::string what = std::to_string(shape.H) + "x" + std::to_string(shape.R) + " stride " +
                               std::to_string(shape.stride_h) + ", " + v.loops + " h_in_gemm " +
                               std::to_string(v.h_in_gemm) + ", w_block " + std::to_string(v.w_block);
      ConvFwdConfig config = config_of({.loops = v.loops, .shape = shape, .w_block = v.w_block,
                                        .c_block = v.c_block, .h_in_gemm = v.h_in_gemm, .rims = v.bias_relu_rims,
                                        .bias = v.bias_relu_rims, .relu = v.bias_relu_rims});
      config.bc = std::min<std::int64_t>(config.bc, shape.C);
      const ConvFwd conv(config);
      const std::vector<float> input = random_floats(shape.N * shape.C * shape.H * shape.W, 31);
      const std::vector<float> filter = random_floats(shape.K * shape.C * shape.R * shape.S, 32);
      const std::vector<float> bias = random_floats(shape.K, 33);
      std::vector<float> input_blocked = nchw_to_blocked(input.data(), conv.input_layout());
      fill_rims(input_blocked, conv.input_layout(), std::numeric_limits<float>::quiet_NaN());
      const std::vector<float> filter_blocked = kcrs_to_blocked(filter.data(), conv.filter_layout());
      std::vector<float> output(static_cast<std::size_t>(conv.output_layout().size()), kGarbage);
      conv.run(input_blocked.data(), filter_blocked.data(), bias.data(), output.data());
      std::vector<float> result(static_cast<std::size_t>(shape.N * shape.K * shape.ofh() * shape.ofw())),
          ref(result.size());
      blocked_to_nchw(output.data(), result.data(), conv.output_layout());
      conv_fwd_reference(shape, input.data(), filter.data(), v.bias_relu_rims ? bias.data() : nullptr,
                         v.bias_relu_rims, ref.data());
      const ErrorNorms e = compare(result.data(), ref.data(), static_cast<std::int64_t>(ref.size()));
      if (v.h_in_gemm == 1) {
        EXPECT_TRUE(e.passed(sum_tolerance(conv.reduction_terms()))) << what << ": " << e.to_string();
        if (v.bias_relu_rims) {
          EXPECT_EQ(nonzero_rim_elements(output.data(), conv.output_layout()), 0) << what;
        }
      } else {
        EXPECT_GT(e.non_finite, 0) << what << ": two rows per GEMM read the rims";
      }
    }
  }
}

TEST(ConvFwd, ZeroOutputRimsLeavesThemZeroAndWithoutItTheyAreNotWritten) {
  Case c{.shape = k3x3, .rims = true};
  EXPECT_EQ(run_against_reference(config_of(c), 2).nonzero_rims, 0);
  c.rims = false;  // the garbage the output started with stays: the test above can fail
  EXPECT_GT(run_against_reference(config_of(c), 2).nonzero_rims, 0);
}

TEST(ConvFwd, RunRefusesNullBuffers) {
  const ConvFwd conv(config_of({.shape = k3x3, .bias = true}));
  std::vector<float> in(static_cast<std::size_t>(conv.input_layout().size()));
  std::vector<float> w(static_cast<std::size_t>(conv.filter_layout().size()));
  std::vector<float> out(static_cast<std::size_t>(conv.output_layout().size()));
  EXPECT_THAT([&] { conv.run(in.data(), w.data(), nullptr, out.data()); },
              ThrowsMessage<weft::Error>(HasSubstr("bias (with_bias is set) is null")));
  EXPECT_THAT([&] { conv.run(nullptr, w.data(), in.data(), out.data()); },
              ThrowsMessage<weft::Error>(HasSubstr("ConvFwd::run: input is null")));
}

// The constructor's refusal of `c`, or "" when it accepts it.
std::string refusal(const Case& c) {
  try {
    const ConvFwd conv(config_of(c));
  } catch (const weft::Error& e) {
    return e.what();
  }
  return "";
}

TEST(ConvFwd, RefusesLoopStringsThatRace) {
  // b is the reduction over C blocks: parallel with 2 chunks would race.
  EXPECT_THAT(refusal({.loops = "aBcdefg", .shape = k3x3, .c_block = 2}), HasSubstr("loop 'b'"));
  EXPECT_EQ(refusal({.loops = "aBcdefg", .shape = k3x3}), "");  // one chunk: nothing to race
  // f and g step over the taps in the per-tap mode only.
  EXPECT_THAT(refusal({.loops = "abcdeFg", .shape = k3x3, .logical = true}), HasSubstr("loop 'f'"));
  EXPECT_EQ(refusal({.loops = "abcdeFg", .shape = k3x3}), "");
  EXPECT_THAT(refusal({.loops = "abcdefG{R:2}", .shape = k3x3, .logical = true}), HasSubstr("loop 'g'"));
  // A reduction outside a run that deals its iterations anew on every entry.
  EXPECT_THAT(refusal({.loops = "bAcdefg@schedule(dynamic)", .shape = k3x3, .c_block = 2}),
              HasSubstr("static schedule"));
  EXPECT_EQ(refusal({.loops = "bAcdefg@schedule(static,1)", .shape = k3x3, .c_block = 2}), "");
  EXPECT_EQ(refusal({.loops = "Abcdefg@schedule(dynamic)", .shape = k3x3, .c_block = 2}), "");
}

TEST(ConvFwd, RefusesWhatCannotBeComputed) {
  const ConvShape s2 = square_shape(1, 9, 8, 8, 3, 2, 1);
  EXPECT_THAT(refusal({.shape = s2, .h_in_gemm = 2}), HasSubstr("row pitch"));
  EXPECT_THAT(refusal({.shape = square_shape(1, 8, 4, 4, 1, 2, 0), .h_in_gemm = 2}), HasSubstr("row pitch"));
  EXPECT_THAT(refusal({.shape = square_shape(1, 7, 4, 4, 1, 2, 1), .h_in_gemm = 2, .pack = true}), HasSubstr("row pitch"));
  EXPECT_THAT(refusal({.shape = k3x3, .w_block = 2, .h_in_gemm = 2}), HasSubstr("w_block = 1"));
  EXPECT_THAT(refusal({.shape = k3x3, .h_in_gemm = 2, .logical = true}), HasSubstr("h_in_gemm = 1"));
  EXPECT_THAT(refusal({.shape = k3x3, .h_in_gemm = 7}), HasSubstr("only 6"));
  EXPECT_THAT(refusal({.shape = k3x3, .pack = true}), HasSubstr("nothing to pack"));
  EXPECT_THAT(refusal({.shape = square_shape(1, 6, 4, 4, 1, 1, 1), .pack = true, .logical = true}),
              HasSubstr("physical padding"));
  EXPECT_THAT(refusal({.shape = square_shape(1, 6, 4, 4, 1, 1, 0), .pack = true, .logical = true, .copy = true}),
              HasSubstr("do not go together"));
  EXPECT_THAT(refusal({.shape = k3x3, .copy = true}), HasSubstr("logical_padding = 1"));
  EXPECT_THAT(refusal({.shape = k3x3, .c_block = 3}), HasSubstr("at most 2"));
  EXPECT_THAT(refusal({.shape = k3x3, .w_block = 7}), HasSubstr("at most 6"));
  EXPECT_THAT(refusal({.shape = k3x3, .k_block = 0}), HasSubstr("k_block must be positive"));
  EXPECT_THAT(refusal({.shape = k3x3, .bc = 0}), HasSubstr("bc"));
  // h_block blocks loop d, which steps by h_in_gemm; unused when d appears once (PARLOOPER's
  // scripts pass h_block 1 with h_in_gemm 4).
  EXPECT_THAT(refusal({.loops = "Adbcdefg", .shape = square_shape(1, 8, 4, 4, 3, 1, 1), .h_block = 3, .h_in_gemm = 2}),
              HasSubstr("multiple of h_in_gemm"));
  EXPECT_EQ(refusal({.shape = square_shape(1, 8, 4, 4, 3, 1, 1), .h_block = 1, .h_in_gemm = 4}), "");
  EXPECT_THAT(refusal({.loops = "a[0,1,]bcdefg", .shape = k3x3}), HasSubstr("inline bounds"));
  EXPECT_EQ(refusal({.loops = "Ac[,,,(2)]cbdefg", .shape = square_shape(1, 6, 4, 16, 3, 1, 1)}), "");
  EXPECT_THAT(refusal({.loops = "Abcdef", .shape = k3x3}), HasSubstr("g"));
}

TEST(ConvFwd, RefusesRimsThatContradictThePadding) {
  ConvFwdConfig config = config_of({.shape = k3x3, .logical = true});
  config.pad_h_in = 1;
  EXPECT_THAT([&] { ConvFwd{config}; }, ThrowsMessage<weft::Error>(HasSubstr("pad_h_in = 1 contradicts")));
  config = config_of({.shape = k3x3});
  config.pad_w_out = 0;
  EXPECT_THAT([&] { ConvFwd{config}; }, ThrowsMessage<weft::Error>(HasSubstr("pass 1")));
}

TEST(ConvFwd, PlainOutputRefusesWhatItCannotTake) {
  EXPECT_THAT(refusal({.shape = k3x3, .logical = true, .plain = true}), HasSubstr("batch-reduce mode"));
  EXPECT_THAT(refusal({.shape = k3x3, .c_block = 2, .plain = true}), HasSubstr("c_block = 1 (got 2)"));
  EXPECT_THAT(refusal({.shape = k3x3, .rims = true, .plain = true}), HasSubstr("has no rims"));
  // It pays for 1x1 filters where it may be set; not for R x S ones (their GEMMs lose what the
  // transposes save), nor for a configuration the constructor refuses.
  const ConvShape k1x1 = square_shape(2, 6, 8, 8, 1, 1, 0);
  EXPECT_TRUE(ConvFwd::plain_output_pays(config_of({.shape = k1x1})));
  EXPECT_TRUE(ConvFwd::plain_output_pays(config_of({.shape = k1x1, .h_in_gemm = 3})));
  EXPECT_TRUE(ConvFwd::plain_output_pays(config_of({.shape = square_shape(1, 8, 8, 8, 1, 2, 0), .pack = true})));
  EXPECT_FALSE(ConvFwd::plain_output_pays(config_of({.shape = k1x1, .c_block = 2})));
  EXPECT_FALSE(ConvFwd::plain_output_pays(config_of({.shape = k1x1, .h_in_gemm = 7})));
  EXPECT_FALSE(ConvFwd::plain_output_pays(config_of({.shape = square_shape(1, 6, 4, 4, 1, 1, 1), .logical = true})));
  EXPECT_FALSE(ConvFwd::plain_output_pays(config_of({.shape = k3x3, .h_in_gemm = 2})));
  EXPECT_FALSE(ConvFwd::plain_output_pays(config_of({.shape = square_shape(1, 56, 4, 4, 3, 1, 1)})));
}

// argv from words, for parse_conv_fwd_arguments.
struct Argv {
  explicit Argv(std::vector<std::string> words) : words_(std::move(words)) {
    words_.insert(words_.begin(), "weft-conv-fwd");
    for (std::string& w : words_) pointers_.push_back(w.data());
  }
  int argc() { return static_cast<int>(pointers_.size()); }
  char** argv() { return pointers_.data(); }

 private:
  std::vector<std::string> words_;
  std::vector<char*> pointers_;
};

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> words;
  std::size_t start = 0;
  while (start < line.size()) {
    const std::size_t end = line.find(' ', start);
    words.push_back(line.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return words;
}

ConvFwdConfig parsed(const std::string& line, std::size_t* n_iters_index = nullptr) {
  SampleArgs args;
  ConvFwdConfig config;
  Argv argv(split(line));
  const std::size_t index = parse_conv_fwd_arguments(args, config, argv.argc(), argv.argv());
  if (n_iters_index != nullptr) *n_iters_index = index;
  return config;
}

TEST(ConvFwdArguments, TakesParloopersLines) {
  // run_conv_fwd_sc23_spr_gcc_iomp.sh: up to n_iters.
  std::size_t n_iters = 0;
  ConvFwdConfig c = parsed("Afgbdced 56 56 56 64 64 3 3 1 1 1 1 64 64 14 1 1 1 1 0 1000", &n_iters);
  EXPECT_EQ(c.loop_string, "Afgbdced");
  EXPECT_EQ(c.shape.N, 56);
  EXPECT_EQ(c.bk, 64);
  EXPECT_EQ(c.h_block, 14);
  EXPECT_EQ(n_iters, 20u);
  EXPECT_EQ(c.pad_h_in, ConvFwdConfig::kFollowPadding);
  EXPECT_FALSE(c.logical_padding);
  // All 30 arguments.
  c = parsed("Abcdefg 1 8 8 4 4 3 3 1 1 1 1 4 4 2 3 1 2 1 0 5 1 1 0 0 0 0 1 1 1");
  EXPECT_EQ(c.w_block, 3);
  EXPECT_EQ(c.k_block, 2);
  EXPECT_TRUE(c.logical_padding && c.input_padding_copy && c.zero_output_rims && c.with_bias && c.with_relu);
  EXPECT_EQ(c.pad_w_out, 0);
  // The prefix alone.
  c = parsed("Abcdefg 1 8 8 4 4 3 3 1 1 1 1 4 4");
  EXPECT_EQ(c.h_in_gemm, 1);
  EXPECT_FALSE(c.pack_input);
}

TEST(ConvFwdArguments, AutoTakesTheShapeOnlyAndBadArgumentsAreRefused) {
  // auto: the shape and n_iters; the rest is the tuner's (conv_auto.hpp, conv_workload_test.cpp).
  const ConvFwdConfig tuned = parsed("auto 1 56 56 64 64 3 3 1 1 1 1");
  EXPECT_EQ(tuned.loop_string, "auto");
  EXPECT_EQ(tuned.shape.H, 56);
  EXPECT_EQ(tuned.shape.pad_w, 1);
  EXPECT_THAT([] { parsed("auto"); }, ThrowsMessage<UsageError>(HasSubstr("N")));
  EXPECT_THAT([] { parsed("auto 1 56 56 64 64 3 3 1 1 1 1 10 4"); },
              ThrowsMessage<UsageError>(HasSubstr("auto N H W C K R S stride_h stride_w pad_h pad_w [n_iters]")));
  EXPECT_THAT([] { parsed("Abcdefg 1 8 8 4 4 3 3 1 1 1 1 4 4 1 1 1 1 1 0 5 0 0 0 0 0 0 0 0 0 7"); },
              ThrowsMessage<UsageError>(HasSubstr("argument 31")));
  EXPECT_THAT([] { parsed("Abcdefg 1 8 8 4 4 3 3 1 1 1 1 4 4 1 1 1 1 1 2"); },
              ThrowsMessage<UsageError>(HasSubstr("pack_input")));
  EXPECT_THAT([] { parsed("Abcdefg 1 8 8 4 4 3 3 1 1 1 1 4"); }, ThrowsMessage<UsageError>(HasSubstr("bk")));
}

#ifdef WEFT_CONV_FWD_PATH
// The program: PARLOOPER's argument lines, the MEASURE tag, the exit status of a refusal.
weft::test::ProgramResult run_program(const std::string& args) {
  return weft::test::run_program("'" WEFT_CONV_FWD_PATH "' " + args + " --threads 2 --warmup 0", "weft_conv_fwd");
}

TEST(ConvFwdProgram, RunsParloopersLinesAndChecksThem) {
  const auto plain = run_program("Afgbdced 2 8 8 8 8 3 3 1 1 1 1 4 4 1 1 1 1 1 0 2");
  EXPECT_EQ(plain.status, 0) << plain.err;
  EXPECT_THAT(plain.out, HasSubstr("check: PASSED"));
  EXPECT_THAT(plain.out, HasSubstr("conversion: input NCHW -> blocked"));
  EXPECT_THAT(plain.out, HasSubstr(" Afgbdced_hb=1_wb=1_cb=1_kb=1_hg=1_pu=0_threads2\n"));
  // All 30 arguments: logical padding with the input copy, rims, bias and ReLU.
  const auto full = run_program("A{R:2}C{C:1}fgbde 2 9 9 5 6 3 3 2 2 1 1 4 4 1 2 2 1 1 0 2 1 1 0 0 0 0 1 1 1");
  EXPECT_EQ(full.status, 0) << full.err;
  EXPECT_THAT(full.out, HasSubstr("check: PASSED"));
  const auto rims = run_program("Abcdefg 1 7 7 4 4 3 3 1 1 1 1 4 4 1 1 1 1 7 0 2 0 0 1 1 1 1 1 1 1");
  EXPECT_EQ(rims.status, 0) << rims.err;
  EXPECT_THAT(rims.out, HasSubstr("output rims: 0 elements not zero"));
  EXPECT_THAT(rims.out, HasSubstr("check: PASSED"));
}

TEST(ConvFwdProgram, RefusesWithStatusTwo) {
  for (const char* args : {"auto 1 8 8 4 4 3 3 1 1 1 1 10 3",                               // auto: shape, n_iters
                           "Abcdefg 1 8 8 4 4 3 3 1 1 1 1 4 4 1 1 1 1 1 0 2 1 0 1",          // pad_h_in vs logical
                           "aBcdefg 1 8 8 8 4 3 3 1 1 1 1 4 4 1 1 2 1 1 0 2",                // parallel reduction
                           "Abcdefg 1 8 8 4 4 3 3 2 2 1 1 4 4 1 1 1 1 2 0 2"}) {             // h_in_gemm, stride 2
    const auto refused = run_program(args);
    EXPECT_EQ(refused.status, 2) << args << "\n" << refused.out;
    EXPECT_THAT(refused.err, HasSubstr("weft-conv-fwd: ")) << args;
  }
}

// USE_BF16=1: the pass in bf16, checked (rims, bias, ReLU, the padded copy), "BF16" in the header,
// "_bf16" ending the tag; an odd bc is refused before anything runs, as is a non-integer USE_BF16.
TEST(ConvFwdProgram, UseBf16RunsTheBf16Pass) {
  const auto with = [](const std::string& env, const std::string& args) {
    return weft::test::run_program(env + " '" WEFT_CONV_FWD_PATH "' " + args + " --threads 2 --warmup 0",
                                   "weft_conv_fwd_bf16");
  };
  for (const char* args : {"Afgbdced 2 8 8 8 8 3 3 1 1 1 1 4 4 1 1 1 1 1 0 2",
                           "A{R:2}C{C:1}fgbde 2 9 9 5 6 3 3 2 2 1 1 4 4 1 2 2 1 1 0 2 1 1 0 0 0 0 1 1 1",
                           "Abcdefg 1 7 7 4 4 3 3 1 1 1 1 4 4 1 1 1 1 7 0 2 0 0 1 1 1 1 1 1 1"}) {
    const auto r = with("USE_BF16=1", args);
    EXPECT_EQ(r.status, 0) << args << "\n" << r.err;
    EXPECT_THAT(r.out, HasSubstr("weft-conv-fwd: BF16, ")) << args;
    EXPECT_THAT(r.out, HasSubstr("check: PASSED")) << args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr("_threads2_bf16\n")) << args;
  }
  const auto odd = with("USE_BF16=1", "Abcdefg 1 8 8 4 4 3 3 1 1 1 1 3 4");
  EXPECT_EQ(odd.status, 2);
  EXPECT_THAT(odd.err, HasSubstr("bc = 3 with bf16"));
  const auto word = with("USE_BF16=yes", "Abcdefg 1 8 8 4 4 3 3 1 1 1 1 4 4");
  EXPECT_EQ(word.status, 2);
  EXPECT_THAT(word.err, HasSubstr("USE_BF16 (environment): 'yes' is not an integer"));
}
#endif

}  // namespace

// ---- The untuned choice from the machine model (conv_model.hpp) ----

using weft::samples::test::kAvx2Zen3;
using weft::samples::test::kLargeL2;
using weft::samples::test::kSmallL2;

ConvFwdConfig modeled(const ConvShape& shape, int threads, const ConvMachine& machine) {
  ConvFwdConfig problem;
  problem.shape = shape;
  return model_conv_fwd_config(problem, threads, machine);
}

TEST(ConvFwdModel, SmallImagesPutSeveralRowsIntoOneGemm) {
  // 1x1, stride 1, no padding: rows until about 64 columns. 7x7: all 7 rows (49 columns).
  EXPECT_EQ(modeled(square_shape(1, 7, 2048, 512, 1, 1, 0), 1, kLargeL2).h_in_gemm, 7);
  EXPECT_EQ(modeled(square_shape(1, 14, 1024, 256, 1, 1, 0), 1, kLargeL2).h_in_gemm, 4);
  EXPECT_EQ(modeled(square_shape(1, 56, 64, 64, 1, 1, 0), 1, kLargeL2).h_in_gemm, 1);
  // Padding taps (which one row per GEMM skips) or a stride: one row.
  EXPECT_EQ(modeled(square_shape(1, 7, 512, 512, 3, 1, 1), 1, kLargeL2).h_in_gemm, 1);
}

TEST(ConvFwdModel, StridedPointwiseFiltersPackTheirInputForSeveralRowsPerGemm) {
  // Stride 2, 1x1: the packed input steps by one row per output row, so rows go into one GEMM as
  // at stride 1: 7 output columns take 7 rows (packed), 28 take 2 (packed), 56 take 1 (unpacked).
  const ConvFwdConfig deep = modeled(square_shape(1, 14, 1024, 2048, 1, 2, 0), 1, kLargeL2);
  EXPECT_TRUE(deep.pack_input);
  EXPECT_EQ(deep.h_in_gemm, 7);
  const ConvFwdConfig mid = modeled(square_shape(1, 56, 256, 512, 1, 2, 0), 1, kLargeL2);
  EXPECT_TRUE(mid.pack_input);
  EXPECT_EQ(mid.h_in_gemm, 2);
  const ConvFwdConfig wide = modeled(square_shape(1, 112, 64, 64, 1, 2, 0), 1, kLargeL2);
  EXPECT_FALSE(wide.pack_input);
  EXPECT_EQ(wide.h_in_gemm, 1);
  // Padding, or an input copied with its padding (input_padding_copy, which packing excludes): no.
  EXPECT_FALSE(modeled(square_shape(1, 14, 64, 64, 1, 2, 1), 1, kLargeL2).pack_input);
  ConvFwdConfig copied;
  copied.shape = square_shape(1, 14, 1024, 2048, 1, 2, 0);
  copied.input_padding_copy = true;
  EXPECT_FALSE(model_conv_fwd_config(copied, 1, kLargeL2).pack_input);
}

TEST(ConvFwdModel, ChunksOfCKeepOneGemmsOperandsInAQuarterOfTheL2) {
  // 7x7, 2048 -> 512: per C block of 64, filter 64 x 64 and input 49 x 64 floats, 28.9 KB. A
  // quarter of 512 KiB holds 4 blocks: 32 blocks in 8 chunks; a quarter of 2 MiB holds 17: 2 chunks.
  const ConvShape deep = square_shape(1, 7, 2048, 512, 1, 1, 0);
  EXPECT_EQ(modeled(deep, 1, kSmallL2).c_block, 8);
  EXPECT_EQ(modeled(deep, 1, kLargeL2).c_block, 2);
  // 3x3 on 7x7, 512 -> 512: 168 KB per C block, past a quarter of 512 KiB: one block per chunk.
  EXPECT_EQ(modeled(square_shape(1, 7, 512, 512, 3, 1, 1), 1, kSmallL2).c_block, 8);
  // A small layer stays in one chunk.
  EXPECT_EQ(modeled(square_shape(1, 56, 64, 64, 3, 1, 1), 1, kSmallL2).c_block, 1);
  // An L2 smaller than one block's operands still takes one block per chunk.
  EXPECT_EQ(modeled(deep, 1, ConvMachine{.l2_bytes = 1024}).c_block, 32);
}

TEST(ConvFwdModel, BlocksFollowTheChannels) {
  const ConvFwdConfig stem = modeled(square_shape(1, 224, 3, 64, 7, 2, 3), 1, kSmallL2);
  EXPECT_EQ(stem.bc, 3);
  EXPECT_EQ(stem.bk, 64);
  const ConvFwdConfig odd = modeled(square_shape(1, 9, 96, 40, 3, 1, 1), 1, kSmallL2);
  EXPECT_EQ(odd.bc, 64);  // 96 channels: a block of 64 and a remainder of 32
  EXPECT_EQ(odd.bk, 40);
  ConvFwdConfig problem;
  problem.shape = square_shape(1, 224, 3, 64, 7, 2, 3);
  problem.dtype = weft::jit::DataType::bf16;
  EXPECT_EQ(model_conv_fwd_config(problem, 1, kSmallL2).bc, 4);  // VNNI-2 pairs along C
}

TEST(ConvFwdModel, TheOutputChannelBlockIsOneRegisterRowPanel) {
  // K runs along the GEMM's rows: 32 with AVX2's 4 x 3 ymm tiles, 64 with AVX-512's; C (the
  // reduction) keeps blocks of 64 on both.
  const ConvShape deep = square_shape(1, 14, 1024, 256, 1, 1, 0);
  EXPECT_EQ(modeled(deep, 1, kAvx2Zen3).bk, 32);
  EXPECT_EQ(modeled(deep, 1, kAvx2Zen3).bc, 64);
  EXPECT_EQ(modeled(deep, 1, kSmallL2).bk, 64);
  EXPECT_EQ(modeled(square_shape(1, 9, 96, 24, 3, 1, 1), 1, kAvx2Zen3).bk, 24);  // fewer channels: all
  // With 32-row blocks the filter chunk is half as large: 7x7 2048 -> 512 per C block 20.7 KB, 6
  // blocks in a quarter of 512 KiB, 32 blocks in 6 chunks (8 with 64-row blocks).
  EXPECT_EQ(modeled(square_shape(1, 7, 2048, 512, 1, 1, 0), 1, kAvx2Zen3).c_block, 6);
  // The K blocks double, and with them the parallel loop's count: 8 K blocks of 32.
  EXPECT_EQ(modeled(square_shape(1, 14, 256, 256, 3, 1, 1), 2, kAvx2Zen3).loop_string, "abCdefg");
}

TEST(ConvFwdModel, TheMachinesRowsFollowTheSelectedIsa) {
  const weft::jit::IsaTraits& isa = weft::jit::isa_traits(weft::jit::selected_isa());
  EXPECT_EQ(ConvMachine::current().gemm_rows, isa.vector_bytes >= 64 ? 64 : 32) << weft::jit::to_string(isa.isa);
}

TEST(ConvFwdModel, TheParallelLoopKeepsTheTeamBusy) {
  EXPECT_EQ(modeled(square_shape(2, 14, 256, 256, 3, 1, 1), 2, kSmallL2).loop_string, "Abcdefg");
  EXPECT_EQ(modeled(square_shape(1, 14, 256, 256, 3, 1, 1), 2, kSmallL2).loop_string, "abCdefg");  // 4 K blocks
  EXPECT_EQ(modeled(square_shape(1, 14, 256, 64, 3, 1, 1), 2, kSmallL2).loop_string, "abcDefg");   // 1 K block
  EXPECT_EQ(modeled(square_shape(1, 14, 256, 192, 3, 1, 1), 3, kSmallL2).loop_string, "abCdefg");  // 3 K blocks
  EXPECT_EQ(modeled(square_shape(3, 14, 256, 64, 3, 1, 1), 1, kSmallL2).loop_string, "Abcdefg");
}

TEST(ConvFwdModel, KeepsWhatTheUserAskedFor) {
  ConvFwdConfig problem;
  problem.shape = square_shape(1, 8, 16, 16, 3, 1, 1);
  problem.logical_padding = true;
  problem.input_padding_copy = true;
  problem.with_bias = true;
  problem.with_relu = true;
  problem.zero_output_rims = true;
  const ConvFwdConfig c = model_conv_fwd_config(problem, 1, kSmallL2);
  EXPECT_TRUE(c.logical_padding && c.input_padding_copy && c.with_bias && c.with_relu && c.zero_output_rims);
}

// Every ResNet-50 layer, and shapes outside it (odd channels, odd images, 5x5, strides, more
// images than threads and fewer), on 1-3 threads, both L2 sizes and both row panels: the sample
// takes the choice.
TEST(ConvFwdModel, TheSampleTakesEveryChoice) {
  const std::vector<ConvShape> shapes = weft::samples::test::model_test_shapes(WEFT_RESNET50_LAYERS);
  for (const ConvShape& shape : shapes)
    for (int threads : {1, 2, 3})
      for (const ConvMachine& machine : {kSmallL2, kLargeL2, kAvx2Zen3}) {
        const ConvFwdConfig c = modeled(shape, threads, machine);
        EXPECT_NO_THROW(ConvFwd::check(c)) << c.loop_string << " on " << shape.H << "x" << shape.W << " " << shape.C
                                           << " -> " << shape.K << ", " << threads << " threads";
      }
}

// The choices compute the convolution: several rows per GEMM with C in chunks, and the parallel
// loops over K blocks and rows.
TEST(ConvFwdModel, ChoicesMatchTheReference) {
  const ConvMachine tiny{.l2_bytes = 96 << 10};  // chunks of a few C blocks on these small shapes
  for (const auto& [shape, threads] : std::vector<std::pair<ConvShape, int>>{
           {square_shape(1, 7, 200, 48, 1, 1, 0), 2},   // rows per GEMM, C chunks, K blocks in parallel
           {square_shape(1, 9, 136, 24, 3, 1, 1), 2},   // rows in parallel, C chunks
           {square_shape(2, 11, 72, 80, 3, 2, 1), 2},     // images in parallel
           {square_shape(1, 13, 200, 48, 1, 2, 0), 2}}) {  // packed strided input, rows per GEMM, C chunks
    const ConvFwdConfig c = modeled(shape, threads, tiny);
    EXPECT_GT(c.c_block, 1) << c.loop_string;
    const Outcome outcome = run_against_reference(c, threads);
    EXPECT_LE(outcome.norms.l2_rel_error, sum_tolerance(c.shape.C * c.shape.R * c.shape.S)) << c.loop_string;
  }
}
