// BRGEMM in bf16 (A in VNNI-2, fp32 accumulation, C in f32 or bf16) and in f64: every path the host
// runs (avx2 and avx512 widen bf16 to fp32, avx512_bf16 uses vdpbf16ps) against brgemm_reference,
// bit for bit where the plan sums in the reference's order, over operands flush against guard
// pages; the paths the host cannot run are generated and disassembled instead.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "emitters.hpp"
#include "guarded_buffer.hpp"
#include "host_isas.hpp"
#include "weft/jit/bfloat16.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/jit/error.hpp"
#include "weft/tpp/brgemm.hpp"

namespace {

using weft::jit::bfloat16;
using weft::jit::DataType;
using weft::jit::Isa;
using weft::test::Flush;
using weft::test::GuardedBuffer;
using namespace weft::tpp;

constexpr DataTypes kBf16ToF32{.in = DataType::bf16, .out = DataType::f32, .compute = DataType::f32};
constexpr DataTypes kBf16ToBf16{.in = DataType::bf16, .out = DataType::bf16, .compute = DataType::f32};
constexpr DataTypes kF64{.in = DataType::f64, .out = DataType::f64, .compute = DataType::f64};

// Elements of one type in a guarded buffer, as raw bits (compared bit for bit).
class Buffer {
 public:
  Buffer(DataType type, std::int64_t count, Flush flush)
      : type_(type), bytes_(static_cast<std::int64_t>(weft::jit::size_of(type))),
        raw_(static_cast<std::size_t>(std::max<std::int64_t>(1, count) * bytes_), flush), count_(count) {}

  void* data() { return raw_.data(); }
  const void* data() const { return raw_.data(); }
  std::int64_t size() const { return count_; }
  void* at(std::int64_t i) { return raw_.data() + i * bytes_; }

  double get(std::int64_t i) const {
    switch (type_) {
      case DataType::f32: return value<float>(i);
      case DataType::bf16: return weft::jit::to_float(value<bfloat16>(i));
      case DataType::f64: return value<double>(i);
    }
    return 0;
  }
  void set(std::int64_t i, double x) {
    switch (type_) {
      case DataType::f32: put(i, static_cast<float>(x)); return;
      case DataType::bf16: put(i, weft::jit::to_bfloat16(static_cast<float>(x))); return;
      case DataType::f64: put(i, x); return;
    }
  }
  // The element's bits (NaNs compared as NaN by the caller).
  std::uint64_t bits(std::int64_t i) const {
    std::uint64_t b = 0;
    std::copy_n(raw_.data() + i * bytes_, bytes_, reinterpret_cast<std::uint8_t*>(&b));
    return b;
  }
  std::vector<std::uint8_t> copy() const { return {raw_.data(), raw_.data() + count_ * bytes_}; }
  void restore(const std::vector<std::uint8_t>& from) { std::copy(from.begin(), from.end(), raw_.data()); }

 private:
  template <class T>
  T value(std::int64_t i) const {
    T v;
    std::copy_n(raw_.data() + i * bytes_, sizeof(T), reinterpret_cast<std::uint8_t*>(&v));
    return v;
  }
  template <class T>
  void put(std::int64_t i, T v) {
    std::copy_n(reinterpret_cast<const std::uint8_t*>(&v), sizeof(T), raw_.data() + i * bytes_);
  }

