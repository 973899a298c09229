// The convolution operators through their public API (weft/ops/conv.hpp): descriptor ->
// configuration -> prepare -> convert from NCHW / KCRS -> execute -> convert back, against the
// double-precision references, within each pass's own tolerance (tolerance(): the f32 sums', plus a
// bf16 rounding per rounded step in bf16), and what bad input is told.
#include <weft/ops/conv.hpp>

#include <omp.h>

#include <cstdint>
#include <limits>
#include <utility>
#include <string>
#include <tuple>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <weft/jit/error.hpp>
#include <weft/ops/conv_reference.hpp>
#include <weft/ops/verification.hpp>

namespace weft::ops {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

std::vector<float> random_values(std::int64_t count, std::uint64_t seed, bool bf16) {
  std::vector<float> v(static_cast<std::size_t>(count));
  fill_random(v.data(), count, seed);
  if (bf16) round_to_bf16(v);
  return v;
}

std::int64_t activations(const ConvShape& s, std::int64_t channels, bool output) {
  return s.N * channels * (output ? s.ofh() * s.ofw() : s.H * s.W);
}

// A blocked f32 tensor as the operator takes it: the same floats, or bf16 (VNNI-2 for a filter).
struct Operand {
  std::vector<float> f32;
  std::vector<jit::bfloat16> bf16;
  const void* data() const { return bf16.empty() ? static_cast<const void*>(f32.data()) : bf16.data(); }
};

Operand operand(std::vector<float> blocked, bool bf16, const FilterLayout* filter = nullptr) {
  Operand o{.f32 = std::move(blocked), .bf16 = {}};
  if (bf16) o.bf16 = filter != nullptr ? filter_to_vnni2(o.f32, *filter) : to_bf16(o.f32);
  return o;
}

// An output buffer of `size` elements in the dtype, and its values as floats.
struct Output {
  Output(std::int64_t size, bool in_bf16) : f32(in_bf16 ? 0 : size), bf16(in_bf16 ? size : 0) {}
  void* data() { return bf16.empty() ? static_cast<void*>(f32.data()) : bf16.data(); }
  std::vector<float> floats() const {
    return bf16.empty() ? f32 : to_floats(bf16.data(), static_cast<std::int64_t>(bf16.size()));
  }
  std::vector<float> f32;
  std::vector<jit::bfloat16> bf16;
};

void expect_close(const std::vector<float>& result, const std::vector<float>& ref, double tolerance) {
  const ErrorNorms e = compare(result.data(), ref.data(), static_cast<std::int64_t>(ref.size()));
  EXPECT_TRUE(e.passed(tolerance)) << e.to_string() << " (tolerance " << tolerance << ")";
}

class ConvOps : public ::testing::TestWithParam<std::tuple<ConvShape, jit::DataType>> {
 protected:
  static constexpr int kThreads = 2;
  void SetUp() override { omp_set_num_threads(kThreads); }
  ConvDesc desc() const { return {.shape = std::get<0>(GetParam()), .dtype = std::get<1>(GetParam())}; }
  bool bf16() const { return desc().dtype == jit::DataType::bf16; }
};

TEST_P(ConvOps, ForwardWithFusedBiasAndReluMatchesTheReference) {
  ConvDesc d = desc();
  d.bias = d.relu = true;
  const ConvShape& s = d.shape;
  const ConvFwd conv(default_conv_config<ConvFwdConfig>(d, kThreads));
  const std::vector<float> x = random_values(activations(s, s.C, false), 1, bf16());
  const std::vector<float> w = random_values(s.K * s.C * s.R * s.S, 2, bf16());
  const std::vector<float> b = random_values(s.K, 3, bf16());
  const Operand xb = operand(nchw_to_blocked(x.data(), conv.input_layout()), bf16());
  const FilterLayout& fl = conv.filter_layout();
  const Operand wb = operand(kcrs_to_blocked(w.data(), fl), bf16(), &fl);
  const Operand bb = operand(blocked_bias(b.data(), conv.config().k_blocking()), bf16());
  Output y(conv.output_layout().size(), bf16());
  conv.run(xb.data(), wb.data(), bb.data(), y.data());

  std::vector<float> ref(static_cast<std::size_t>(activations(s, s.K, true))), got(ref.size());
  conv_fwd_reference(s, x.data(), w.data(), b.data(), true, ref.data());
  blocked_to_nchw(y.floats().data(), got.data(), conv.output_layout());
  expect_close(got, ref, conv.tolerance());
}

TEST_P(ConvOps, BackwardByDataMatchesTheReference) {
  const ConvShape& s = desc().shape;
  const ConvBwd bwd(default_conv_config<ConvBwdConfig>(desc(), kThreads));
  const std::vector<float> dy = random_values(activations(s, s.K, true), 4, bf16());
  const std::vector<float> w = random_values(s.K * s.C * s.R * s.S, 5, bf16());
  const FilterLayout fl = bwd.filter_layout();
  const Operand wb = operand(kcrs_to_blocked(w.data(), fl), bf16(), &fl);
  const Operand dyb = operand(nchw_to_blocked(dy.data(), bwd.grad_output_layout()), bf16());
  Output dx(bwd.grad_input_layout().size(), bf16());
  bwd.run(wb.data(), dyb.data(), dx.data());

  std::vector<float> ref(static_cast<std::size_t>(activations(s, s.C, false))), got(ref.size());
  conv_bwd_data_reference(s, dy.data(), w.data(), ref.data());
  blocked_to_nchw(dx.floats().data(), got.data(), bwd.grad_input_layout());
  expect_close(got, ref, bwd.tolerance());
}

TEST_P(ConvOps, BackwardByWeightsMatchesTheReference) {
  const ConvShape& s = desc().shape;
  const ConvUpd upd(default_conv_config<ConvUpdConfig>(desc(), kThreads));
  const std::vector<float> x = random_values(activations(s, s.C, false), 6, bf16());
  const std::vector<float> dy = random_values(activations(s, s.K, true), 7, bf16());
  const Operand xb = operand(nchw_to_blocked(x.data(), upd.input_layout()), bf16());
  const Operand dyb = operand(nchw_to_blocked(dy.data(), upd.grad_output_layout()), bf16());
  const FilterLayout fl = upd.filter_layout();
  Output dw(fl.size(), bf16());
  upd.run(xb.data(), dyb.data(), dw.data());

  std::vector<float> ref(static_cast<std::size_t>(s.K * s.C * s.R * s.S)), got(ref.size());
  conv_bwd_weights_reference(s, x.data(), dy.data(), ref.data());
  const std::vector<float> blocked = bf16() ? vnni2_to_filter(dw.bf16.data(), fl) : dw.f32;
  blocked_to_kcrs(blocked.data(), got.data(), fl);
  expect_close(got, ref, upd.tolerance());
  if (!bf16()) return;

  // A bf16 pass writing grad_filter in f32 (fp32 master weights): the sums the bf16 run rounds
  // once, unrounded, each where the bf16 value is.
  std::vector<float> dw32(static_cast<std::size_t>(fl.size()), 777.0f);
  upd.run(xb.bf16.data(), dyb.bf16.data(), dw32.data());
  std::size_t unrounded = 0;
  std::vector<jit::bfloat16> high(dw32.size()), low(dw32.size());
  for (std::size_t i = 0; i < dw32.size(); ++i) {
    ASSERT_EQ(jit::to_bfloat16(dw32[i]).bits, dw.bf16[i].bits) << "at " << i;
    unrounded += dw32[i] != jit::to_float(dw.bf16[i]);
    high[i] = jit::to_bfloat16(dw32[i]);
    low[i] = jit::to_bfloat16(dw32[i] - jit::to_float(high[i]));
  }
  EXPECT_GT(unrounded, dw32.size() / 2);
  // The f32 values (high + low: 16 bits of mantissa) against the reference, within the f32 sums'
  // tolerance alone.
  const std::vector<float> high_f = vnni2_to_filter(high.data(), fl), low_f = vnni2_to_filter(low.data(), fl);
  std::vector<float> sums(high_f.size());
  for (std::size_t i = 0; i < sums.size(); ++i) sums[i] = high_f[i] + low_f[i];
  blocked_to_kcrs(sums.data(), got.data(), fl);
  expect_close(got, ref, sum_tolerance(upd.reduction_length()) + 0x1p-15);
  std::vector<float> f32_out(dw32.size());
  EXPECT_THROW(ConvUpd(default_conv_config<ConvUpdConfig>({.shape = s}, kThreads))
                   .run(xb.bf16.data(), dyb.bf16.data(), f32_out.data()),
               Error);
}

std::string case_name(const ::testing::TestParamInfo<std::tuple<ConvShape, jit::DataType>>& info) {
  const ConvShape& s = std::get<0>(info.param);
  return "C" + std::to_string(s.C) + "_K" + std::to_string(s.K) + "_R" + std::to_string(s.R) + "_stride" +
         std::to_string(s.stride_h) + "_" + std::string(jit::to_string(std::get<1>(info.param)));
}

// A 3x3 padded layer with partial channel blocks, and a strided 1x1 one.
INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvOps,
    ::testing::Combine(::testing::Values(ConvShape{.N = 2, .H = 8, .W = 8, .C = 20, .K = 36, .R = 3, .S = 3,
                                                   .pad_h = 1, .pad_w = 1},
                                         ConvShape{.N = 2, .H = 10, .W = 10, .C = 32, .K = 16, .stride_h = 2,
                                                   .stride_w = 2}),
                       ::testing::Values(jit::DataType::f32, jit::DataType::bf16)),
    case_name);

