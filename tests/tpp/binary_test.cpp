// Binary TPPs against their reference: every op, every broadcast of either input, randomized shapes
// (fixed seeds) with guard pages after every matrix; plans, errors, NaN rules, AVX-512 emission.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "guarded_buffer.hpp"
#include "host_isas.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/jit/error.hpp"
#include "weft/tpp/binary.hpp"

namespace {

using namespace weft::tpp;
using weft::jit::Isa;
using weft::test::GuardedBuffer;

constexpr BinaryOp kOps[] = {BinaryOp::add, BinaryOp::sub, BinaryOp::mul, BinaryOp::div, BinaryOp::min, BinaryOp::max};
constexpr Broadcast kBcasts[] = {Broadcast::none, Broadcast::row, Broadcast::col, Broadcast::scalar};

std::int64_t in_count(Broadcast b, std::int64_t m, std::int64_t n, std::int64_t ld) {
  switch (b) {
    case Broadcast::none: return ld * (n - 1) + m;
    case Broadcast::row: return n;
    case Broadcast::col: return m;
    case Broadcast::scalar: return 1;
  }
  return 0;
}

bool same(float want, float got) { return want == got || (std::isnan(want) && std::isnan(got)); }

void check(const BinaryDesc& d, Isa isa, std::mt19937& rng) {
  GuardedBuffer<float> a(static_cast<std::size_t>(in_count(d.bcast0, d.m, d.n, d.ld_in0)));
  GuardedBuffer<float> b(static_cast<std::size_t>(in_count(d.bcast1, d.m, d.n, d.ld_in1)));
  const std::int64_t c_count = d.ld_out * (d.n - 1) + d.m;
  GuardedBuffer<float> c(static_cast<std::size_t>(c_count));
  std::vector<float> ref(static_cast<std::size_t>(c_count));
  std::uniform_real_distribution<float> dist(-4, 4);
  for (auto& v : a) v = dist(rng);
  for (auto& v : b) v = dist(rng);
  if (a.size() > 2) a[1] = std::numeric_limits<float>::quiet_NaN();
  if (b.size() > 3) b[2] = std::numeric_limits<float>::quiet_NaN();
  for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = c[i] = static_cast<float>(i) + 0.5f;
  binary_reference(d, BinaryArgs{a.data(), b.data(), ref.data()});
  const BinaryArgs args{a.data(), b.data(), c.data()};
  binary_kernel(d, isa)(&args);
  for (std::size_t i = 0; i < ref.size(); ++i) {
    ASSERT_TRUE(same(ref[i], c[i])) << to_string(d) << " element " << i << ": want " << ref[i] << " got " << c[i];
  }
}

TEST(BinaryKernels, EveryOpEveryBroadcastRandomShapes) {
  for (Isa isa : weft::test::runnable_elementwise_isas()) {
    SCOPED_TRACE(std::string("isa ") + std::string(weft::jit::to_string(isa)));
    std::mt19937 rng(424242);
    std::uniform_int_distribution<std::int64_t> dim(1, 80), pad(0, 7);
    for (BinaryOp op : kOps)
      for (Broadcast b0 : kBcasts)
        for (Broadcast b1 : kBcasts)
          for (int trial = 0; trial < 4; ++trial) {
            BinaryDesc d{.op = op, .m = dim(rng), .n = dim(rng), .bcast0 = b0, .bcast1 = b1};
            d.ld_in0 = d.m + pad(rng);
            d.ld_in1 = d.m + pad(rng);
            d.ld_out = d.m + (trial == 0 ? 0 : pad(rng));
            if (trial == 0) d.ld_in0 = d.ld_in1 = d.m;  // the flat path
            check(d, isa, rng);
            if (HasFatalFailure()) return;
          }
  }
}

TEST(BinaryKernels, LargeStreamingAdd) {
  for (Isa isa : weft::test::runnable_elementwise_isas()) {
    SCOPED_TRACE(std::string("isa ") + std::string(weft::jit::to_string(isa)));
    const std::int64_t n = kBinaryNontemporalBytes / 4 + 5;
    const BinaryDesc d{.op = BinaryOp::add, .m = n, .n = 1, .ld_in0 = n, .ld_in1 = n, .ld_out = n};
    ASSERT_TRUE(plan_binary(d, isa).nontemporal);
    std::vector<float> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n)), c(static_cast<std::size_t>(n + 4));
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = static_cast<float>(i % 1000);
      b[i] = 0.25f;
    }
    const BinaryArgs args{a.data(), b.data(), c.data() + 1};
    binary_kernel(d, isa)(&args);
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(c[i + 1], a[i] + 0.25f) << i;
  }
}

// The streaming path (non-temporal stores, B fused into the op where it can be) for every op, with
// guard pages, NaNs, and inputs whose alignment differs from the output's (the head aligns C only).
TEST(BinaryKernels, LargeStreamingEveryOp) {
  for (Isa isa : weft::test::runnable_elementwise_isas()) {
    SCOPED_TRACE(std::string("isa ") + std::string(weft::jit::to_string(isa)));
    const std::int64_t n = kBinaryNontemporalBytes / 4 + 13;
    std::mt19937 rng(77);
    std::uniform_real_distribution<float> dist(-4, 4);
    GuardedBuffer<float> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n), weft::test::Flush::front);
    GuardedBuffer<float> c(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = dist(rng);
      b[i] = i % 97 == 5 ? std::numeric_limits<float>::quiet_NaN() : dist(rng);
    }
    a[3] = std::numeric_limits<float>::quiet_NaN();
    for (BinaryOp op : kOps) {
      const BinaryDesc d{.op = op, .m = n, .n = 1, .ld_in0 = n, .ld_in1 = n, .ld_out = n};
      ASSERT_TRUE(plan_binary(d, isa).nontemporal);
      const BinaryArgs args{a.data(), b.data(), c.data()};
      binary_kernel(d, isa)(&args);
      for (std::size_t i = 0; i < c.size(); ++i) {
        const float want = binary_reference_value(op, a[i], b[i]);
        ASSERT_TRUE(same(want, c[i])) << to_string(op) << " element " << i << ": want " << want << " got " << c[i];
      }
    }
  }
}