  DataType type_;
  std::int64_t bytes_;
  GuardedBuffer<std::uint8_t> raw_;
  std::int64_t count_;
};

struct Case {
  BrgemmDesc desc;
  std::int64_t count = 2;
  Flush flush = Flush::back;
  std::uint32_t seed = 7;
  // false: values of a few bits (multiples of 1/16 up to 4), whose sums are exact in fp32 in any
  // order, so every plan must match the reference bit for bit. true: full-precision values, for
  // plans that sum in the reference's order (asserted).
  bool full_precision = false;
  // Plan options for the kernel (e.g. staged_ab = -1: AVX2's bf16_staged_b); default: Brgemm's plan.
  BrgemmPlanOptions options = {};
  // The math the kernel's plan must have on Isa::avx2 (checked when set): a case meant for one path
  // fails when the plan moves it elsewhere.
  std::optional<BrgemmMath> avx2_math = std::nullopt;
};

// Where A_i(row, kk) lies in A_i: VNNI-2 in bf16 (brgemm.hpp), column-major otherwise.
std::int64_t a_index(const BrgemmDesc& d, std::int64_t row, std::int64_t kk) {
  if (d.types.in == DataType::bf16) return (kk / 2) * 2 * d.lda + 2 * row + kk % 2;
  return row + kk * d.lda;
}

// One batch entry's extent: its last element plus one.
std::int64_t a_extent(const BrgemmDesc& d) { return a_index(d, d.m - 1, d.k - 1) + 1; }
std::int64_t b_extent(const BrgemmDesc& d) {
  return d.b_transposed ? (d.k - 1) * d.ldb + d.n : (d.n - 1) * d.ldb + d.k;
}

bool same_bits(DataType type, std::uint64_t x, std::uint64_t y) {
  if (x == y) return true;
  switch (type) {  // NaNs: any payload
    case DataType::f32: return std::isnan(std::bit_cast<float>(static_cast<std::uint32_t>(x))) &&
                               std::isnan(std::bit_cast<float>(static_cast<std::uint32_t>(y)));
    case DataType::bf16: return (x & 0x7fffu) > 0x7f80u && (y & 0x7fffu) > 0x7f80u;
    case DataType::f64: return std::isnan(std::bit_cast<double>(x)) && std::isnan(std::bit_cast<double>(y));
  }
  return false;
}

// Runs the case on `isa` and on the reference over the same operands. Plans in the reference order
// must agree bit for bit; others (k_split > 1) within the rounding of the sum.
void check_on(const Case& c, Isa isa) {
  const BrgemmDesc& d = c.desc;
  SCOPED_TRACE(to_string(d) + " count=" + std::to_string(c.count) + " seed=" + std::to_string(c.seed) + " on " +
               std::string(weft::jit::to_string(isa)));
  std::mt19937 rng(c.seed);
  std::uniform_int_distribution<int> small(-64, 64);
  std::uniform_real_distribution<double> full(-1.0, 1.0);
  auto value = [&] { return c.full_precision ? full(rng) : small(rng) / 16.0; };
  const std::int64_t stride_a = a_extent(d) + 3, stride_b = b_extent(d) + 5;
  const std::int64_t count = c.count;
  Buffer a(d.types.in, std::max<std::int64_t>(1, (count - 1) * stride_a + a_extent(d)), c.flush);
  Buffer b(d.types.in, std::max<std::int64_t>(1, (count - 1) * stride_b + b_extent(d)), c.flush);
  Buffer out(d.types.out, d.ldc * (d.n - 1) + d.m, c.flush);
  Buffer bias(d.types.out, d.bias == BrgemmBias::per_col ? d.n : d.m, c.flush);
  for (Buffer* buffer : {&a, &b, &out, &bias})
    for (std::int64_t i = 0; i < buffer->size(); ++i) buffer->set(i, value());
  std::vector<std::int64_t> offsets_a, offsets_b;
  std::vector<const void*> addresses_a, addresses_b;
  for (std::int64_t i = count - 1; i >= 0; --i) {  // in reverse memory order
    offsets_a.push_back(i * stride_a);
    offsets_b.push_back(i * stride_b);
    addresses_a.push_back(a.at(i * stride_a));
    addresses_b.push_back(b.at(i * stride_b));
  }
  const BrgemmArgs args{.a = a.data(), .b = b.data(), .c = out.data(), .count = count, .stride_a = stride_a,
                        .stride_b = stride_b, .offsets_a = offsets_a.data(), .offsets_b = offsets_b.data(),
                        .addresses_a = addresses_a.data(), .addresses_b = addresses_b.data(),
                        .bias = d.bias == BrgemmBias::none ? nullptr : bias.data()};
  const std::vector<std::uint8_t> before = out.copy();
  brgemm_reference(d, args);
  std::vector<std::uint64_t> expected;
  for (std::int64_t i = 0; i < out.size(); ++i) expected.push_back(out.bits(i));
  out.restore(before);

  const BrgemmPlan plan = plan_brgemm(d, isa, c.options);
  SCOPED_TRACE(to_string(plan));
  if (isa == Isa::avx2 && c.avx2_math) {
    ASSERT_EQ(plan.math, *c.avx2_math) << "the case is meant for another path";
  }
  if (c.full_precision) {
    ASSERT_TRUE(plan.reference_order()) << "a full-precision case needs the reference order";
  }
  if (c.options == BrgemmPlanOptions{}) {
    const Brgemm gemm(d, isa);
    ASSERT_EQ(gemm.plan(), plan);
    gemm(args);
  } else {
    auto code = weft::tpp::detail::emit_kernel(d, plan);
    check_args(d, args);
    code->finalize<BrgemmKernelFn>("brgemm_types_test")(&args);
  }
  int reported = 0;
  for (std::int64_t i = 0; i < out.size(); ++i)
    if (!same_bits(d.types.out, out.bits(i), expected[static_cast<std::size_t>(i)]) && reported++ < 5)
      ADD_FAILURE() << "C[" << i << "] (row " << i % d.ldc << ", column " << i / d.ldc << ") = " << out.get(i)
                    << ", reference bits " << std::hex << expected[static_cast<std::size_t>(i)];
}

std::vector<Isa> isas_for(const BrgemmDesc& d) {
  return d.types.in == DataType::bf16 ? weft::test::runnable_bf16_isas() : weft::test::runnable_isas();
}

void check(const Case& c) {
  for (Isa isa : isas_for(c.desc)) {
    check_on(c, isa);
    if (::testing::Test::HasFailure()) return;
  }
}

BrgemmDesc shape(int m, int n, int k, DataTypes types) {
  return {.m = m, .n = n, .k = k, .lda = m + 3, .ldb = k + 2, .ldc = m + 1, .beta = 1, .types = types};
}

// Rounded sums: the generated code adds in the reference's order, and vdpbf16ps adds the odd k of a
// pair first, then the even one, each rounded (what the reference models).
TEST(BrgemmTypes, FullPrecisionValuesSumInTheReferenceOrder) {
  std::uint32_t seed = 50;
  for (DataTypes types : {kBf16ToF32, kBf16ToBf16, kF64})
    for (int m : {64, 80}) {
      BrgemmDesc d = shape(m, 12, 32, types);
      check({.desc = d, .count = 4, .seed = seed++, .full_precision = true});
      d.beta = 0;
      d.bias = BrgemmBias::per_row;
      check({.desc = d, .count = 3, .seed = seed++, .full_precision = true});
      if (HasFailure()) return;
    }
}

TEST(BrgemmTypes, ShapesWithTailsInEveryType) {
  std::uint32_t seed = 1;
  for (DataTypes types : {kBf16ToF32, kBf16ToBf16, kF64})
    for (int m : {1, 3, 8, 16, 17, 31, 48, 65})
      for (int n : {1, 2, 5, 9})
        for (int k : {2, 4, 18}) {
          Case c{.desc = shape(m, n, k, types), .count = 2, .flush = seed % 2 ? Flush::back : Flush::front, .seed = seed++};
          check(c);
          if (HasFailure()) return;
        }
}

TEST(BrgemmTypes, BetaBatchKindsAndEmptyBatches) {
  std::uint32_t seed = 100;
  for (DataTypes types : {kBf16ToF32, kBf16ToBf16, kF64})
    for (BrgemmBatch batch : {BrgemmBatch::strided, BrgemmBatch::offsets, BrgemmBatch::addresses})
      for (int beta : {0, 1})
        for (std::int64_t count : {0, 1, 3}) {
          BrgemmDesc d = shape(37, 6, 10, types);
          d.beta = beta;
          d.batch = batch;
          check({.desc = d, .count = count, .seed = seed++});
          if (HasFailure()) return;
        }
}

TEST(BrgemmTypes, EpiloguesAndLeadingDimensions) {
  std::uint32_t seed = 200;
  for (DataTypes types : {kBf16ToF32, kBf16ToBf16, kF64})
    for (BrgemmBias bias : {BrgemmBias::none, BrgemmBias::per_row, BrgemmBias::per_col})
      for (BrgemmActivation act : {BrgemmActivation::none, BrgemmActivation::relu, BrgemmActivation::unary}) {
        if (types == kF64 && act == BrgemmActivation::unary) continue;  // refused: see below
        BrgemmDesc d = shape(21, 7, 12, types);
        d.lda = 40;
        d.ldb = 30;
        d.ldc = 22;
        d.bias = bias;
        d.activation = act;
        if (act == BrgemmActivation::unary) {
          d.unary = UnaryOp::scale;
          d.unary_alpha = 0.5f;
        }
        check({.desc = d, .count = 3, .seed = seed++});
        if (HasFailure()) return;
      }
}

// bf16 on AVX2 without staged A (BrgemmPlanOptions::staged_ab = -1), the plans that run calls
// with more entries than bf16_staged_ab's slots.
constexpr BrgemmPlanOptions kStagedB{.staged_ab = -1};

// AVX2's staged B (bf16_staged_b; and bf16_staged_ab, the default plans): k tails of 2, 4 and 6
// past the 8-wide widening, the largest staged k with a long ldb, and the in-register path just
// past it.
TEST(BrgemmTypes, Avx2StagedBColumns) {
  std::uint32_t seed = 400;
  for (DataTypes types : {kBf16ToF32, kBf16ToBf16})
    for (const auto& [m, n, k] : {std::tuple{16, 11, 30}, std::tuple{17, 6, 26}, std::tuple{33, 12, 4},
                                  std::tuple{40, 7, 512}, std::tuple{9, 5, 514}}) {
      BrgemmDesc d = shape(m, n, k, types);
      d.ldb = k + 40;
      const BrgemmMath in_registers = BrgemmMath::bf16_widen;
      check({.desc = d, .count = 2, .seed = seed++});
      check({.desc = d, .count = 2, .seed = seed++, .options = kStagedB,
             .avx2_math = k > 512 ? in_registers : BrgemmMath::bf16_staged_b});
      if (HasFailure()) return;
    }
}

// AVX2's staged B shared by the row panels (BrgemmPlan::shared_staged_entries): the first panel's
// tiles widen each entry into its own slot, the other panels (a tail panel, a run of panels) read
// them; with more entries than slots every tile widens its own. Every batch kind, and counts on
// both sides of the bound.
TEST(BrgemmTypes, Avx2StagedBSharedByRowPanels) {
  std::uint32_t seed = 450;
  struct Shape {
    int m, n, k, entries;
  };
  // Slots of 16 KB / (5 columns x k floats, rounded up to 64 bytes): 25 at k = 32, 3 at k = 256, 1 at
  // k = 512.
  for (const Shape& s : {Shape{32, 32, 32, 25}, Shape{30, 13, 20, 36}, Shape{64, 9, 16, 51}, Shape{32, 10, 256, 3},
                         Shape{48, 10, 512, 1}}) {
    BrgemmDesc d = shape(s.m, s.n, s.k, kBf16ToF32);
    ASSERT_EQ(plan_brgemm(d, Isa::avx2, kStagedB).shared_staged_entries, s.entries)
        << to_string(plan_brgemm(d, Isa::avx2, kStagedB));
    for (BrgemmBatch batch : {BrgemmBatch::strided, BrgemmBatch::offsets, BrgemmBatch::addresses})
      for (std::int64_t count : {std::int64_t{1}, std::int64_t{s.entries}, std::int64_t{s.entries} + 1}) {
        if (count > 4 && count != s.entries + 1 && batch != BrgemmBatch::strided) continue;  // keep it short
        d.batch = batch;
        d.types = seed % 2 ? kBf16ToF32 : kBf16ToBf16;
        check({.desc = d, .count = count, .seed = seed++, .options = kStagedB, .avx2_math = BrgemmMath::bf16_staged_b});
        if (HasFailure()) return;
      }
  }
}

TEST(BrgemmTypes, Avx2StagedBIsSharedOnlyByPanelsOfTheSameColumns) {
  EXPECT_EQ(plan_brgemm(shape(16, 32, 32, kBf16ToF32), Isa::avx2, kStagedB).shared_staged_entries, 0) << "one panel";
  EXPECT_EQ(plan_brgemm(shape(40, 32, 32, kBf16ToF32), Isa::avx2, kStagedB).shared_staged_entries, 0)
      << "a one-vector panel blocks its columns wider";
  BrgemmDesc d = shape(32, 32, 32, kBf16ToF32);
  d.prefetch = BrgemmPrefetch::next_c;
  EXPECT_EQ(plan_brgemm(d, Isa::avx2, kStagedB).shared_staged_entries, 0) << "the next tile's C assumes panels outside";
  EXPECT_NE(to_string(plan_brgemm(shape(32, 32, 32, kBf16ToF32), Isa::avx2, kStagedB)).find("shared-b=25"),
            std::string::npos);
  EXPECT_EQ(plan_brgemm(shape(32, 32, 32, kBf16ToF32), Isa::avx2).shared_staged_entries, 0) << "bf16_staged_ab";
}

// ---- AVX2's staged A and B (bf16_staged_ab) -------------------------------------------------------
//
// The tests below run Isa::avx2 kernels whatever WEFT_ISA says (the host runs AVX2 code wherever
// these tests run at all), and assert that each case's plan is the path it is meant for.

bool host_runs_avx2() { return weft::jit::can_run(Isa::avx2, weft::jit::cpu_features()); }

std::string disassemble(const weft::jit::GeneratedCode& code);  // objdump's text, empty without it

// Which kernels get staged A: bf16 on AVX2 with n >= 12 and k <= 512, when one batch entry's A rows
// (of the tallest row panel) fit the 64 KiB of slots; the register tiles are fp32's.
TEST(BrgemmTypes, Avx2StagedABPlans) {
  const BrgemmDesc d = shape(32, 32, 32, kBf16ToF32);
  const BrgemmPlan plan = plan_brgemm(d, Isa::avx2);
  EXPECT_EQ(plan.math, BrgemmMath::bf16_staged_ab);
  EXPECT_EQ(plan.staged_a_entries, 16) << "64 KiB of 32 rows x 32 k floats";
  EXPECT_EQ(brgemm_staged_a_entry_bytes(plan, d.k), 32 * 32 * 4);
  EXPECT_EQ(brgemm_staged_entry_bytes(plan, d.k), 3 * 2 * 64) << "3 columns, 16 even and 16 odd k each";
  EXPECT_EQ(plan.shared_staged_entries, 0);
  EXPECT_EQ(plan.k_split, 1);
  EXPECT_TRUE(plan.reference_order());
  EXPECT_EQ(to_string(plan), "avx2 bf16-staged-ab k_unroll=8 staged-a=16 | 1x[4v b-in-regs 3c x10 2c x1]");
  // fp32's tiles where no tail is involved: one panel (m <= 16), several, several column blocks.
  for (const auto& [m, n, k] : {std::tuple{32, 32, 32}, std::tuple{64, 64, 64}, std::tuple{16, 16, 64},
                                std::tuple{8, 16, 8}, std::tuple{80, 12, 16}}) {
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k));
    const BrgemmPlan bf16 = plan_brgemm(shape(m, n, k, kBf16ToF32), Isa::avx2);
    EXPECT_EQ(bf16.math, BrgemmMath::bf16_staged_ab);
    EXPECT_EQ(bf16.panels, plan_brgemm(shape(m, n, k, DataTypes{}), Isa::avx2).panels) << to_string(bf16);
  }
  // A tail costs no scratch register in the tiles (A's slots hold whole vectors): 23 rows keep one
  // 3-vector panel of 4 columns, 31 rows one 4-vector panel (fp32 splits it in two 2-vector ones).
  const BrgemmPlan p23 = plan_brgemm(shape(23, 17, 32, kBf16ToF32), Isa::avx2);
  ASSERT_EQ(p23.panels.size(), 1u) << to_string(p23);
  EXPECT_EQ(p23.panels[0].tail, 7);
  EXPECT_EQ(p23.panels[0].columns.front().cols, 4) << to_string(p23);
  EXPECT_EQ(brgemm_staged_a_entry_bytes(p23, 32), 24 * 32 * 4) << "rows rounded up to whole vectors";
  const BrgemmPlan p31 = plan_brgemm(shape(31, 12, 8, kBf16ToF32), Isa::avx2);
  ASSERT_EQ(p31.panels.size(), 1u) << to_string(p31);
  EXPECT_EQ(p31.panels[0].vectors, 4);
  // The budget: 32 rows x 512 k floats is one slot of 64 KiB, 16 rows two; 40 rows (a 5-vector
  // panel, by option) do not fit one.
  EXPECT_EQ(plan_brgemm(shape(32, 12, 512, kBf16ToF32), Isa::avx2).staged_a_entries, 1);
  EXPECT_EQ(plan_brgemm(shape(16, 12, 512, kBf16ToF32), Isa::avx2).staged_a_entries, 2);
  EXPECT_EQ(plan_brgemm(shape(64, 12, 128, kBf16ToF32), Isa::avx2).staged_a_entries, 4);
  const BrgemmPlan five = plan_brgemm(shape(40, 12, 512, kBf16ToF32), Isa::avx2, {.panel_vectors = 5});
  EXPECT_EQ(five.math, BrgemmMath::bf16_staged_b) << to_string(five);
  EXPECT_EQ(five.staged_a_entries, 0);
  EXPECT_EQ(plan_brgemm(shape(40, 12, 256, kBf16ToF32), Isa::avx2, {.panel_vectors = 5}).staged_a_entries, 1);
  // Elsewhere: fewer than 12 columns (staged B), one column, k past the staging bound, options,
  // AVX-512.
  EXPECT_EQ(plan_brgemm(shape(32, 11, 32, kBf16ToF32), Isa::avx2).math, BrgemmMath::bf16_staged_b);
  EXPECT_EQ(plan_brgemm(shape(64, 2, 64, kBf16ToF32), Isa::avx2).math, BrgemmMath::bf16_staged_b);
  EXPECT_EQ(plan_brgemm(shape(32, 1, 32, kBf16ToF32), Isa::avx2).math, BrgemmMath::bf16_widen);
  EXPECT_EQ(plan_brgemm(shape(32, 32, 514, kBf16ToF32), Isa::avx2).math, BrgemmMath::bf16_widen);
  EXPECT_EQ(plan_brgemm(d, Isa::avx2, kStagedB).math, BrgemmMath::bf16_staged_b);
  EXPECT_EQ(plan_brgemm(d, Isa::avx2, kStagedB).staged_a_entries, 0);
  EXPECT_EQ(plan_brgemm(d, Isa::avx512).math, BrgemmMath::bf16_widen);
  EXPECT_EQ(plan_brgemm(d, Isa::avx512_bf16).math, BrgemmMath::bf16_dot);
  EXPECT_EQ(plan_brgemm(shape(32, 32, 32, DataTypes{}), Isa::avx2).math, BrgemmMath::fma);
  // Every tile fits the registers, with a register-hungry epilogue too.
  for (int m : {1, 5, 8, 9, 17, 23, 31, 40, 65})
    for (BrgemmActivation act : {BrgemmActivation::none, BrgemmActivation::unary}) {
      BrgemmDesc x = shape(m, 19, 10, kBf16ToBf16);
      x.activation = act;
      x.unary = UnaryOp::gelu;
      x.bias = BrgemmBias::per_row;
      const BrgemmPlan p = plan_brgemm(x, Isa::avx2);
      EXPECT_EQ(p.math, BrgemmMath::bf16_staged_ab);
      for (const BrgemmPanel& panel : p.panels)
        for (const BrgemmColumnBlock& cb : panel.columns)
          EXPECT_LE(brgemm_tile_registers(p, panel, cb.cols), p.vector_registers) << to_string(p);
    }
}

