// Checking a sample's result against a double-precision reference: the error norms every sample
// prints, the FP32 tolerance of a sum, and the random inputs (fixed seeds) the samples compute on.
#pragma once

#include <cstdint>
#include <string>

namespace weft::samples {

struct ErrorNorms {
  double max_abs_error = 0;     // max |c - ref|
  double max_abs_ref = 0;       // max |ref|
  double l2_rel_error = 0;      // ||c - ref||_2 / ||ref||_2 (or ||c - ref||_2 when ref is 0)
  std::int64_t non_finite = 0;  // entries of c that are NaN or infinite where ref is finite
  bool passed(double tolerance) const { return non_finite == 0 && l2_rel_error <= tolerance; }
  std::string to_string() const;
};

ErrorNorms compare(const float* c, const float* ref, std::int64_t count);

// Relative L2 tolerance for FP32 sums of `terms` products against double-precision references:
// the rounding error of a float dot product grows with its length (worst case linearly, typically
// like sqrt(terms)).
double sum_tolerance(std::int64_t terms);

// Fills `count` floats uniformly in [-1, 1) from a fixed seed.
void fill_random(float* data, std::int64_t count, std::uint64_t seed);

}  // namespace weft::samples
