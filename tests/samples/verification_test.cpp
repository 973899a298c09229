// The bf16 error bound of the samples' checks (samples/common/verification.hpp): it holds for sums
// computed the way the bf16 kernels compute them (exact products of bf16 values, fp32 additions,
// the running sum rounded to bf16 after every call), whatever the order, the chunking and the
// cancellation; it is tight (a one-call sum reaches most of it); and compare_within reports the
// elements beyond it.
#include "verification.hpp"

#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include <weft/jit/bfloat16.hpp>

namespace {

using weft::jit::to_bfloat16;
using weft::jit::to_float;
using weft::samples::Bf16Sum;

float bf16_value(std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::uniform_int_distribution<int> scale(-6, 6);
  return to_float(to_bfloat16(std::ldexp(u(rng), scale(rng))));
}

TEST(Bf16ErrorBound, HoldsForChunkedFp32SumsAndIsTight) {
  std::mt19937_64 rng(7);
  double worst_single_call = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const int terms = 1 + static_cast<int>(rng() % 300);
    const int chunks = 1 + static_cast<int>(rng() % 6);
    std::vector<float> a(static_cast<std::size_t>(terms)), b(a.size());
    const std::size_t half = a.size() / 2;
    for (std::size_t t = 0; t < a.size(); ++t) {
      // Every fourth trial cancels: the products of the second half nearly undo the first half's.
      const bool cancel = trial % 4 == 0 && t >= half && half > 0;
      a[t] = cancel ? a[t - half] : bf16_value(rng);
      b[t] = cancel ? to_float(to_bfloat16(-b[t - half] * 0.99f)) : bf16_value(rng);
    }
    double exact = 0, magnitude = 0;
    for (std::size_t t = 0; t < a.size(); ++t) {
      exact += static_cast<double>(a[t]) * b[t];  // products of bf16 values are exact in double
      magnitude += std::fabs(static_cast<double>(a[t]) * b[t]);
    }
    // The kernels: calls over consecutive chunks; each starts from the bf16 output (beta = 1
    // after the first), adds its exact fp32 products one by one, and stores bf16.
    float stored = 0;
    const auto calls = static_cast<std::size_t>(chunks);
    for (std::size_t c = 0; c < calls; ++c) {
      float acc = c == 0 ? 0.0f : stored;
      for (std::size_t t = a.size() * c / calls; t < a.size() * (c + 1) / calls; ++t) acc += a[t] * b[t];
      stored = to_float(to_bfloat16(acc));
    }
    const Bf16Sum how{.terms = terms, .additions = terms + chunks, .roundings = chunks};
    const auto ref = static_cast<float>(exact);
    const double bound = weft::samples::bf16_error_bound(ref, magnitude, how);
    const double error = std::fabs(static_cast<double>(stored) - ref);
    ASSERT_LE(error, bound) << "trial " << trial << ": " << terms << " terms in " << chunks << " calls";
    if (chunks == 1 && magnitude > 0) worst_single_call = std::max(worst_single_call, error / bound);
  }
  // One call: the final rounding dominates, and some sum comes close to its half ulp.
  EXPECT_GT(worst_single_call, 0.5);
}

TEST(Bf16ErrorBound, CompareWithinCountsWhatIsBeyondIt) {
  const Bf16Sum how{.terms = 4, .additions = 5, .roundings = 1};
  const float ref[] = {1.0f, 2.0f, 0.0f, 1.0f};
  const double magnitude[] = {1.0, 2.0, 4.0, 1.0};
  const double b0 = weft::samples::bf16_error_bound(1.0, 1.0, how);
  EXPECT_GT(b0, std::ldexp(1.0, -8));  // the final rounding of 1.0, and a little more
  EXPECT_LT(b0, std::ldexp(1.0, -7));
  const float c[] = {1.0f + std::ldexp(1.0f, -8), 2.5f, 0.0f, NAN};
  const auto e = weft::samples::compare_within(c, ref, magnitude, 4, how);
  EXPECT_TRUE(e.bounded);
  EXPECT_EQ(e.beyond_bound, 1);  // 2.5 against 2
  EXPECT_EQ(e.non_finite, 1);
  EXPECT_FALSE(e.passed(1.0));  // the L2 tolerance does not apply to a bounded comparison
  const auto good = weft::samples::compare_within(c, ref, magnitude, 1, how);
  EXPECT_TRUE(good.passed(0.0));
  EXPECT_NEAR(good.worst_error_to_bound, std::ldexp(1.0, -8) / b0, 1e-12);
}

}  // namespace