// Every tail: m (partial vectors; one panel for m <= 16 and 17 .. 32, several above), n (column
// blocks of every width; below 12 columns on staged B's path, n = 1 on the in-register one), k (pairs
// past a multiple of 8, one pair), C in f32 and bf16, both ends of the operands against a guard page.
TEST(BrgemmTypes, Avx2StagedABTails) {
  if (!host_runs_avx2()) GTEST_SKIP() << "no AVX2";
  std::uint32_t seed = 500;
  for (int m : {1, 3, 7, 8, 9, 15, 16, 17, 23, 31, 32, 33, 40, 47, 64, 71})
    for (int n : {1, 7, 12, 13, 17, 26})
      for (int k : {2, 6, 16, 18, 34}) {
        const DataTypes types = seed % 2 ? kBf16ToF32 : kBf16ToBf16;
        const BrgemmMath math = n == 1 ? BrgemmMath::bf16_widen : n < 12 ? BrgemmMath::bf16_staged_b : BrgemmMath::bf16_staged_ab;
        const Case c{.desc = shape(m, n, k, types), .count = 1 + seed % 3, .flush = seed % 4 < 2 ? Flush::back : Flush::front,
                     .seed = seed, .avx2_math = math};
        ++seed;
        check_on(c, Isa::avx2);
        if (HasFailure()) return;
      }
}

