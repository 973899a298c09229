#include "verification.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

namespace weft::samples {

ErrorNorms compare(const float* c, const float* ref, std::int64_t count) {
  ErrorNorms e;
  double diff2 = 0, ref2 = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    const double r = ref[i], v = c[i];
    if (!std::isfinite(v) && std::isfinite(r)) {
      ++e.non_finite;
      continue;
    }
    const double d = std::fabs(v - r);
    e.max_abs_error = std::max(e.max_abs_error, d);
    e.max_abs_ref = std::max(e.max_abs_ref, std::fabs(r));
    diff2 += d * d;
    ref2 += r * r;
  }
  e.l2_rel_error = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  return e;
}

std::string ErrorNorms::to_string() const {
  char text[200];
  std::snprintf(text, sizeof text, "max |err| %.3e  max |ref| %.3e  rel L2 err %.3e  non-finite %lld",
                max_abs_error, max_abs_ref, l2_rel_error, static_cast<long long>(non_finite));
  return text;
}

double sum_tolerance(std::int64_t terms) {
  // Float epsilon is 6e-8; a sum of n terms loses about sqrt(n) of it on random data. Allow a
  // factor of 20 on top, and never less than 1e-6.
  return std::max(1e-6, 20 * 6e-8 * std::sqrt(static_cast<double>(terms)));
}

void fill_random(float* data, std::int64_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (std::int64_t i = 0; i < count; ++i) data[i] = uniform(rng);
}

}  // namespace weft::samples