// min / max propagate NaN from either operand and order -0 below +0 (IEEE 754-2019 minimum /
// maximum; every pair on every path: nan_rule_test.cpp). They used to ignore a NaN like std::fmax.
TEST(BinaryKernels, MinMaxPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> a{nan, 1, nan, -2, 3, 4, -0.0f, 0.0f, nan}, b{2, nan, nan, -3, 3, 4, 0.0f, -0.0f, 7}, c(9);
  Binary mx(BinaryDesc{.op = BinaryOp::max, .m = 9, .n = 1, .ld_in0 = 9, .ld_in1 = 9, .ld_out = 9});
  mx(a.data(), b.data(), c.data());
  EXPECT_TRUE(std::isnan(c[0]));
  EXPECT_TRUE(std::isnan(c[1]));
  EXPECT_TRUE(std::isnan(c[2]));
  EXPECT_EQ(c[3], -2);
  EXPECT_TRUE(c[6] == 0 && !std::signbit(c[6]));
  EXPECT_TRUE(c[7] == 0 && !std::signbit(c[7]));
  EXPECT_TRUE(std::isnan(c[8]));
  Binary mn(BinaryDesc{.op = BinaryOp::min, .m = 9, .n = 1, .ld_in0 = 9, .ld_in1 = 9, .ld_out = 9});
  mn(a.data(), b.data(), c.data());
  EXPECT_TRUE(std::isnan(c[0]));
  EXPECT_EQ(c[3], -3);
  EXPECT_TRUE(c[6] == 0 && std::signbit(c[6]));
  EXPECT_TRUE(c[7] == 0 && std::signbit(c[7]));
}

TEST(BinaryPlan, FlatOnlyWhenContiguous) {
  const auto p = plan_binary(BinaryDesc{.op = BinaryOp::add, .m = 20, .n = 3, .ld_in0 = 20, .ld_in1 = 20, .ld_out = 20}, Isa::avx2);
  EXPECT_TRUE(p.flat);
  EXPECT_EQ(p.rows, 60);
  EXPECT_EQ(p.full_vectors, 7);
  EXPECT_EQ(p.tail, 4);
  EXPECT_FALSE(plan_binary(BinaryDesc{.op = BinaryOp::add, .m = 20, .n = 3, .ld_in0 = 20, .ld_in1 = 21, .ld_out = 20}, Isa::avx2).flat);
  EXPECT_FALSE(plan_binary(BinaryDesc{.op = BinaryOp::add, .m = 20, .n = 3, .ld_in0 = 20, .ld_out = 20, .bcast1 = Broadcast::col}, Isa::avx2).flat);
  EXPECT_TRUE(plan_binary(BinaryDesc{.op = BinaryOp::add, .m = 20, .n = 3, .ld_in0 = 20, .ld_out = 20, .bcast1 = Broadcast::scalar}, Isa::avx2).flat);
}

TEST(BinaryErrors, NamedErrors) {
  EXPECT_THROW(Binary(BinaryDesc{.op = BinaryOp::add, .m = 0, .n = 1, .ld_in0 = 1, .ld_in1 = 1, .ld_out = 1}), weft::Error);
  EXPECT_THROW(Binary(BinaryDesc{.op = BinaryOp::add, .m = 8, .n = 2, .ld_in0 = 7, .ld_in1 = 8, .ld_out = 8}), weft::Error);
  EXPECT_THROW(Binary(BinaryDesc{.op = BinaryOp::add, .m = 8, .n = 2, .ld_in0 = 8, .ld_in1 = 8, .ld_out = 4}), weft::Error);
  EXPECT_THROW(Binary(BinaryDesc{.op = static_cast<BinaryOp>(77), .m = 8, .n = 2, .ld_in0 = 8, .ld_in1 = 8, .ld_out = 8}), weft::Error);
  // A broadcast input needs no leading dimension.
  EXPECT_NO_THROW(Binary(BinaryDesc{.op = BinaryOp::add, .m = 8, .n = 2, .ld_in0 = 8, .ld_out = 8, .bcast1 = Broadcast::row}));
}

TEST(BinaryEmission, Avx512EmitsOnAnyHost) {
  WEFT_SKIP_UNLESS_BUILT_FOR(weft::jit::Isa::avx512);
  for (BinaryOp op : kOps)
    for (Broadcast b0 : kBcasts)
      for (Broadcast b1 : kBcasts) {
        const BinaryDesc d{.op = op, .m = 37, .n = 5, .ld_in0 = 40, .ld_in1 = 37, .ld_out = 37, .bcast0 = b0, .bcast1 = b1};
        EXPECT_GT(binary_code_size(d, Isa::avx512), 0u) << to_string(d);
      }
  const std::int64_t n = kBinaryNontemporalBytes / 4;
  EXPECT_GT(binary_code_size(BinaryDesc{.op = BinaryOp::max, .m = n, .n = 1, .ld_in0 = n, .ld_in1 = n, .ld_out = n}, Isa::avx512), 0u);
}

}  // namespace