const ConvDesc kDesc{.shape = {.N = 1, .H = 8, .W = 8, .C = 16, .K = 16, .R = 3, .S = 3, .pad_h = 1, .pad_w = 1}};

TEST(ConvOpsConfig, ExplicitTunedAndDefaultConfigurationsKeepTheDescriptor) {
  ConvDesc d = kDesc;
  d.dtype = jit::DataType::bf16;
  d.bias = true;
  for (const ConvFwdConfig& c : {conv_config<ConvFwdConfig>(d), tuned_conv_config<ConvFwdConfig>(d, 2),
                                 default_conv_config<ConvFwdConfig>(d, 2)}) {
    EXPECT_EQ(c.shape.to_string(), d.shape.to_string());
    EXPECT_EQ(c.dtype, jit::DataType::bf16);
    EXPECT_TRUE(c.with_bias);
    EXPECT_FALSE(c.with_relu);
    EXPECT_NO_THROW(ConvFwd::check(c)) << c.loop_string;
  }
  EXPECT_EQ(conv_config<ConvUpdConfig>(kDesc).loop_string, "Abcdefg");
}

// The backward by weights reads a dy with rims (ConvDesc::grad_output_pad_h / _w, as the backward
// by data lays it out) and never its rims, which hold NaN here: the result is the reference's.
// Shapes: 3x3 padded, a 1x1 of stride 1 with odd rows (whose bf16 pass reads an image's rows as
// one, only without rims) and a strided 3x3; rims as the backward by data's and others.
TEST(ConvOpsRims, BackwardByWeightsReadsDyInsideItsRimsOnly) {
  omp_set_num_threads(2);
  const std::vector<ConvShape> shapes = {
      {.N = 2, .H = 8, .W = 8, .C = 20, .K = 36, .R = 3, .S = 3, .pad_h = 1, .pad_w = 1},
      {.N = 1, .H = 7, .W = 7, .C = 16, .K = 32},
      {.N = 1, .H = 9, .W = 11, .C = 16, .K = 16, .R = 3, .S = 3, .stride_h = 2, .stride_w = 2, .pad_h = 1,
       .pad_w = 1}};
  for (const ConvShape& s : shapes) {
    for (const jit::DataType dtype : {jit::DataType::f32, jit::DataType::bf16}) {
      const bool bf16 = dtype == jit::DataType::bf16;
      const ConvBwd bwd(default_conv_config<ConvBwdConfig>({.shape = s, .dtype = dtype}, 2));
      const ActivationLayout bwd_dy = bwd.grad_output_layout();
      const std::pair<std::int64_t, std::int64_t> rims[] = {{bwd_dy.pad_h, bwd_dy.pad_w}, {2, 0}, {1, 3}};
      for (const auto& [rim_h, rim_w] : rims) {
        SCOPED_TRACE(s.to_string() + " " + std::string(jit::to_string(dtype)) + " rims " + std::to_string(rim_h) +
                     " x " + std::to_string(rim_w));
        const ConvDesc d{.shape = s, .dtype = dtype, .grad_output_pad_h = rim_h, .grad_output_pad_w = rim_w};
        for (const ConvUpdConfig& c : {conv_config<ConvUpdConfig>(d), default_conv_config<ConvUpdConfig>(d, 2),
                                       tuned_conv_config<ConvUpdConfig>(d, 2)}) {
          const ConvUpd upd(c);
          const ActivationLayout layout = upd.grad_output_layout();
          ASSERT_EQ(layout.pad_h, rim_h);
          ASSERT_EQ(layout.pad_w, rim_w);
          const std::vector<float> x = random_values(activations(s, s.C, false), 8, bf16);
          const std::vector<float> dy = random_values(activations(s, s.K, true), 9, bf16);
          std::vector<float> dy_blocked = nchw_to_blocked(dy.data(), layout);
          for (std::int64_t n = 0; n < layout.images; ++n) {
            for (std::int64_t kb = 0; kb < layout.channels.blocks(); ++kb) {
              for (std::int64_t y = 0; y < layout.padded_h(); ++y) {
                for (std::int64_t xx = 0; xx < layout.padded_w(); ++xx) {
                  if (y >= rim_h && y < rim_h + layout.h && xx >= rim_w && xx < rim_w + layout.w) continue;
                  const auto at = dy_blocked.begin() + layout.offset(n, kb, y, xx);
                  std::fill(at, at + layout.channels.block, std::numeric_limits<float>::quiet_NaN());
                }
              }
            }
          }
          const Operand xb = operand(nchw_to_blocked(x.data(), upd.input_layout()), bf16);
          const Operand dyb = operand(std::move(dy_blocked), bf16);
          const FilterLayout fl = upd.filter_layout();
          Output dw(fl.size(), bf16);
          upd.run(xb.data(), dyb.data(), dw.data());
          std::vector<float> ref(static_cast<std::size_t>(s.K * s.C * s.R * s.S)), got(ref.size());
          conv_bwd_weights_reference(s, x.data(), dy.data(), ref.data());
          const std::vector<float> blocked = bf16 ? vnni2_to_filter(dw.bf16.data(), fl) : dw.f32;
          blocked_to_kcrs(blocked.data(), got.data(), fl);
          expect_close(got, ref, upd.tolerance());
        }
      }
    }
  }
  ConvUpdConfig negative = conv_config<ConvUpdConfig>(kDesc);
  negative.pad_w_out = -1;
  EXPECT_THAT([&] { ConvUpd{negative}; }, ThrowsMessage<Error>(AllOf(HasSubstr("pad_w_out"), HasSubstr("-1"))));
}

