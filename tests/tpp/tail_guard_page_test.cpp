// AVX2 tails (the piecewise policy of tpp/src/vec_traits.hpp) never touch memory past the last
// element: unary and binary kernels whose every column ends in a partial vector run with each
// matrix flush against an inaccessible page, and compute what the reference computes.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "guarded_buffer.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/tpp/binary.hpp"
#include "weft/tpp/unary.hpp"

namespace {

using namespace weft::tpp;
using weft::jit::Isa;
using weft::test::GuardedBuffer;

// Partial vectors of every length (1..7 lanes) alone and after whole vectors.
constexpr std::int64_t kTailRows[] = {1, 2, 3, 4, 5, 6, 7, 9, 12, 15, 21, 23};

bool avx2_runs() { return weft::jit::can_run(Isa::avx2, weft::jit::cpu_features()); }

std::int64_t out_elements(const UnaryDesc& d) {
  switch (d.op) {
    case UnaryOp::reduce_rows_max:
    case UnaryOp::reduce_rows_sum: return d.m;
    case UnaryOp::reduce_cols_max:
    case UnaryOp::reduce_cols_sum: return d.n;
    case UnaryOp::transpose: return d.ld_out * (d.m - 1) + d.n;
    default: return d.ld_out * (d.n - 1) + d.m;
  }
}

void fill(GuardedBuffer<float>& buffer, std::mt19937& rng) {
  std::uniform_int_distribution<int> value(-64, 64);
  for (float& v : buffer) v = static_cast<float>(value(rng)) * 0.25f;  // exact sums
}

// Runs `kernel` on args and `reference` on the same args writing a copy of `out` (so that elements
// the op leaves alone must stay too), and compares every element.
template <class Args, class Reference, class Kernel>
void expect_reference_result(const Args& args, const GuardedBuffer<float>& out, Reference reference, Kernel kernel) {
  std::vector<float> want(out.data(), out.data() + out.size());
  Args ref = args;
  ref.out = want.data();
  reference(ref);
  kernel(&args);
  for (std::size_t i = 0; i < want.size(); ++i) ASSERT_EQ(out[i], want[i]) << "element " << i;
}

TEST(TailGuardPage, UnaryAvx2TailsEndAtTheGuardPage) {
  if (!avx2_runs()) GTEST_SKIP() << "the host runs no AVX2 code";
  std::mt19937 rng(13);
  for (UnaryOp op : {UnaryOp::copy, UnaryOp::relu, UnaryOp::relu_bwd, UnaryOp::zero, UnaryOp::reduce_rows_max,
                     UnaryOp::reduce_rows_sum, UnaryOp::reduce_cols_max, UnaryOp::transpose})
    for (std::int64_t m : kTailRows)
      for (std::int64_t n : {1, 3, 9}) {
        // ld = m: the last column's tail is the last element before the page.
        const UnaryDesc d{.op = op, .m = m, .n = n, .ld_in = m, .ld_out = op == UnaryOp::transpose ? n : m};
        SCOPED_TRACE(to_string(d));
        GuardedBuffer<float> in(static_cast<std::size_t>(m * n)), aux(static_cast<std::size_t>(m * n));
        GuardedBuffer<float> out(static_cast<std::size_t>(out_elements(d)));
        fill(in, rng);
        fill(aux, rng);
        fill(out, rng);
        expect_reference_result(UnaryArgs{.in = in.data(), .out = out.data(), .aux = aux.data()}, out,
                                [&](const UnaryArgs& ref) { unary_reference(d, ref); }, unary_kernel(d, Isa::avx2));
      }
}

TEST(TailGuardPage, BinaryAvx2TailsEndAtTheGuardPage) {
  if (!avx2_runs()) GTEST_SKIP() << "the host runs no AVX2 code";
  std::mt19937 rng(17);
  for (BinaryOp op : {BinaryOp::add, BinaryOp::max})
    for (Broadcast b1 : {Broadcast::none, Broadcast::col})
      for (std::int64_t m : kTailRows)
        for (std::int64_t n : {1, 3, 9}) {
          const BinaryDesc d{.op = op, .m = m, .n = n, .ld_in0 = m, .ld_in1 = m, .ld_out = m, .bcast1 = b1};
          SCOPED_TRACE(to_string(d));
          GuardedBuffer<float> a(static_cast<std::size_t>(m * n));
          GuardedBuffer<float> b(static_cast<std::size_t>(b1 == Broadcast::col ? m : m * n));
          GuardedBuffer<float> c(static_cast<std::size_t>(m * n));
          fill(a, rng);
          fill(b, rng);
          expect_reference_result(BinaryArgs{.in0 = a.data(), .in1 = b.data(), .out = c.data()}, c,
                                  [&](const BinaryArgs& ref) { binary_reference(d, ref); }, binary_kernel(d, Isa::avx2));
        }
}

}  // namespace
