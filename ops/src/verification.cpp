#include <weft/ops/verification.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

namespace weft::ops {

namespace {

template <class T>
ErrorNorms compare_values(const T* c, const T* ref, std::int64_t count) {
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

}  // namespace

ErrorNorms compare(const float* c, const float* ref, std::int64_t count) { return compare_values(c, ref, count); }

ErrorNorms compare(const double* c, const double* ref, std::int64_t count) { return compare_values(c, ref, count); }

std::string ErrorNorms::to_string() const {
  char text[300];
  std::snprintf(text, sizeof text, "max |err| %.3e  max |ref| %.3e  rel L2 err %.3e  non-finite %lld",
                max_abs_error, max_abs_ref, l2_rel_error, static_cast<long long>(non_finite));
  std::string s = text;
  if (bounded) {
    std::snprintf(text, sizeof text, "; bf16 bound per element: %lld beyond it, worst |err| at %.3g of its bound",
                  static_cast<long long>(beyond_bound), worst_error_to_bound);
    s += text;
  }
  return s;
}

double bf16_error_bound(double ref, double terms_magnitude, double partials_magnitude, const Bf16Sum& sum) {
  const double u = std::ldexp(1.0, -24), bf16_u = std::ldexp(1.0, -8);
  const double additions = static_cast<double>(sum.additions), terms = static_cast<double>(sum.terms);
  const double q = additions * u + static_cast<double>(sum.roundings - 1) * bf16_u;
  if (q >= 1) return INFINITY;  // nothing to bound: the sum may have lost every digit
  const double flushed = (additions + terms) * std::ldexp(1.0, -126);
  const double carried = additions * u * terms_magnitude + bf16_u * partials_magnitude + flushed;
  return (bf16_u + std::ldexp(1.0, -22)) * std::fabs(ref) + (1 + bf16_u) * carried / (1 - q) +
         terms * std::ldexp(1.0, -51) * terms_magnitude;
}

ErrorNorms compare_within(const float* c, const float* ref, const Bf16Magnitudes& magnitudes, std::int64_t count,
                          const Bf16Sum& sum) {
  ErrorNorms e = compare(c, ref, count);
  e.bounded = true;
  const bool partials_known = !magnitudes.partials.empty();
  for (std::int64_t i = 0; i < count; ++i) {
    if (!std::isfinite(c[i])) continue;  // counted as non-finite (or equal to a non-finite ref)
    const auto at = static_cast<std::size_t>(i);
    const double terms = magnitudes.terms[at];
    // Unknown partial sums: each is at most the terms' magnitude.
    const double partials = partials_known ? magnitudes.partials[at] : static_cast<double>(sum.roundings - 1) * terms;
    const double error = std::fabs(static_cast<double>(c[i]) - ref[i]);
    const double bound = bf16_error_bound(ref[i], terms, partials, sum);
    if (error > bound) ++e.beyond_bound;
    e.worst_error_to_bound = std::max(e.worst_error_to_bound, bound > 0 ? error / bound : (error > 0 ? INFINITY : 0));
  }
  return e;
}

double sum_tolerance(std::int64_t terms) {
  // Float epsilon is 6e-8; a sum of n terms loses about sqrt(n) of it on random data. Allow a
  // factor of 20 on top, and never less than 1e-6.
  return std::max(1e-6, 20 * 6e-8 * std::sqrt(static_cast<double>(terms)));
}

double sum_tolerance_f64(std::int64_t terms) {
  // Double epsilon is 1.1e-16: the same rule, scaled (an f32 sum is off by about 1e-7).
  return std::max(1e-14, 20 * 1.1e-16 * std::sqrt(static_cast<double>(terms)));
}

void fill_random(float* data, std::int64_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (std::int64_t i = 0; i < count; ++i) data[i] = uniform(rng);
}

void fill_random(double* data, std::int64_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (std::int64_t i = 0; i < count; ++i) data[i] = uniform(rng);
}

}  // namespace weft::ops
