// Helpers for the tensor tests: buffers sized from strides, random fills, comparison with the
// reference contraction, and the seed documents' configurations.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "weft/tensor/contraction.hpp"
#include "weft/tensor/reference.hpp"

namespace weft::tensor::test {

// Elements a tensor spans: 1 + sum (size - 1) * stride.
inline std::size_t extent(const Contraction& op, std::int64_t Dim::*stride) {
  std::int64_t e = 1;
  for (const Dim& d : op.dims) e += (d.size - 1) * (d.*stride);
  return static_cast<std::size_t>(e);
}

inline std::vector<float> random_vector(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

struct Tensors {
  std::vector<float> in0, in1, out;
};

inline Tensors make_tensors(const Contraction& op, std::uint32_t seed) {
  return {random_vector(extent(op, &Dim::stride_in0), seed),
          random_vector(extent(op, &Dim::stride_in1), seed + 1),
          random_vector(extent(op, &Dim::stride_out), seed + 2)};
}

inline double reduction_length(const Contraction& op) {
  double k = 1.0;
  for (const Dim& d : op.dims)
    if (d.type == dim_t::k) k *= static_cast<double>(d.size);
  return k;
}

// Compares `got` with the reference applied to a copy of the initial output.
inline void expect_matches_reference(const Contraction& op, const Tensors& initial,
                                     const std::vector<float>& got) {
  std::vector<float> want = initial.out;
  reference_contraction(op, initial.in0.data(), initial.in1.data(), want.data());
  const double tol = 1e-5 * (8.0 + reduction_length(op));
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.size() && bad < 5; ++i)
    if (!(std::fabs(static_cast<double>(got[i]) - want[i]) <= tol * (1.0 + std::fabs(want[i])))) {
      ADD_FAILURE() << "element " << i << ": got " << got[i] << ", want " << want[i] << "\n"
                    << op.describe();
      ++bad;
    }
}

// ---- fp64 -----------------------------------------------------------------------------------------

// Doubles uniform in [-1, 1) with all 53 bits of precision used, so that products and sums round.
inline std::vector<double> random_doubles(std::size_t n, std::uint32_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = dist(gen);
  return v;
}

struct Tensors64 {
  std::vector<double> in0, in1, out;
};

inline Tensors64 make_tensors_fp64(const Contraction& op, std::uint32_t seed) {
  return {random_doubles(extent(op, &Dim::stride_in0), seed),
          random_doubles(extent(op, &Dim::stride_in1), seed + 1),
          random_doubles(extent(op, &Dim::stride_out), seed + 2)};
}

// Compares an fp64 result with the reference (long double sums, rounded once to double).
// GEMM-like: |got - exact| <= gamma * (|first(out)| + sum |in0 * in1|) with gamma = (k + 2) u, the
// bound of any summation order in double (u = 2^-53), carried through the last touch (ReLU, zero,
// copy and none move no two values further apart; square at most 2 |x| times). An fp32 pipeline,
// or a sum in float anywhere, misses this by 8 orders of magnitude. Element-wise: bit for bit
// (every op is one correctly rounded double operation).
inline void expect_matches_reference_fp64(const Contraction& op, const Tensors64& initial,
                                          const std::vector<double>& got) {
  std::vector<double> want = initial.out;
  reference_contraction(op, initial.in0.data(), initial.in1.empty() ? nullptr : initial.in1.data(), want.data());
  std::vector<double> magnitude(want.size(), 0.0);
  double gamma = 0.0;
  if (is_gemm_like(op.main)) {
    Contraction abs_op = op;
    abs_op.first_touch = abs_op.last_touch = prim_t::none;
    std::vector<double> a(initial.in0.size()), b(initial.in1.size());
    std::transform(initial.in0.begin(), initial.in0.end(), a.begin(), [](double x) { return std::fabs(x); });
    std::transform(initial.in1.begin(), initial.in1.end(), b.begin(), [](double x) { return std::fabs(x); });
    for (std::size_t i = 0; i < magnitude.size(); ++i)
      magnitude[i] = std::fabs(unary_value(op.first_touch, initial.out[i]));
    reference_contraction(abs_op, a.data(), b.data(), magnitude.data());
    gamma = (reduction_length(op) + 2.0) * 0x1p-53;
  }
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.size() && bad < 5; ++i) {
    double tol = gamma * magnitude[i];
    if (op.last_touch == prim_t::square)  // |y^2 - x^2| <= t (2 |x| + t), and each square rounds
      tol = tol * (2.0 * std::sqrt(std::fabs(want[i])) + tol) + 0x1p-51 * std::fabs(want[i]);
    if (std::isnan(got[i]) && std::isnan(want[i])) continue;
    if (!(std::fabs(got[i] - want[i]) <= tol)) {
      ADD_FAILURE() << "element " << i << ": got " << got[i] << ", want " << want[i] << " (difference "
                    << got[i] - want[i] << ", bound " << tol << ")\n"
                    << op.describe();
      ++bad;
    }
  }
}

// The seed configurations over (M, N, K, M, N, K) = (32, 32, 8, 32, 32, 32); tests may shrink the
// outer m and n loops to keep the reference fast.
inline Contraction seed_config(prim_t first, prim_t main, prim_t last, bool brgemm_prims,
                               std::int64_t outer_m = 32, std::int64_t outer_n = 32) {
  const exec_t s = exec_t::seq, p = exec_t::prim;
  Contraction op;
  op.first_touch = first;
  op.main = main;
  op.last_touch = last;
  op.dims = {Dim{dim_t::m, s, outer_m, 8192, 0, 32 * outer_n * 32}, Dim{dim_t::n, s, outer_n, 0, 8192, 1024},
             Dim{dim_t::k, brgemm_prims ? p : s, 8, 1024, 1024, 0}, Dim{dim_t::m, p, 32, 1, 0, 1},
             Dim{dim_t::n, p, 32, 0, 32, 32}, Dim{dim_t::k, p, 32, 32, 1, 0}};
  return op;
}

}  // namespace weft::tensor::test
