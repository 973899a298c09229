// Unary TPPs against their reference over randomized shapes (fixed seeds), with guard pages right
// after (and, in a second pass, right before) every matrix so that tails that touch memory outside
// fault; plus plans, runtime leading dimensions, large streaming calls, errors and AVX-512 emission.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "guarded_buffer.hpp"
#include "host_isas.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/jit/error.hpp"
#include "weft/tpp/mini_jit_unary.hpp"
#include "weft/tpp/unary.hpp"

namespace {

using namespace weft::tpp;
using weft::jit::Isa;
using weft::test::Flush;
using weft::test::GuardedBuffer;

constexpr UnaryOp kAllOps[] = {
    UnaryOp::zero,    UnaryOp::copy,      UnaryOp::relu,      UnaryOp::relu_bwd,  UnaryOp::square,
    UnaryOp::reciprocal, UnaryOp::sqrt,   UnaryOp::exp,       UnaryOp::sigmoid,   UnaryOp::tanh,
    UnaryOp::gelu,    UnaryOp::increment, UnaryOp::decrement, UnaryOp::scale,     UnaryOp::transpose,
    UnaryOp::reduce_rows_sum, UnaryOp::reduce_rows_max, UnaryOp::reduce_cols_sum, UnaryOp::reduce_cols_max};

bool transcendental(UnaryOp op) {
  return op == UnaryOp::exp || op == UnaryOp::sigmoid || op == UnaryOp::tanh || op == UnaryOp::gelu;
}
bool sums(UnaryOp op) { return op == UnaryOp::reduce_rows_sum || op == UnaryOp::reduce_cols_sum; }
bool takes_alpha(UnaryOp op) { return op == UnaryOp::increment || op == UnaryOp::decrement || op == UnaryOp::scale; }

bool same(float want, float got, UnaryOp op, float scale_for_sums) {
  if (want == got) return true;
  if (std::isnan(want)) return std::isnan(got);
  if (transcendental(op)) return std::fabs(got - want) <= 1e-6f * std::fabs(want) + 1e-44f;
  if (sums(op)) return std::fabs(got - want) <= 1e-5f * scale_for_sums;
  return want == got;
}

// Sizes of the B buffer, the A buffer, and the positions of B that the kernel must write.
std::int64_t out_count(const UnaryDesc& d, std::int64_t ldb) {
  if (d.op == UnaryOp::reduce_rows_sum || d.op == UnaryOp::reduce_rows_max) return d.m;
  if (d.op == UnaryOp::reduce_cols_sum || d.op == UnaryOp::reduce_cols_max) return d.n;
  if (d.op == UnaryOp::transpose || d.transpose_out) return ldb * (d.m - 1) + d.n;
  return ldb * (d.n - 1) + d.m;
}

// Runs desc on `isa` and on the reference over the same random input; compares every element of B
// (including the gaps between columns, which must stay untouched) and the mask.
void check(const UnaryDesc& d, Isa isa, std::mt19937& rng, Flush flush, std::int64_t call_lda = 0,
           std::int64_t call_ldb = 0) {
  const std::int64_t lda = d.ld_in != 0 ? d.ld_in : call_lda;
  const std::int64_t ldb = d.ld_out != 0 ? d.ld_out : call_ldb;
  const std::int64_t a_count = lda * (d.n - 1) + d.m;
  const std::int64_t b_count = out_count(d, ldb);
  GuardedBuffer<float> a(static_cast<std::size_t>(a_count), flush), x(static_cast<std::size_t>(a_count), flush);
  GuardedBuffer<float> b(static_cast<std::size_t>(b_count), flush);
  const std::size_t mask_bytes = static_cast<std::size_t>(mask_ld(d.m) * d.n);
  GuardedBuffer<std::uint8_t> mask(mask_bytes, flush), mask_in(mask_bytes, flush);
  std::vector<float> b_ref(static_cast<std::size_t>(b_count));
  std::vector<std::uint8_t> mask_ref(mask_bytes);
  const bool positive_only = d.op == UnaryOp::sqrt;
  std::uniform_real_distribution<float> dist(positive_only ? 0.0f : -8.0f, 8.0f);
  float abs_sum = 1;
  for (auto& v : a) {
    v = dist(rng);
    abs_sum += std::fabs(v) * static_cast<float>(d.n + d.m);
  }
  for (auto& v : x) v = dist(rng);
  for (auto& v : mask_in) v = static_cast<std::uint8_t>(rng());
  // Special values in a few places (not for sums, whose order of addition differs).
  if (!sums(d.op) && a_count > 3) {
    a[0] = std::numeric_limits<float>::quiet_NaN();
    a[1] = -0.0f;
    a[static_cast<std::size_t>(a_count - 1)] = std::numeric_limits<float>::infinity();
  }
  for (std::size_t i = 0; i < b_ref.size(); ++i) b_ref[i] = b[i] = static_cast<float>(i) + 0.5f;  // sentinels
  std::memset(mask.data(), 0xAB, mask_bytes);
  std::memset(mask_ref.data(), 0xAB, mask_bytes);

  UnaryArgs args{a.data(), b.data(), d.mask == ReluMask::bitmask ? static_cast<const void*>(mask_in.data()) : x.data(),
                 mask.data(), call_lda, call_ldb};
  UnaryArgs ref_args = args;
  ref_args.out = b_ref.data();
  ref_args.mask = mask_ref.data();
  unary_reference(d, ref_args);
  unary_kernel(d, isa)(&args);

  for (std::size_t i = 0; i < b_ref.size(); ++i) {
    ASSERT_TRUE(same(b_ref[i], b[i], d.op, abs_sum))
        << to_string(d) << " element " << i << ": want " << b_ref[i] << " got " << b[i];
  }
  if (d.op == UnaryOp::relu && d.mask == ReluMask::bitmask) {
    for (std::size_t i = 0; i < mask_bytes; ++i) ASSERT_EQ(mask[i], mask_ref[i]) << to_string(d) << " mask byte " << i;
  }
}

UnaryDesc random_desc(UnaryOp op, std::mt19937& rng) {
  std::uniform_int_distribution<std::int64_t> dim(1, 80), pad(0, 9);
  UnaryDesc d;
  d.op = op;
  d.m = dim(rng);
  d.n = dim(rng);
  d.ld_in = d.m + pad(rng);
  d.ld_out = (op == UnaryOp::transpose ? d.n : d.m) + pad(rng);
  if (takes_alpha(op)) d.alpha = 1.25f;
  return d;
}

TEST(UnaryKernels, RandomShapesMatchReference) {
  for (Isa isa : weft::test::runnable_elementwise_isas()) {
    SCOPED_TRACE(std::string("isa ") + std::string(weft::jit::to_string(isa)));
    std::mt19937 rng(20240611);
    for (UnaryOp op : kAllOps) {
      for (int trial = 0; trial < 24; ++trial) {
        UnaryDesc d = random_desc(op, rng);
        if ((op == UnaryOp::relu || op == UnaryOp::relu_bwd) && trial % 2 == 1) d.mask = ReluMask::bitmask;
        check(d, isa, rng, trial % 3 == 0 ? Flush::front : Flush::back);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(UnaryKernels, ContiguousAndSmallShapes) {
  for (Isa isa : weft::test::runnable_elementwise_isas()) {
    SCOPED_TRACE(std::string("isa ") + std::string(weft::jit::to_string(isa)));
    std::mt19937 rng(7);
    for (UnaryOp op : kAllOps) {
      for (std::int64_t m : {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 65}) {
        for (std::int64_t n : {1, 2, 3, 9}) {
          UnaryDesc d{.op = op, .m = m, .n = n, .ld_in = m, .ld_out = op == UnaryOp::transpose ? n : m};
          if (takes_alpha(op)) d.alpha = -0.75f;
          check(d, isa, rng, Flush::back);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(UnaryKernels, TransposeFusedWithOps) {
  for (Isa isa : weft::test::runnable_elementwise_isas()) {
    SCOPED_TRACE(std::string("isa ") + std::string(weft::jit::to_string(isa)));
    std::mt19937 rng(11);
    for (UnaryOp op : {UnaryOp::copy, UnaryOp::relu, UnaryOp::gelu, UnaryOp::scale}) {
      for (int trial = 0; trial < 20; ++trial) {
        UnaryDesc d = random_desc(op, rng);
        d.ld_out = d.n + trial % 4;
        d.transpose_out = true;
        check(d, isa, rng, Flush::back);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(UnaryKernels, LeadingDimensionsAtCallTime) {
  for (Isa isa : weft::test::runnable_elementwise_isas()) {
    SCOPED_TRACE(std::string("isa ") + std::string(weft::jit::to_string(isa)));
    std::mt19937 rng(3);
    for (UnaryOp op : {UnaryOp::zero, UnaryOp::copy, UnaryOp::relu, UnaryOp::transpose, UnaryOp::reduce_rows_max}) {
      for (int trial = 0; trial < 10; ++trial) {
        UnaryDesc d = random_desc(op, rng);
        const std::int64_t lda = d.ld_in, ldb = d.ld_out;
        d.ld_in = d.ld_out = 0;
        check(d, isa, rng, Flush::back, lda, ldb);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(UnaryKernels, LargeStreamingCallsWithMisalignedOutput) {
  // Above kNontemporalBytes: the flat streaming path; output offset by 1..7 floats from alignment.
  // Each op's reference is computed once for every ISA and offset, and the outputs are checked
  // by one search for the first difference (under qemu the references and a per-element assertion
  // took most of the test's time).
  const std::int64_t n = (kNontemporalBytes / 4) + 37;
  std::vector<float> in(static_cast<std::size_t>(n + 8)), out(static_cast<std::size_t>(n + 8)), ref(static_cast<std::size_t>(n));
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-3, 3);
  for (auto& v : in) v = dist(rng);
  for (UnaryOp op : {UnaryOp::copy, UnaryOp::relu, UnaryOp::zero, UnaryOp::tanh}) {
    const UnaryDesc d{.op = op, .m = n, .n = 1, .ld_in = n, .ld_out = n};
    UnaryArgs r{in.data() + 1, ref.data()};
    unary_reference(d, r);
    for (Isa isa : weft::test::runnable_elementwise_isas()) {
      SCOPED_TRACE(std::string("isa ") + std::string(weft::jit::to_string(isa)));
      for (int shift : {0, 3}) {
        ASSERT_TRUE(plan_unary(d, isa).nontemporal);
        std::fill(out.begin(), out.end(), std::nanf(""));
        UnaryArgs args{in.data() + 1, out.data() + shift};
        unary_kernel(d, isa)(&args);
        std::int64_t first_wrong = 0;
        while (first_wrong < n && same(ref[static_cast<std::size_t>(first_wrong)],
                                       out[static_cast<std::size_t>(first_wrong + shift)], op, 1))
          ++first_wrong;
        ASSERT_EQ(first_wrong, n) << to_string(op) << " shift " << shift << ": first wrong element";
      }
    }
  }
}

TEST(UnaryKernels, ReluMaskRoundTrip) {
  // Forward writes the mask; backward from the mask equals backward from the input.
  const std::int64_t m = 37, n = 5;
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> x(m * n), g(m * n), y(m * n), dx_mask(m * n), dx_input(m * n);
  for (auto& v : x) v = dist(rng);
  for (auto& v : g) v = dist(rng);
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(mask_ld(m) * n));
  Unary fwd(UnaryDesc{.op = UnaryOp::relu, .m = m, .n = n, .ld_in = m, .ld_out = m, .mask = ReluMask::bitmask});
  fwd(UnaryArgs{.in = x.data(), .out = y.data(), .mask = mask.data()});
  Unary bwd_mask(UnaryDesc{.op = UnaryOp::relu_bwd, .m = m, .n = n, .ld_in = m, .ld_out = m, .mask = ReluMask::bitmask});
  bwd_mask(UnaryArgs{.in = g.data(), .out = dx_mask.data(), .aux = mask.data()});
  Unary bwd_x(UnaryDesc{.op = UnaryOp::relu_bwd, .m = m, .n = n, .ld_in = m, .ld_out = m});
  bwd_x(UnaryArgs{.in = g.data(), .out = dx_input.data(), .aux = x.data()});
  EXPECT_EQ(dx_mask, dx_input);
  for (std::int64_t j = 0; j < n; ++j) EXPECT_EQ(mask[static_cast<std::size_t>(j * mask_ld(m) + 4)] & 0xE0, 0) << "bits past row m are 0";
}

TEST(UnaryPlan, FollowsTheDescriptor) {
  const UnaryPlan small = plan_unary(UnaryDesc{.op = UnaryOp::relu, .m = 37, .n = 5, .ld_in = 40, .ld_out = 37}, Isa::avx2);
  EXPECT_FALSE(small.flat);
  EXPECT_EQ(small.rows, 37);
  EXPECT_EQ(small.cols, 5);
  EXPECT_EQ(small.full_vectors, 4);
  EXPECT_EQ(small.tail, 5);
  EXPECT_FALSE(small.nontemporal);
  EXPECT_EQ(small.scratch, 1);

  const UnaryPlan flat = plan_unary(UnaryDesc{.op = UnaryOp::gelu, .m = 37, .n = 5, .ld_in = 37, .ld_out = 37}, Isa::avx512);
  EXPECT_TRUE(flat.flat);
  EXPECT_EQ(flat.lanes, 16);
  EXPECT_EQ(flat.rows, 185);
  EXPECT_EQ(flat.full_vectors, 11);
  EXPECT_EQ(flat.tail, 9);
  EXPECT_EQ(flat.scratch, 3);

  const std::int64_t big = kNontemporalBytes / 4;
  EXPECT_TRUE(plan_unary(UnaryDesc{.op = UnaryOp::copy, .m = big, .n = 1, .ld_in = big, .ld_out = big}, Isa::avx2).nontemporal);
  EXPECT_FALSE(plan_unary(UnaryDesc{.op = UnaryOp::copy, .m = big - 1, .n = 1, .ld_in = big, .ld_out = big}, Isa::avx2).nontemporal);
  // A bitmask keeps the per-column layout.
  EXPECT_FALSE(plan_unary(UnaryDesc{.op = UnaryOp::relu, .m = 8, .n = 4, .ld_in = 8, .ld_out = 8, .mask = ReluMask::bitmask}, Isa::avx2).flat);
}

TEST(UnaryErrors, UnsupportedDescriptorsThrowNamedErrors) {
  auto throws = [](const UnaryDesc& d, const char* needle) {
    try {
      Unary u(d);
      ADD_FAILURE() << "no error for " << to_string(d);
    } catch (const weft::Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  throws(UnaryDesc{.op = UnaryOp::copy, .m = 0, .n = 4, .ld_in = 4, .ld_out = 4}, "m and n");
  throws(UnaryDesc{.op = UnaryOp::copy, .m = 8, .n = 4, .ld_in = 7, .ld_out = 8}, "ld_in < m");
  throws(UnaryDesc{.op = UnaryOp::copy, .m = 8, .n = 4, .ld_in = 8, .ld_out = 7}, "ld_out < m");
  throws(UnaryDesc{.op = UnaryOp::transpose, .m = 8, .n = 4, .ld_in = 8, .ld_out = 3}, "ld_out < n");
  throws(UnaryDesc{.op = UnaryOp::relu, .m = 8, .n = 4, .ld_in = 8, .ld_out = 8, .alpha = 2}, "alpha");
  throws(UnaryDesc{.op = UnaryOp::exp, .m = 8, .n = 4, .ld_in = 8, .ld_out = 8, .mask = ReluMask::bitmask}, "bitmask");
  throws(UnaryDesc{.op = UnaryOp::reduce_rows_sum, .m = 8, .n = 4, .ld_in = 8, .ld_out = 8, .transpose_out = true}, "transpose_out");
  throws(UnaryDesc{.op = static_cast<UnaryOp>(200), .m = 8, .n = 4, .ld_in = 8, .ld_out = 8}, "op 200 is no UnaryOp");
  throws(UnaryDesc{.op = UnaryOp::relu, .m = 8, .n = 4, .ld_in = 8, .ld_out = 8, .mask = static_cast<ReluMask>(5)},
         "mask 5 is no ReluMask");
}

TEST(UnaryEmission, Avx512EmitsEveryOpOnAnyHost) {
  WEFT_SKIP_UNLESS_BUILT_FOR(weft::jit::Isa::avx512);
  for (UnaryOp op : kAllOps) {
    for (std::int64_t m : {1, 15, 16, 17, 45}) {
      UnaryDesc d{.op = op, .m = m, .n = 3, .ld_in = m + 1, .ld_out = (op == UnaryOp::transpose ? 3 : m) + 1};
      if (takes_alpha(op)) d.alpha = 2;
      EXPECT_GT(unary_code_size(d, Isa::avx512), 0u) << to_string(d);
      if (op == UnaryOp::relu || op == UnaryOp::relu_bwd) {
        d.mask = ReluMask::bitmask;
        EXPECT_GT(unary_code_size(d, Isa::avx512), 0u) << to_string(d);
      }
    }
  }
  const std::int64_t big = kNontemporalBytes / 4;
  EXPECT_GT(unary_code_size(UnaryDesc{.op = UnaryOp::gelu, .m = big, .n = 1, .ld_in = big, .ld_out = big}, Isa::avx512), 0u);
  if (weft::jit::can_run(Isa::avx512, weft::jit::cpu_features())) {
    std::mt19937 rng(1);
    for (UnaryOp op : kAllOps) check(random_desc(op, rng), Isa::avx512, rng, Flush::back);
  }
}

TEST(UnaryCache, SameDescriptorSameKernel) {
  const UnaryDesc d{.op = UnaryOp::sigmoid, .m = 12, .n = 3, .ld_in = 12, .ld_out = 12};
  EXPECT_EQ(Unary(d).kernel(), Unary(d).kernel());
}

TEST(MiniJitUnary, SeedInterface) {
  using mini_jit::Unary;
  const std::int64_t m = 13, n = 7, lda = 16, ldb = 15, ldbt = 9;
  std::vector<float> a(static_cast<std::size_t>(lda * n)), b(static_cast<std::size_t>(ldb * n), 99.0f), bt(static_cast<std::size_t>(ldbt * m), 99.0f);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 11) - 5.0f;
  Unary u;
  ASSERT_EQ(u.generate(m, n, 0, Unary::dtype_t::fp32, Unary::ptype_t::relu), Unary::error_t::success);
  u.get_kernel()(a.data(), b.data(), lda, ldb);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) EXPECT_EQ(b[static_cast<std::size_t>(i + j * ldb)], std::max(a[static_cast<std::size_t>(i + j * lda)], 0.0f));
  ASSERT_EQ(u.generate(m, n, 1, Unary::dtype_t::fp32, Unary::ptype_t::identity), Unary::error_t::success);
  u.get_kernel()(a.data(), bt.data(), lda, ldbt);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) EXPECT_EQ(bt[static_cast<std::size_t>(j + i * ldbt)], a[static_cast<std::size_t>(i + j * lda)]);
  ASSERT_EQ(u.generate(m, n, 1, Unary::dtype_t::fp32, Unary::ptype_t::relu), Unary::error_t::success);
  u.get_kernel()(a.data(), bt.data(), lda, ldbt);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) EXPECT_EQ(bt[static_cast<std::size_t>(j + i * ldbt)], std::max(a[static_cast<std::size_t>(i + j * lda)], 0.0f));
  ASSERT_EQ(u.generate(m, n, 0, Unary::dtype_t::fp32, Unary::ptype_t::zero), Unary::error_t::success);
  u.get_kernel()(nullptr, b.data(), 0, ldb);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) EXPECT_EQ(b[static_cast<std::size_t>(i + j * ldb)], 0.0f);
  EXPECT_EQ(b[static_cast<std::size_t>(m)], 0.0f + b[static_cast<std::size_t>(m)]);  // gap untouched (still 99 or relu)
  EXPECT_EQ(u.generate(m, n, 0, static_cast<Unary::dtype_t>(7), Unary::ptype_t::zero), Unary::error_t::err_wrong_dtype);
  EXPECT_EQ(u.get_kernel(), nullptr);
  EXPECT_NE(u.error_message().find("dtype 7"), std::string::npos) << u.error_message();
  EXPECT_EQ(u.generate(0, n, 0, Unary::dtype_t::fp32, Unary::ptype_t::zero), Unary::error_t::err_wrong_dimension);
  EXPECT_EQ(u.generate(m, n, 2, Unary::dtype_t::fp32, Unary::ptype_t::zero), Unary::error_t::err_wrong_trans);
  EXPECT_EQ(u.generate(m, n, 0, Unary::dtype_t::fp32, static_cast<Unary::ptype_t>(9)), Unary::error_t::err_wrong_ptype);
  EXPECT_NE(u.error_message().find("ptype 9"), std::string::npos) << u.error_message();
  EXPECT_EQ(u.generate(m, n, 0, Unary::dtype_t::fp32, Unary::ptype_t::zero), Unary::error_t::success);
  EXPECT_TRUE(u.error_message().empty());
}

}  // namespace
