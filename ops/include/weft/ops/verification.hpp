// Checking a pass's result against a double-precision reference: the error norms every sample
// prints, the FP32 and FP64 tolerances of a sum, the element-wise bound of a bf16 result, and the
// random inputs (fixed seeds) the tests and samples compute on.
//
//   fill_random(a.data(), M * K, /*seed=*/1);
//   ErrorNorms e = compare(c.data(), ref.data(), M * N);
//   bool ok = e.passed(sum_tolerance(K));                          // f32
//   ok = compare_within(c.data(), ref.data(), magnitudes, M * N, pass.bf16_sum()).passed(0);  // bf16
//   ok = compare(c64.data(), ref64.data(), M * N).passed(sum_tolerance_f64(K));     // f64
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace weft::ops {

struct ErrorNorms {
  double max_abs_error = 0;     // max |c - ref|
  double max_abs_ref = 0;       // max |ref|
  double l2_rel_error = 0;      // ||c - ref||_2 / ||ref||_2 (or ||c - ref||_2 when ref is 0)
  std::int64_t non_finite = 0;  // entries of c that are NaN or infinite where ref is finite
  // With element-wise bounds (compare_within): the check is that every |c - ref| is within its
  // bound, instead of the relative L2 error within a tolerance.
  bool bounded = false;
  std::int64_t beyond_bound = 0;    // entries whose error exceeds their bound
  double worst_error_to_bound = 0;  // max |c - ref| / bound
  bool passed(double tolerance) const {
    return non_finite == 0 && (bounded ? beyond_bound == 0 : l2_rel_error <= tolerance);
  }
  std::string to_string() const;
};

ErrorNorms compare(const float* c, const float* ref, std::int64_t count);
// An f64 result against a reference summed in double (gemm_reference's double overload).
ErrorNorms compare(const double* c, const double* ref, std::int64_t count);

// How each element of a bf16 result was summed from bf16 inputs (exact products) in fp32: what its
// error bound derives from (docs/gemm_sample.md, "bf16").
struct Bf16Sum {
  std::int64_t terms = 0;      // products (and a bias) summed into each element
  std::int64_t additions = 0;  // fp32 additions that may round: the terms', plus one per call that
                               // re-reads the output, plus those of reducing partial copies
  std::int64_t roundings = 1;  // roundings of the running sum to bf16, the final store included
  // With roundings > 1: the terms each call adds (the last call may add fewer). The running sum is
  // rounded after the first chunk_terms terms, after 2 chunk_terms, ...
  std::int64_t chunk_terms = 0;
};

// Per element of a result, the magnitudes its bf16 bound scales with (gemm_reference computes them):
// `terms`, the sum of the absolute values of its terms (sum |a||b| + |bias|); `partials`, the sum of
// the absolute values of the exact partial sums the running sum was rounded at (after each call but
// the last, Bf16Sum::chunk_terms apart), empty when unknown (then bounded by (roundings - 1) terms).
struct Bf16Magnitudes {
  std::vector<double> terms, partials;
};

// The bound on |c - ref| for one element c of a bf16 result: ref the exact value (computed in
// double, stored as float), S its terms' magnitude and P its partials' (as in Bf16Magnitudes).
// With u = 2^-24, n additions, r roundings, t terms, q = n u + (r - 1) 2^-8:
//   (2^-8 + 2^-22) |ref| + (1 + 2^-8) (n u S + 2^-8 P + (n + t) 2^-126) / (1 - q) + t 2^-51 S
// (the first term is the final rounding, the second the fp32 sums and intermediate roundings, the
// last the double reference's own error; derivation in docs/gemm_sample.md).
double bf16_error_bound(double ref, double terms_magnitude, double partials_magnitude, const Bf16Sum& sum);

// compare() plus the bf16 bound for every element.
ErrorNorms compare_within(const float* c, const float* ref, const Bf16Magnitudes& magnitudes, std::int64_t count,
                          const Bf16Sum& sum);

// Relative L2 tolerance for FP32 sums of `terms` products against double-precision references:
// the rounding error of a float dot product grows with its length (worst case linearly, typically
// like sqrt(terms)).
double sum_tolerance(std::int64_t terms);
// The same for FP64 sums against a reference that sums in double too (in another order): the
// relative L2 error of two double sums of `terms` products. An f32 computation misses it by orders
// of magnitude.
double sum_tolerance_f64(std::int64_t terms);

// The relative L2 tolerance of an f64 result read back as float against the double reference
// rounded to float (the samples' float-based checks): each side rounded once, at most 2^-24
// relative, the f64 sums' own error far below. An f32 computation of the same sums misses it for
// all but the shortest sums.
constexpr double kF64CheckedAsFloat = 0x1p-22;

// Fills `count` floats uniformly in [-1, 1) from a fixed seed.
void fill_random(float* data, std::int64_t count, std::uint64_t seed);
// Fills `count` doubles uniformly in [-1, 1) from a fixed seed: all 53 bits random, so that a
// computation that rounds its inputs to float shows.
void fill_random(double* data, std::int64_t count, std::uint64_t seed);

}  // namespace weft::ops