TEST(ConvOpsErrors, EachClassOfBadInputIsNamed) {
  std::vector<float> buffer(1 << 16);
  const ConvFwd conv(conv_config<ConvFwdConfig>(kDesc));
  EXPECT_THAT([&] { conv.run(nullptr, buffer.data(), nullptr, buffer.data()); },
              ThrowsMessage<Error>(HasSubstr("ConvFwd::run: input is null")));
  // Each pass names the buffer that is null.
  const ConvBwd bwd(conv_config<ConvBwdConfig>(kDesc));
  EXPECT_THAT([&] { bwd.run(buffer.data(), nullptr, buffer.data()); },
              ThrowsMessage<Error>(HasSubstr("ConvBwd::run: grad_output is null")));
  EXPECT_THAT([&] { bwd.run_transposed(buffer.data(), buffer.data(), nullptr); },
              ThrowsMessage<Error>(HasSubstr("ConvBwd::run_transposed: grad_input is null")));
  const ConvUpd upd(conv_config<ConvUpdConfig>(kDesc));
  EXPECT_THAT([&] { upd.run(buffer.data(), buffer.data(), nullptr); },
              ThrowsMessage<Error>(HasSubstr("ConvUpd::run: grad_filter is null")));
  // Typed buffers of another type than the configuration's.
  std::vector<jit::bfloat16> halves(1 << 16);
  EXPECT_THAT([&] { conv.run(halves.data(), halves.data(), nullptr, halves.data()); },
              ThrowsMessage<Error>(AllOf(HasSubstr("ConvFwd::run: bf16 buffers"), HasSubstr("f32"))));
  EXPECT_THAT([&] { bwd.run(halves.data(), halves.data(), halves.data()); },
              ThrowsMessage<Error>(HasSubstr("ConvBwd::run: bf16 buffers")));
  EXPECT_THAT([&] { upd.run(halves.data(), halves.data(), halves.data()); },
              ThrowsMessage<Error>(HasSubstr("ConvUpd::run: bf16 buffers")));
  ConvDesc bad = kDesc;
  bad.shape.stride_h = 0;
  EXPECT_THAT([&] { ConvBwd{conv_config<ConvBwdConfig>(bad)}; }, ThrowsMessage<Error>(HasSubstr("stride_h")));
  ConvUpdConfig f64 = conv_config<ConvUpdConfig>(kDesc);
  f64.dtype = jit::DataType::f64;
  EXPECT_THAT([&] { ConvUpd{f64}; }, ThrowsMessage<Error>(AllOf(HasSubstr("dtype"), HasSubstr("f64"))));
  ConvFwdConfig loops = conv_config<ConvFwdConfig>(kDesc);
  loops.loop_string = "Abcdefz";
  EXPECT_THAT([&] { ConvFwd{loops}; }, ThrowsMessage<Error>(AllOf(HasSubstr("loop_string"), HasSubstr("^"))));
}

}  // namespace
}  // namespace weft::ops