// A's rows at lda = m (a tail vector's whole loads reach into the next pair; the last pairs load
// piecewise), long lda and ldb, ldc = m; full-precision values summed in the reference's order.
TEST(BrgemmTypes, Avx2StagedABLeadingDimensionsAndOrder) {
  if (!host_runs_avx2()) GTEST_SKIP() << "no AVX2";
  std::uint32_t seed = 700;
  for (const auto& [m, n, k] : {std::tuple{1, 12, 20}, std::tuple{5, 14, 40}, std::tuple{13, 12, 2},
                                std::tuple{23, 17, 32}, std::tuple{33, 13, 64}, std::tuple{70, 19, 22}})
    for (std::int64_t lda : {std::int64_t{m}, std::int64_t{m} + 37})
      for (bool full : {false, true}) {
        BrgemmDesc d = shape(m, n, k, seed % 2 ? kBf16ToF32 : kBf16ToBf16);
        d.lda = lda;
        d.ldb = full ? k : k + 19;
        d.ldc = m;
        // Full-precision values where the plan sums in the reference's order (not the small tiles
        // of m = 1 and 5, which take partial sums).
        if (full && !plan_brgemm(d, Isa::avx2).reference_order()) continue;
        check_on({.desc = d, .count = 3, .flush = Flush::back, .seed = seed++, .full_precision = full,
                  .avx2_math = BrgemmMath::bf16_staged_ab},
                 Isa::avx2);
        if (HasFailure()) return;
      }
}

