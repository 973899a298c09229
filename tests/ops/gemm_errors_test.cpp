// What the GEMM operators say of bad input: a weft::Error naming the argument, one test per class
// (null pointer, impossible shape, wrong dtype, bad loop string).
#include <weft/ops/gemm.hpp>

#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <weft/jit/error.hpp>

namespace weft::ops {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

const GemmDesc kDesc{.M = 32, .N = 32, .K = 32};

TEST(GemmOpsErrors, NullBuffersAreNamed) {
  const GemmFwd fwd(gemm_config<GemmFwdConfig>({.M = 32, .N = 32, .K = 32, .bias = true}));
  std::vector<float> buffer(32 * 32);
  float* acts[] = {buffer.data(), nullptr};
  const float* weights[] = {buffer.data()};
  const float* biases[] = {buffer.data()};
  EXPECT_THAT([&] { fwd.run(acts, weights, biases); },
              ThrowsMessage<Error>(HasSubstr("GemmFwd::run: activations[1] is null")));
  acts[1] = buffer.data();
  biases[0] = nullptr;
  EXPECT_THAT([&] { fwd.run(acts, weights, biases); }, ThrowsMessage<Error>(HasSubstr("GemmFwd::run: biases[0] is null")));

  const GemmBwd bwd(gemm_config<GemmBwdConfig>(kDesc));
  EXPECT_THAT([&] { bwd.run(buffer.data(), nullptr, buffer.data()); },
              ThrowsMessage<Error>(HasSubstr("GemmBwd::run: grad_out is null")));
  const GemmUpd upd(gemm_config<GemmUpdConfig>(kDesc));
  EXPECT_THAT([&] { upd.run(buffer.data(), buffer.data(), nullptr); },
              ThrowsMessage<Error>(HasSubstr("GemmUpd::run: grad_weight is null")));
}

TEST(GemmOpsErrors, ImpossibleShapesAreNamed) {
  EXPECT_THAT([] { GemmFwd{gemm_config<GemmFwdConfig>({.M = 32, .N = 0, .K = 32})}; },
              ThrowsMessage<Error>(HasSubstr("N")));
  // An MLP feeds each output into the next layer: M must equal K.
  EXPECT_THAT([] { GemmFwd{gemm_config<GemmFwdConfig>({.M = 32, .N = 32, .K = 64, .layers = 2})}; },
              ThrowsMessage<Error>(HasSubstr("M == K")));
  GemmBwdConfig odd = gemm_config<GemmBwdConfig>({.M = 32, .N = 32, .K = 32, .dtype = jit::DataType::bf16});
  odd.bk = 31;
  EXPECT_THAT([&] { GemmBwd{odd}; }, ThrowsMessage<Error>(HasSubstr("bk = 31 is odd")));
  // Plain activations read whole tiles along the reduction: the tiles must divide it.
  GemmFwdConfig fwd = gemm_config<GemmFwdConfig>({.M = 32, .N = 32, .K = 48});
  fwd.bk = 32;
  fwd.plain_activations = true;
  EXPECT_THAT([&] { GemmFwd{fwd}; }, ThrowsMessage<Error>(HasSubstr("plain activations need K % bk == 0 (K = 48, bk = 32)")));
  GemmUpdConfig upd = gemm_config<GemmUpdConfig>({.M = 32, .N = 40, .K = 32});
  upd.bn = 32;
  upd.plain_input = true;
  EXPECT_THAT([&] { GemmUpd{upd}; }, ThrowsMessage<Error>(HasSubstr("N = 40, bn = 32")));
}

TEST(GemmOpsErrors, WrongDataTypesAreNamed) {
  // A value outside the enum (a corrupted or future descriptor): named, never computed on.
  const auto unknown = static_cast<jit::DataType>(7);
  EXPECT_THAT([&] { GemmUpd{gemm_config<GemmUpdConfig>({.M = 32, .N = 32, .K = 32, .dtype = unknown})}; },
              ThrowsMessage<Error>(AllOf(HasSubstr("dtype"), HasSubstr("f32, in bf16"), HasSubstr("f64"))));
  // float buffers given to an f64 operator, double buffers to an f32 one.
  const GemmFwd fwd64(gemm_config<GemmFwdConfig>({.M = 32, .N = 32, .K = 32, .dtype = jit::DataType::f64}));
  std::vector<float> floats(32 * 32);
  float* float_acts[] = {floats.data(), floats.data()};
  const float* float_weights[] = {floats.data()};
  EXPECT_THAT([&] { fwd64.run(float_acts, float_weights, {}); },
              ThrowsMessage<Error>(AllOf(HasSubstr("GemmFwd::run"), HasSubstr("f32 buffers"), HasSubstr("f64"))));
  const GemmUpd upd32(gemm_config<GemmUpdConfig>(kDesc));
  std::vector<double> doubles(32 * 32);
  EXPECT_THAT([&] { upd32.run(doubles.data(), doubles.data(), doubles.data()); },
              ThrowsMessage<Error>(AllOf(HasSubstr("GemmUpd::run"), HasSubstr("f64 buffers"), HasSubstr("f32"))));
  // float buffers given to a bf16 operator: the kernels would read them as bf16.
  const GemmBwd bwd(gemm_config<GemmBwdConfig>({.M = 32, .N = 32, .K = 32, .dtype = jit::DataType::bf16}));
  std::vector<float> buffer(32 * 32);
  EXPECT_THAT([&] { bwd.run(buffer.data(), buffer.data(), buffer.data()); },
              ThrowsMessage<Error>(AllOf(HasSubstr("GemmBwd::run"), HasSubstr("f32 buffers"), HasSubstr("bf16"))));
}

TEST(GemmOpsErrors, BadLoopStringsAreNamedWithACaret) {
  GemmFwdConfig config = gemm_config<GemmFwdConfig>(kDesc);
  config.loop_string = "aXC";
  EXPECT_THAT([&] { GemmFwd{config}; }, ThrowsMessage<Error>(AllOf(HasSubstr("loop_string"), HasSubstr("^"))));
}

}  // namespace
}  // namespace weft::ops
