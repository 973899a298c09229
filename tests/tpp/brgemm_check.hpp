// The BRGEMM tests' harness: a case (descriptor, batch count, guard-page placement, seed, an optional
// plan of its own) is run on the generated kernel and on brgemm_reference over guarded operands,
// and compared bit for bit (or, for plans that sum in another order, against the exact sum).
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "emitters.hpp"
#include "guarded_buffer.hpp"
#include "host_isas.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/tpp/brgemm.hpp"

namespace weft::test::brgemm {

using weft::tpp::BrgemmActivation;
using weft::tpp::BrgemmArgs;
using weft::tpp::BrgemmBatch;
using weft::tpp::BrgemmBias;
using weft::tpp::Brgemm;
using weft::tpp::BrgemmDesc;
using weft::tpp::BrgemmKernelFn;
using weft::tpp::BrgemmPlan;
using weft::tpp::BrgemmPlanOptions;
using weft::tpp::UnaryOp;

inline bool runs_avx2() { return weft::jit::can_run(weft::jit::Isa::avx2, weft::jit::cpu_features()); }
// Whether an ISA of this build runs here (avx2 or avx512 on x86-64, neon on AArch64): the tests of
// the BRGEMM contract run on each; those of one planner's choices (x86's dot tiles, alternative
// plans) keep runs_avx2().
inline bool runs_generated_code() { return !weft::test::runnable_isas().empty(); }

struct Case {
  BrgemmDesc desc;
  std::int64_t count = 1;
  Flush flush = Flush::back;
  std::uint32_t seed = 1;
  BrgemmPlanOptions options{};  // non-default: emit this plan directly instead of the cached kernel
  bool custom_plan = false;
};

inline std::string describe(const Case& c) {
  return to_string(c.desc) + " count=" + std::to_string(c.count) +
         (c.flush == Flush::back ? " flush=back" : " flush=front") + " seed=" + std::to_string(c.seed);
}

// Where B_i(p, j) lies in B_i, whichever way the descriptor stores B.
inline std::int64_t b_index(const BrgemmDesc& d, std::int64_t p, std::int64_t j) {
  return d.b_transposed ? p * d.ldb + j : p + j * d.ldb;
}

// The batch entries live in one guarded buffer each for A and B, laid out so that the first and last
// element of the buffer are used: an access one element before or after faults.
struct Operands {
  Operands(const Case& c, std::mt19937& rng)
      : d(c.desc),
        a_extent(d.lda * (d.k - 1) + d.m),
        b_extent(b_index(d, d.k - 1, d.n - 1) + 1),
        c_extent(d.ldc * (d.n - 1) + d.m),
        // A gap between batch entries, so that strides and offsets differ from the extent.
        stride_a(a_extent + 3),
        stride_b(b_extent + 5),
        count(c.count),
        a(static_cast<std::size_t>(std::max<std::int64_t>(1, (count - 1) * stride_a + a_extent)), c.flush),
        b(static_cast<std::size_t>(std::max<std::int64_t>(1, (count - 1) * stride_b + b_extent)), c.flush),
        out(static_cast<std::size_t>(c_extent), c.flush),
        bias(static_cast<std::size_t>(d.bias == BrgemmBias::per_col ? d.n : d.m), c.flush) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (float& x : a) x = u(rng);
    for (float& x : b) x = u(rng);
    for (float& x : out) x = u(rng);
    for (float& x : bias) x = u(rng);
    // Offsets in a shuffled order (batch entries need not be in memory order).
    for (std::int64_t i = 0; i < count; ++i) {
      offsets_a.push_back(i * stride_a);
      offsets_b.push_back(i * stride_b);
    }
    std::shuffle(offsets_a.begin(), offsets_a.end(), rng);
    std::shuffle(offsets_b.begin(), offsets_b.end(), rng);
    for (std::int64_t i = 0; i < count; ++i) {
      addresses_a.push_back(a.data() + offsets_a[i]);
      addresses_b.push_back(b.data() + offsets_b[i]);
    }
  }

  BrgemmArgs args(float* c) const {
    BrgemmArgs r;
    r.a = a.data();
    r.b = b.data();
    r.c = c;
    r.count = count;
    r.stride_a = stride_a;
    r.stride_b = stride_b;
    r.offsets_a = offsets_a.data();
    r.offsets_b = offsets_b.data();
    r.addresses_a = addresses_a.data();
    r.addresses_b = addresses_b.data();
    r.bias = d.bias == BrgemmBias::none ? nullptr : bias.data();
    return r;
  }

  BrgemmDesc d;
  std::int64_t a_extent, b_extent, c_extent, stride_a, stride_b, count;
  GuardedBuffer<float> a, b, out, bias;
  std::vector<std::int64_t> offsets_a, offsets_b;
  std::vector<const void*> addresses_a, addresses_b;
};

inline bool same(float x, float y) {
  return std::bit_cast<std::uint32_t>(x) == std::bit_cast<std::uint32_t>(y) || (std::isnan(x) && std::isnan(y));
}

inline constexpr UnaryOp kElementwise[] = {UnaryOp::copy,    UnaryOp::relu,    UnaryOp::square,    UnaryOp::reciprocal,
                                    UnaryOp::sqrt,    UnaryOp::exp,     UnaryOp::sigmoid,   UnaryOp::tanh,
                                    UnaryOp::gelu,    UnaryOp::increment, UnaryOp::decrement, UnaryOp::scale};

