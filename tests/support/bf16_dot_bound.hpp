// The error bound of weft's bf16 kernels built on the BFDotAdd instructions (FEAT_BF16 bfdot and
// bfmmla, Neon and SVE), against an exact sum: the one bound every such kernel's tests check
// (docs/tpp_brgemm.md, "bf16 with bfdot and bfmmla"). The widening kernels and bfmlalb / bfmlalt need none:
// they are brgemm_reference bit for bit.
//
// The instruction (Arm ARM BFDotAdd, FPCR.EBF = 0; tests/tpp/arch/aarch64/
// neon_bf16_instructions_test.cpp has its C++ model and checks qemu against it):
//   acc' = RO(acc + RO(RO(a0 * b0) + RO(a1 * b1)))
// RO: round to odd to fp32 (truncate, set the last bit when inexact: |RO(x) - x| < ulp(x) <=
// 2^-23 |x|), a result below 2^-126 flushed to a zero, a denormal input (bf16 operand or fp32
// accumulator) read as a zero, any NaN the default NaN. The products of two bf16 are exact in fp32
// unless below 2^-126 (then flushed). bfmmla is two BFDotAdd per accumulator lane (k pair 0, then
// pair 1); bfdot one. A kernel's element is a chain of P = BFDotAdd steps (count x pairs of k; for
// bfmmla a zero pair of padding included) on the initial C (beta 1) or 0. Unrolling the chain
// (Higham's recursive summation, each term with at most P + 1 roundings of relative size < u =
// 2^-23). The bfdot kernel's k_split partial chains (2 or 4, the extra ones from -0, added after the
// batch by IEEE fp32 additions: relative error 2^-24 each, no flush) leave each term fewer roundings
// (ceil(P / k_split) + log2(k_split) at most; adding an empty chain is exact): the same bound:
//
//   |acc - S| <= gamma(P + 1) * M + (4 P + 2) * 2^-126,      gamma(n) = n u / (1 - n u),
//
// S = C + sum of a * b over every k and batch entry, exact, with bf16 denormal inputs read as zero
// (the instruction does: a denormal times 1e30 is 0 here, not 1e-10); M = |C| + sum of |a * b|;
// the last term covers each step's flushed products, flushed sums and a denormal initial C.
// A double sum of the products (what the tests compute) is within P * 2^-52 * M of S: the tests
// allow that too (double_sum_slack).
//
// The epilogue in fp32 (IEEE, round to nearest even): + bias adds at most 2^-24 |result| more;
// relu keeps the bound (1-Lipschitz); a bf16 C is rounded by jit::to_bfloat16: 2^-8 |result| more,
// and 2^-126 for an fp32 denormal it flushes.
//
// Special values (inputs finite with products and partial sums far below fp32's overflow, or NaN,
// +-inf, +-0, denormal): the kernel's element is NaN exactly where S (as a double, denormals read as
// zero, + bias, relu) is NaN, +-inf exactly where S is that infinity, else finite within the bound.
// The NaN is the default NaN (no payload survives a BFDotAdd). What does NOT hold: brgemm_reference's
// bits (three roundings per pair, to odd), a denormal times an infinity (NaN here, an infinity in
// the reference), and with huge finite inputs the place where an overflow happens (the pair's sum
// can overflow where the reference's sequence does not, and the reverse).
//
//   double e = weft::test::bf16_dot::accumulator_bound(magnitude, steps);
//   e = weft::test::bf16_dot::after_bias(e, std::fabs(sum_with_bias));    // when there is a bias
//   e = weft::test::bf16_dot::after_bf16_round(e, std::fabs(result));     // a bf16 C
#pragma once

#include <cstdint>

namespace weft::test::bf16_dot {

inline constexpr double kUnit = 0x1p-23;        // round to odd to fp32: |RO(x) - x| < 2^-23 |x|
inline constexpr double kFlush = 0x1p-126;      // a flushed value is below this
inline constexpr double kDoubleUnit = 0x1p-52;  // a test's double sum: each addition within 2^-53 |x|

constexpr double gamma(double n) { return n * kUnit / (1.0 - n * kUnit); }

// |fp32 accumulator - exact sum| for a chain of `steps` BFDotAdd whose products' and initial C's
// magnitudes sum to `magnitude` (see the top of this header).
constexpr double accumulator_bound(double magnitude, std::int64_t steps) {
  const auto p = static_cast<double>(steps);
  return gamma(p + 1.0) * magnitude + (4.0 * p + 2.0) * kFlush;
}

// What a test's double sum of the same terms adds (its own rounding, not the kernel's).
constexpr double double_sum_slack(double magnitude, std::int64_t terms) {
  return static_cast<double>(terms + 1) * kDoubleUnit * magnitude;
}

// After an IEEE fp32 addition (the bias) whose exact result has magnitude `result`.
constexpr double after_bias(double bound, double result) { return bound + 0x1p-24 * (result + bound); }

// After rounding to bf16 (jit::to_bfloat16: nearest even, fp32 denormals flushed) a value of
// magnitude `result` (the exact one).
constexpr double after_bf16_round(double bound, double result) {
  return bound + 0x1p-8 * (result + bound) + kFlush;
}

}  // namespace weft::test::bf16_dot
