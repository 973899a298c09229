// The bf16 error bound of the passes' checks (ops/include/weft/ops/verification.hpp): it holds for sums
// computed the way the bf16 kernels compute them (exact products of bf16 values, fp32 additions,
// the running sum rounded to bf16 after every call), whatever the chunking and the cancellation;
// it is tight (sums reach a good part of it); and compare_within reports the elements beyond it.
#include <weft/ops/verification.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include <weft/jit/bfloat16.hpp>

namespace {

using weft::jit::to_bfloat16;
using weft::jit::to_float;
using weft::ops::Bf16Sum;

float bf16_value(std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::uniform_int_distribution<int> scale(-6, 6);
  return to_float(to_bfloat16(std::ldexp(u(rng), scale(rng))));
}

TEST(Bf16ErrorBound, HoldsForChunkedFp32SumsAndIsTight) {
  std::mt19937_64 rng(7);
  double worst[2] = {0, 0};  // max error / bound over one-call and several-call sums
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
    // The kernels: calls over consecutive chunks of `per_call` terms; each starts from the bf16
    // output (beta = 1 after the first), adds its exact fp32 products one by one, and stores bf16.
    const std::size_t per_call = (a.size() + static_cast<std::size_t>(chunks) - 1) / static_cast<std::size_t>(chunks);
    float stored = 0;
    double exact = 0, magnitude = 0, partials = 0;
    int calls = 0;
    for (std::size_t begin = 0; begin < a.size(); begin += per_call, ++calls) {
      if (begin > 0) partials += std::fabs(exact);  // the exact sum the previous call rounded
      float acc = begin == 0 ? 0.0f : stored;
      for (std::size_t t = begin; t < std::min(a.size(), begin + per_call); ++t) {
        acc += a[t] * b[t];
        exact += static_cast<double>(a[t]) * b[t];  // products of bf16 values are exact in double
        magnitude += std::fabs(static_cast<double>(a[t]) * b[t]);
      }
      stored = to_float(to_bfloat16(acc));
    }
    const Bf16Sum how{.terms = terms, .additions = terms + calls, .roundings = calls,
                      .chunk_terms = static_cast<std::int64_t>(per_call)};
    const auto ref = static_cast<float>(exact);
    const double error = std::fabs(static_cast<double>(stored) - ref);
    // With the exact partial sums, and with the fallback that bounds each by the terms' magnitude.
    const double bound = weft::ops::bf16_error_bound(ref, magnitude, partials, how);
    const double loose = weft::ops::bf16_error_bound(ref, magnitude, (calls - 1) * magnitude, how);
    ASSERT_LE(error, bound) << "trial " << trial << ": " << terms << " terms in " << calls << " calls";
    ASSERT_LE(bound, loose);
    if (magnitude > 0) worst[calls == 1 ? 0 : 1] = std::max(worst[calls == 1 ? 0 : 1], error / bound);
  }
  // The bound is tight: with one call the final rounding dominates and some sum comes close to
  // its half ulp; with several, the intermediate roundings reach a good part of theirs.
  EXPECT_GT(worst[0], 0.5);
  EXPECT_GT(worst[1], 0.25);
}

TEST(Bf16ErrorBound, CompareWithinCountsWhatIsBeyondIt) {
  const Bf16Sum how{.terms = 4, .additions = 5, .roundings = 1};
  const float ref[] = {1.0f, 2.0f, 0.0f, 1.0f};
  const weft::ops::Bf16Magnitudes magnitude{.terms = {1.0, 2.0, 4.0, 1.0}, .partials = {}};
  const double b0 = weft::ops::bf16_error_bound(1.0, 1.0, 0.0, how);
  EXPECT_GT(b0, std::ldexp(1.0, -8));  // the final rounding of 1.0, and a little more
  EXPECT_LT(b0, std::ldexp(1.0, -7));
  const float c[] = {1.0f + std::ldexp(1.0f, -8), 2.5f, 0.0f, NAN};
  const auto e = weft::ops::compare_within(c, ref, magnitude, 4, how);
  EXPECT_TRUE(e.bounded);
  EXPECT_EQ(e.beyond_bound, 1);  // 2.5 against 2
  EXPECT_EQ(e.non_finite, 1);
  EXPECT_FALSE(e.passed(1.0));  // the L2 tolerance does not apply to a bounded comparison
  const auto good = weft::ops::compare_within(c, ref, magnitude, 1, how);
  EXPECT_TRUE(good.passed(0.0));
  EXPECT_NEAR(good.worst_error_to_bound, std::ldexp(1.0, -8) / b0, 1e-12);
}

}  // namespace