// Transcendental epilogues are compared with the unary TPPs' documented bound (the reference
// evaluates them in double); everything else must match bit for bit.
inline bool close_enough(const BrgemmDesc& d, float got, float want) {
  if (same(got, want)) return true;
  if (d.activation != BrgemmActivation::unary) return false;
  switch (d.unary) {
    case UnaryOp::exp:
    case UnaryOp::sigmoid:
    case UnaryOp::tanh:
    case UnaryOp::gelu:
      return std::fabs(got - want) <= 2e-6f * std::fabs(want) + 1e-37f;
    default: return false;
  }
}

// For plans that sum in another order than the reference (k_split > 1, dot tiles): the sum before
// the epilogue is within `bound` of the exact value (double precision, bias included), so the
// result must be what the epilogue makes of some value in [exact - bound, exact + bound], give or
// take the epilogue's own rounding.
inline bool within_rounding(const BrgemmDesc& d, float got, double exact, double bound) {
  const double lo = exact - bound, hi = exact + bound;
  if (d.activation == BrgemmActivation::none) return got >= lo && got <= hi;
  const UnaryOp op = d.activation == BrgemmActivation::relu ? UnaryOp::relu : d.unary;
  if ((op == UnaryOp::reciprocal || op == UnaryOp::sqrt) && lo <= 0.0) return true;  // a pole / NaN edge within reach
  auto f = [&](double x) { return static_cast<double>(unary_reference_value(op, static_cast<float>(x), d.unary_alpha)); };
  double low = std::min(f(lo), f(hi)), high = std::max(f(lo), f(hi));
  // Interior extremes of the non-monotonic ops.
  for (double crit : {0.0, -0.75179}) {
    if ((op == UnaryOp::square && crit == 0.0) || (op == UnaryOp::gelu && crit < 0.0)) {
      if (lo < crit && crit < hi) {
        low = std::min(low, f(crit));
        high = std::max(high, f(crit));
      }
    }
  }
  const double slack = 4e-6 * std::max(std::fabs(low), std::fabs(high)) + 1e-37;
  return got >= low - slack && got <= high + slack;
}

// Runs the case on the generated kernel and on the reference. Plans in the reference order sum
// like it (fused multiply-adds, same order), so the results must agree bit for bit (NaNs: any
// payload); the others are checked against the exact sum with a rounding bound.
inline void check_on(const Case& c, weft::jit::Isa isa) {
  SCOPED_TRACE(describe(c) + " on " + std::string(weft::jit::to_string(isa)));
  std::mt19937 rng(c.seed);
  Operands ops(c, rng);
  std::vector<float> expected(ops.out.begin(), ops.out.end());
  brgemm_reference(c.desc, ops.args(expected.data()));
  const std::vector<float> before(ops.out.begin(), ops.out.end());

  const BrgemmPlan plan = plan_brgemm(c.desc, isa, c.custom_plan ? c.options : BrgemmPlanOptions{});
  SCOPED_TRACE(to_string(plan));
  if (c.custom_plan) {
    auto code = weft::tpp::detail::emit_kernel(c.desc, plan);
    auto fn = code->finalize<BrgemmKernelFn>("brgemm_test");
    const BrgemmArgs args = ops.args(ops.out.data());
    fn(&args);
  } else {
    const Brgemm gemm(c.desc, isa);
    ASSERT_EQ(gemm.plan(), plan);
    gemm(ops.args(ops.out.data()));
  }
  const BrgemmDesc& d = c.desc;
  // Batch entry e: the offsets and the addresses name the same (shuffled) pairs.
  auto a_at = [&](std::int64_t e) {
    return d.batch == BrgemmBatch::strided ? ops.a.data() + e * ops.stride_a : static_cast<const float*>(ops.addresses_a[e]);
  };
  auto b_at = [&](std::int64_t e) {
    return d.batch == BrgemmBatch::strided ? ops.b.data() + e * ops.stride_b : static_cast<const float*>(ops.addresses_b[e]);
  };
  int reported = 0;
  for (std::int64_t j = 0; j < d.n; ++j)
    for (std::int64_t i = 0; i < d.ldc && i + j * d.ldc < ops.c_extent; ++i) {
      const std::size_t at = static_cast<std::size_t>(i + j * d.ldc);
      bool ok = false;
      if (plan.reference_order() || i >= d.m) {
        ok = close_enough(d, ops.out[at], expected[at]);  // rows past m: untouched
      } else {
        double exact = d.beta == 1 ? before[at] : 0.0, magnitude = std::fabs(exact);
        for (std::int64_t e = 0; e < c.count; ++e)
          for (std::int64_t p = 0; p < d.k; ++p) {
            const double term = static_cast<double>(a_at(e)[i + p * d.lda]) * b_at(e)[b_index(d, p, j)];
            exact += term;
            magnitude += std::fabs(term);
          }
        if (d.bias != BrgemmBias::none) {
          const double bias = ops.bias[static_cast<std::size_t>(d.bias == BrgemmBias::per_row ? i : j)];
          exact += bias;
          magnitude += std::fabs(bias);
        }
        const double bound = std::ldexp(static_cast<double>(c.count * d.k + 8), -24) * magnitude + 1e-37;
        ok = within_rounding(d, ops.out[at], exact, bound);
      }
      if (!ok && reported++ < 5)
        ADD_FAILURE() << "C(" << i << "," << j << ") = " << ops.out[at] << ", reference " << expected[at];
    }
}

// Every case on every instruction set the host runs.
inline void check(const Case& c) {
  for (weft::jit::Isa isa : weft::test::runnable_isas()) {
    check_on(c, isa);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace weft::test::brgemm