// Batch kinds, beta 0 and 1, empty batches, epilogues (bias per row / per column over a tail, ReLU,
// a unary op) in both C types, with one panel and with several (the slots of each panel's entries
// written by its first tile, read by the others).
TEST(BrgemmTypes, Avx2StagedABBatchesBetaAndEpilogues) {
  if (!host_runs_avx2()) GTEST_SKIP() << "no AVX2";
  std::uint32_t seed = 800;
  for (int m : {13, 45})
    for (DataTypes types : {kBf16ToF32, kBf16ToBf16}) {
      for (BrgemmBatch batch : {BrgemmBatch::strided, BrgemmBatch::offsets, BrgemmBatch::addresses})
        for (int beta : {0, 1})
          for (std::int64_t count : {0, 1, 3}) {
            BrgemmDesc d = shape(m, 12, 14, types);
            d.beta = beta;
            d.batch = batch;
            check_on({.desc = d, .count = count, .seed = seed++, .avx2_math = BrgemmMath::bf16_staged_ab}, Isa::avx2);
            if (HasFailure()) return;
          }
      for (BrgemmBias bias : {BrgemmBias::none, BrgemmBias::per_row, BrgemmBias::per_col})
        for (BrgemmActivation act : {BrgemmActivation::relu, BrgemmActivation::unary}) {
          BrgemmDesc d = shape(m, 13, 12, types);
          d.bias = bias;
          d.activation = act;
          if (act == BrgemmActivation::unary) {
            d.unary = UnaryOp::scale;
            d.unary_alpha = 0.5f;
          }
          d.prefetch = seed % 2 ? BrgemmPrefetch::next_c : BrgemmPrefetch::none;
          check_on({.desc = d, .count = 2, .seed = seed++, .avx2_math = BrgemmMath::bf16_staged_ab}, Isa::avx2);
          if (HasFailure()) return;
        }
    }
}

// A call with more entries than A's slots runs the second body (bf16_staged_b's plan): counts on
// both sides of the bound, every batch kind, and a kernel whose single slot is the whole budget.
TEST(BrgemmTypes, Avx2StagedABFallsBackPastItsSlots) {
  if (!host_runs_avx2()) GTEST_SKIP() << "no AVX2";
  std::uint32_t seed = 900;
  struct Shape {
    int m, n, k, entries;
  };
  for (const Shape& s : {Shape{64, 12, 64, 8}, Shape{32, 12, 512, 1}, Shape{9, 13, 30, 34}}) {
    BrgemmDesc d = shape(s.m, s.n, s.k, kBf16ToF32);
    ASSERT_EQ(plan_brgemm(d, Isa::avx2).staged_a_entries, s.entries) << to_string(plan_brgemm(d, Isa::avx2));
    for (BrgemmBatch batch : {BrgemmBatch::strided, BrgemmBatch::offsets, BrgemmBatch::addresses})
      for (std::int64_t count : {std::int64_t{s.entries}, std::int64_t{s.entries} + 1}) {
        d.batch = batch;
        d.types = seed % 2 ? kBf16ToF32 : kBf16ToBf16;
        check_on({.desc = d, .count = count, .seed = seed++, .avx2_math = BrgemmMath::bf16_staged_ab}, Isa::avx2);
        if (HasFailure()) return;
      }
  }
}

// The tiles' loop is fp32's: staged floats broadcast with vbroadcastss, never a bf16 pair
// (vpbroadcastd) nor vpmovzxwd (C in f32 here); the widening is the staging's shift and mask.
TEST(BrgemmTypes, Avx2StagedABEmitsFp32Tiles) {
  WEFT_SKIP_UNLESS_BUILT_FOR(Isa::avx2);
  const BrgemmDesc d = shape(37, 12, 24, kBf16ToF32);
  const BrgemmPlan plan = plan_brgemm(d, Isa::avx2);
  ASSERT_EQ(plan.math, BrgemmMath::bf16_staged_ab);
  auto code = weft::tpp::detail::emit_kernel(d, plan);
  auto fallback = weft::tpp::detail::emit_kernel(d, plan_brgemm(d, Isa::avx2, kStagedB));
  ASSERT_GT(code->code_bytes().size(), fallback->code_bytes().size()) << "the fallback's body and the staged one";
  const std::string text = disassemble(*code);
  if (text.empty()) GTEST_SKIP() << "no objdump";
  const std::string all = text.substr(0, text.rfind("ret"));
  // The staged body comes first, the fallback's (which widens A in registers) after its jump.
  const std::string staged = all.substr(0, all.find("vpmovzxwd"));
  for (const char* s : {"vbroadcastss", "vfmadd231ps", "vpslld", "vpand", "vmovaps"})
    EXPECT_NE(staged.find(s), std::string::npos) << s;
  EXPECT_EQ(staged.find("vpbroadcastd"), std::string::npos);
  EXPECT_NE(all.find("vpmovzxwd"), std::string::npos) << "the fallback stages B with vpmovzxwd";
}

// The widest tiles of each ISA (several panels and column blocks, loops over k pairs), and a
// prefetching kernel.
TEST(BrgemmTypes, LargeTilesAndPrefetch) {
  std::uint32_t seed = 300;
  for (DataTypes types : {kBf16ToF32, kBf16ToBf16, kF64}) {
    check({.desc = shape(96, 24, 64, types), .count = 2, .seed = seed++});
    BrgemmDesc d = shape(64, 16, 32, types);
    d.prefetch = BrgemmPrefetch::next_c;
    check({.desc = d, .count = 2, .seed = seed++});
    if (HasFailure()) return;
  }
}

// Special values: C rounded to bf16 as jit::to_bfloat16 rounds (ties to even, overflow to
// infinity, NaN kept), on every path.
TEST(BrgemmTypes, Bf16OutputRoundsLikeToBfloat16) {
  const BrgemmDesc d{.m = 19, .n = 2, .k = 2, .lda = 19, .ldb = 2, .ldc = 19, .beta = 1, .types = kBf16ToBf16};
  // C = C_in + A(:, 0) * B(0, j) + A(:, 1) * B(1, j), with B = [[1, 0], [0, 0]]: C = C_in + A(:, 0).
  // A's values are bf16, so each sum is an exact fp32 number that the store rounds.
  const float c_in[] = {1.0f, 1.0f, 1.0f, -1.0f, 3.3895314e38f, 1.0f, 0.0f, -0.0f, 1.0f, 1.0f,
                        1.0f, 2.0f, 256.0f, 1e-3f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
  const float a_col0[] = {0x1p-8f, 0x3p-8f, 0x1p-9f, -0x1p-8f, 3.3895314e38f, INFINITY, -0.0f, -0.0f, NAN,
                          0x1.8p-8f, 0.0f, 0x1p-7f, 1.0f, 0.0f, -INFINITY, 0x1p-16f, -0x1p-9f, 0x1p-120f, 0.0f};
  for (Isa isa : weft::test::runnable_bf16_isas()) {
    SCOPED_TRACE(std::string(weft::jit::to_string(isa)));
    std::vector<bfloat16> a(2 * 19), b{weft::jit::to_bfloat16(1.0f), weft::jit::to_bfloat16(0.0f),
                                       weft::jit::to_bfloat16(0.0f), weft::jit::to_bfloat16(0.0f)};
    std::vector<bfloat16> c(2 * 19);
    for (int i = 0; i < 19; ++i) {
      a[static_cast<std::size_t>(2 * i)] = weft::jit::to_bfloat16(a_col0[i]);
      a[static_cast<std::size_t>(2 * i + 1)] = weft::jit::to_bfloat16(7.0f);  // times B(1, j) = 0
      // C_in is stored in bf16 too: the test wants sums that bf16 cannot hold, so c_in's values
      // are chosen to be bf16 numbers and A adds what falls between.
      c[static_cast<std::size_t>(i)] = c[static_cast<std::size_t>(19 + i)] = weft::jit::to_bfloat16(c_in[i]);
    }
    Brgemm(d, isa)(BrgemmArgs{.a = a.data(), .b = b.data(), .c = c.data(), .count = 1});
    for (int i = 0; i < 19; ++i) {
      // The odd k first: C + 7 * 0 (+0, which turns a -0 C into +0), then A(i, 0) * 1.
      const float odd = weft::jit::to_float(weft::jit::to_bfloat16(c_in[i])) + 7.0f * 0.0f;
      const float exact = odd + weft::jit::to_float(weft::jit::to_bfloat16(a_col0[i]));
      const bfloat16 want = weft::jit::to_bfloat16(exact);
      const bfloat16 got = c[static_cast<std::size_t>(i)];
      if (std::isnan(exact)) {
        EXPECT_TRUE(std::isnan(weft::jit::to_float(got))) << "row " << i;
      } else {
        EXPECT_EQ(got.bits, want.bits) << "row " << i << ": " << c_in[i] << " + " << a_col0[i];
      }
    }
  }
}

TEST(BrgemmTypes, PlansNameTheirMath) {
  const BrgemmDesc d = shape(32, 32, 32, kBf16ToF32);
  EXPECT_EQ(plan_brgemm(d, Isa::avx2).math, BrgemmMath::bf16_staged_ab);
  EXPECT_NE(to_string(plan_brgemm(d, Isa::avx2)).find("bf16-staged-ab"), std::string::npos);
  EXPECT_EQ(plan_brgemm(d, Isa::avx2, kStagedB).math, BrgemmMath::bf16_staged_b);
  EXPECT_NE(to_string(plan_brgemm(d, Isa::avx2, kStagedB)).find("bf16-staged-b "), std::string::npos);
  EXPECT_EQ(plan_brgemm(shape(32, 32, 514, kBf16ToF32), Isa::avx2).math, BrgemmMath::bf16_widen)
      << "k past the staging bound";
  EXPECT_EQ(plan_brgemm(shape(32, 1, 32, kBf16ToF32), Isa::avx2).math, BrgemmMath::bf16_widen) << "one column";
  EXPECT_EQ(plan_brgemm(d, Isa::avx512).math, BrgemmMath::bf16_widen);
  EXPECT_EQ(plan_brgemm(d, Isa::avx512_bf16).math, BrgemmMath::bf16_dot);
  EXPECT_NE(to_string(plan_brgemm(d, Isa::avx512_bf16)).find("bf16-dot"), std::string::npos);
  EXPECT_EQ(plan_brgemm(shape(32, 32, 32, kF64), Isa::avx512_bf16).math, BrgemmMath::fma);
  EXPECT_EQ(plan_brgemm(shape(32, 32, 32, kF64), Isa::avx2).lanes, 4);
  EXPECT_EQ(plan_brgemm(shape(32, 32, 32, kF64), Isa::avx512).lanes, 8);
  EXPECT_EQ(plan_brgemm(d, Isa::avx2, kStagedB).k_unroll, 16) << "staged B, two kinds of tile: all 16 pair steps in line";
  EXPECT_EQ(plan_brgemm(shape(23, 17, 32, kBf16ToF32), Isa::avx2, kStagedB).k_unroll, 8) << "four kinds of tile";
  // Every tile fits the registers (widened pairs take two per operand).
  for (Isa isa : {Isa::avx2, Isa::avx512, Isa::avx512_bf16})
    for (const BrgemmDesc& x : {d, shape(1, 1, 2, kBf16ToBf16), shape(17, 40, 6, kBf16ToBf16), shape(80, 9, 8, kF64)}) {
      const BrgemmPlan plan = plan_brgemm(x, isa);
      for (const BrgemmPanel& p : plan.panels) {
        EXPECT_FALSE(p.dot) << "dot tiles are f32 only";
        for (const BrgemmColumnBlock& cb : p.columns)
          EXPECT_LE(brgemm_tile_registers(plan, p, cb.cols), plan.vector_registers) << to_string(plan);
      }
    }
  // The f32 kernels of avx512 and avx512_bf16 are the same code.
  const BrgemmDesc f32 = shape(32, 32, 32, DataTypes{});
  EXPECT_EQ(to_string(plan_brgemm(f32, Isa::avx512)).substr(6), to_string(plan_brgemm(f32, Isa::avx512_bf16)).substr(11));
}

TEST(BrgemmTypes, RefusedDescriptorsSayWhy) {
  auto refused = [](BrgemmDesc d, const std::string& why) {
    try {
      validate(d);
      ADD_FAILURE() << "no error for " << to_string(d);
    } catch (const weft::Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  refused(shape(8, 8, 7, kBf16ToF32), "k must be even for bf16 inputs");
  BrgemmDesc t = shape(8, 8, 8, kBf16ToF32);
  t.b_transposed = true;
  t.ldb = 8;
  refused(t, "b_transposed is not implemented for bf16");
  BrgemmDesc u = shape(8, 8, 8, kF64);
  u.activation = BrgemmActivation::unary;
  u.unary = UnaryOp::exp;
  refused(u, "the unary epilogue (exp) is not implemented in f64");
  refused(shape(8, 8, 8, {.in = DataType::f32, .out = DataType::bf16}), "are not supported by BRGEMM");
  refused(shape(8, 8, 8, {.in = DataType::bf16, .out = DataType::f64}), "are not supported by BRGEMM");
  refused(shape(8, 8, 8, {.in = DataType::f64, .out = DataType::f64, .compute = DataType::f32}), "are not supported by BRGEMM");
  // The typed FP32 call refuses other types instead of reading them as floats.
  const float x[64] = {};
  float y[64];
  EXPECT_THROW(Brgemm(shape(4, 4, 4, kF64), Isa::reference)(x, x, y), weft::Error);
}

// Code for an ISA the host may not run: generated and disassembled (objdump, when installed).
std::string disassemble(const weft::jit::GeneratedCode& code) {
  if (std::system("objdump --version > /dev/null 2>&1") != 0) return {};
  const std::string bin = ::testing::TempDir() + "weft_brgemm_types.bin";
  const auto bytes = code.code_bytes();
  std::ofstream(bin, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  FILE* pipe = ::popen(("objdump -D -b binary -m i386:x86-64 " + bin).c_str(), "r");
  std::string text;
  if (pipe == nullptr) return text;
  char buffer[4096];
  while (std::size_t got = std::fread(buffer, 1, sizeof buffer, pipe)) text.append(buffer, got);
  ::pclose(pipe);
  return text;
}

TEST(BrgemmTypes, EveryPathEmitsItsInstructions) {
  WEFT_SKIP_UNLESS_BUILT_FOR(Isa::avx512);
  struct Expect {
    Isa isa;
    DataTypes types;
    std::vector<std::string> has, lacks;
  };
  const Expect expects[] = {
      {Isa::avx512_bf16, kBf16ToBf16, {"vdpbf16ps", "vcvtneps2bf16", "zmm"}, {"vfmadd231ps", "vpsrld"}},
      {Isa::avx512, kBf16ToBf16, {"vfmadd231ps", "vpslld", "vpandd", "vpmovdw"}, {"vdpbf16ps", "vcvtneps2bf16"}},
      {Isa::avx2, kBf16ToBf16, {"vfmadd231ps", "vpslld", "vpmovzxwd", "vpshufb", "ymm"}, {"vdpbf16ps", "zmm"}},
      {Isa::avx512, kF64, {"vfmadd231pd", "vbroadcastsd", "zmm"}, {"vfmadd231ps"}},
      {Isa::avx2, kF64, {"vfmadd231pd", "vbroadcastsd", "ymm"}, {"vfmadd231ps", "zmm"}},
  };
  for (const Expect& e : expects) {
    BrgemmDesc d = shape(37, 5, 8, e.types);
    d.activation = BrgemmActivation::relu;
    SCOPED_TRACE(to_string(d) + " on " + std::string(weft::jit::to_string(e.isa)));
    auto code = weft::tpp::detail::emit_kernel(d, plan_brgemm(d, e.isa));
    ASSERT_GT(code->code_bytes().size(), 100u);
    const std::string text = disassemble(*code);
    if (text.empty()) continue;  // no objdump: generation alone was checked
    // The constant table after the code decodes as anything: look up to the last ret.
    const std::string instructions = text.substr(0, text.rfind("ret"));
    EXPECT_EQ(instructions.find("(bad)"), std::string::npos);
    for (const std::string& s : e.has) EXPECT_NE(instructions.find(s), std::string::npos) << s;
    for (const std::string& s : e.lacks) EXPECT_EQ(instructions.find(s), std::string::npos) << s;
  }
}

}  // namespace
