// The Neon BRGEMM's bf16 paths on FEAT_BF16's bfmmla (neon::BrgemmEmitter(d, true),
// NeonBrgemmMath::bf16_mmla) and bfdot by element (NeonBrgemmMath::bf16_dot, NeonBrgemmBfdot.*,
// the same checks on both paths and random shapes): every element within tests/support/bf16_dot_bound.hpp's bound of an
// exact (double) sum, NaN and infinities exactly where that sum has them, C's padding rows
// untouched, for m 1..25, n 1..17, k 2..18 around the 12 x 8 tile's edges (and k % 4 == 2, the
// half-filled last step), every batch kind, beta 0 and 1, counts 0..3, bias per row / column,
// relu, an f32 or a bf16 C; operands against guard pages. The unary epilogue: the fused kernel is
// the plain one followed by the Neon unary TPP, bit for bit (the same ActivationEmitter sequence).
// Skipped by name where the CPU lacks FEAT_BF16 (qemu's default CPU has it).
#include <gtest/gtest.h>
#include <sys/auxv.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bf16_dot_bound.hpp"
#include "brgemm_emit.hpp"
#include "guarded_buffer.hpp"
#include "host_isas.hpp"
#include "neon_brgemm_check.hpp"
#include "neon_brgemm_plan.hpp"
#include "weft/jit/bfloat16.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/tpp/brgemm.hpp"
#include "weft/tpp/unary.hpp"

namespace {

using namespace weft::tpp;
using weft::jit::DataType;
using Buffer = weft::test::GuardedBuffer<std::uint8_t>;
namespace bound = weft::test::bf16_dot;
using neon_brgemm_test::set_batch;

constexpr unsigned long kHwcap2Bf16 = 1ul << 14;  // HWCAP2_BF16 of the Linux arm64 ABI
bool has_bf16() { return (getauxval(AT_HWCAP2) & kHwcap2Bf16) != 0; }
#define SKIP_WITHOUT_BF16() \
  if (!has_bf16()) GTEST_SKIP() << "this CPU lacks FEAT_BF16 (getauxval(AT_HWCAP2) has no HWCAP2_BF16)"

constexpr DataTypes kBf16F32{.in = DataType::bf16, .out = DataType::f32, .compute = DataType::f32};
constexpr DataTypes kBf16{.in = DataType::bf16, .out = DataType::bf16, .compute = DataType::f32};
constexpr BrgemmBatch kBatches[] = {BrgemmBatch::strided, BrgemmBatch::offsets, BrgemmBatch::addresses};
constexpr BrgemmBias kBiases[] = {BrgemmBias::none, BrgemmBias::per_row, BrgemmBias::per_col};

float bf16_value(std::uint16_t bits) { return weft::jit::to_float(weft::jit::bfloat16{bits}); }
// A bf16 input as bfmmla reads it: a denormal is a zero.
double bf16_input(std::uint16_t bits) { return (bits & 0x7f80) == 0 ? 0.0 : bf16_value(bits); }

// Random values in [-1, 1] of `type`, one in `special_every` (0: none) NaN, +-inf, +-0 or denormal.
void fill(Buffer& b, DataType type, std::mt19937& rng, int special_every) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const std::size_t bytes = type == DataType::bf16 ? 2 : 4, count = b.size() / bytes;
  for (std::size_t i = 0; i < count; ++i) {
    float x = dist(rng);
    int special = -1;
    if (special_every > 0 && rng() % static_cast<unsigned>(special_every) == 0) special = static_cast<int>(rng() % 6);
    if (type == DataType::bf16) {
      static constexpr std::uint16_t kSpecial[] = {0x7fc0, 0x7f80, 0xff80, 0x8000, 0x0041, 0x8023};
      const std::uint16_t h = special >= 0 ? kSpecial[special] : weft::jit::to_bfloat16(x).bits;
      std::memcpy(b.data() + 2 * i, &h, 2);
    } else {
      static const float kSpecial[] = {std::numeric_limits<float>::quiet_NaN(), INFINITY, -INFINITY, -0.0f, 1e-39f,
                                       -3e-40f};
      if (special >= 0) x = kSpecial[special];
      std::memcpy(b.data() + 4 * i, &x, 4);
    }
  }
}

double read(const std::uint8_t* base, std::int64_t i, DataType type) {
  if (type == DataType::bf16) {
    std::uint16_t h;
    std::memcpy(&h, base + 2 * i, 2);
    return bf16_value(h);
  }
  float f;
  std::memcpy(&f, base + 4 * i, 4);
  return f;
}

std::uint16_t read_bits(const std::uint8_t* base, std::int64_t i) {
  std::uint16_t h;
  std::memcpy(&h, base + 2 * i, 2);
  return h;
}

// One call's operands (as neon_brgemm_check.cpp lays them out: entries apart, every buffer against
// a guard page) and its arguments.
struct Operands {
  Operands(const BrgemmDesc& d, std::int64_t count, std::uint32_t seed, int special_every, bool flush_front) {
    std::mt19937 rng(seed);
    const auto flush = flush_front ? weft::test::Flush::front : weft::test::Flush::back;
    a_size = (d.k / 2 - 1) * 2 * d.lda + 2 * d.m;
    b_size = d.ldb * (d.n - 1) + d.k;
    c_size = d.ldc * (d.n - 1) + d.m;
    stride_a = a_size + 3;
    stride_b = b_size + 5;
    const std::int64_t entries = std::max<std::int64_t>(count, 1);
    const std::int64_t out_bytes = d.types.out == DataType::bf16 ? 2 : 4;
    auto make = [&](std::int64_t elements, std::int64_t bytes, DataType type) {
      auto buf = std::make_unique<Buffer>(static_cast<std::size_t>(elements * bytes), flush);
      fill(*buf, type, rng, special_every);
      return buf;
    };
    a = make(stride_a * (entries - 1) + a_size, 2, DataType::bf16);
    b = make(stride_b * (entries - 1) + b_size, 2, DataType::bf16);
    c = make(c_size, out_bytes, d.types.out);
    bias = make(d.bias == BrgemmBias::per_row ? d.m : d.n, out_bytes, d.types.out);
    for (std::int64_t i = 0; i < entries; ++i) {
      offsets_a.push_back((entries - 1 - i) * stride_a);
      offsets_b.push_back((entries - 1 - i) * stride_b);
      own.push_back(make(a_size, 2, DataType::bf16));
      addresses_a.push_back(own.back()->data());
      own.push_back(make(b_size, 2, DataType::bf16));
      addresses_b.push_back(own.back()->data());
    }
    args = {.a = a->data(), .b = b->data(), .c = c->data(), .count = count};
    if (d.bias != BrgemmBias::none) args.bias = bias->data();
    set_batch(args, d.batch, stride_a, stride_b, offsets_a, offsets_b, addresses_a, addresses_b);
  }
  // Batch entry e's A and B.
  const std::uint8_t* entry_a(const BrgemmDesc& d, std::int64_t e) const {
    if (d.batch == BrgemmBatch::addresses) return static_cast<const std::uint8_t*>(addresses_a[static_cast<std::size_t>(e)]);
    const std::int64_t offset = d.batch == BrgemmBatch::strided ? e * stride_a : offsets_a[static_cast<std::size_t>(e)];
    return a->data() + 2 * offset;
  }
  const std::uint8_t* entry_b(const BrgemmDesc& d, std::int64_t e) const {
    if (d.batch == BrgemmBatch::addresses) return static_cast<const std::uint8_t*>(addresses_b[static_cast<std::size_t>(e)]);
    const std::int64_t offset = d.batch == BrgemmBatch::strided ? e * stride_b : offsets_b[static_cast<std::size_t>(e)];
    return b->data() + 2 * offset;
  }

  std::int64_t a_size, b_size, c_size, stride_a, stride_b;
  std::unique_ptr<Buffer> a, b, c, bias;
  std::vector<std::unique_ptr<Buffer>> own;
  std::vector<const void*> addresses_a, addresses_b;
  std::vector<std::int64_t> offsets_a, offsets_b;
  BrgemmArgs args;
};

BrgemmKernelFn finalize(std::unique_ptr<neon::BrgemmEmitter>& code, const BrgemmDesc& d) {
  return code->finalize<BrgemmKernelFn>(to_string(d) + " bfmmla");
}

// Runs `kernel` (a bf16 kernel of d on the BFDotAdd instructions) and checks every element of C
// against the exact sum and the bound. steps_per_entry: BFDotAdd steps of an element per batch
// entry (bfmmla: k / 4 rounded up, times 2, the zero pair of padding counted; bfdot: k / 2).
void check_kernel(const BrgemmDesc& d, BrgemmKernelFn kernel, std::int64_t count, std::uint32_t seed,
                  int special_every = 0, bool flush_front = false, std::int64_t steps_per_entry = -1) {
  Operands ops(d, count, seed, special_every, flush_front);
  const DataType out = d.types.out;
  const std::vector<std::uint8_t> before(ops.c->begin(), ops.c->end());
  kernel(&ops.args);
  if (steps_per_entry < 0) steps_per_entry = (d.k + 3) / 4 * 2;
  // An empty sum on an f32 C without an epilogue keeps C's bits (-0 included: bfdot's extra partial
  // sums start at -0). A bf16 C is rounded again on store (to_bfloat16 flushes its denormals).
  if (count <= 0 && d.beta == 1 && d.bias == BrgemmBias::none && d.activation == BrgemmActivation::none &&
      out == DataType::f32) {
    ASSERT_EQ(std::memcmp(ops.c->data(), before.data(), before.size()), 0) << "an empty sum changed C";
  }
  const std::int64_t steps = std::max<std::int64_t>(count, 0) * steps_per_entry;
  for (std::int64_t j = 0; j < d.n; ++j) {
    for (std::int64_t i = 0; i < d.ldc && i + j * d.ldc < ops.c_size; ++i) {
      const std::int64_t at = i + j * d.ldc;
      if (i >= d.m) {  // padding rows: untouched
        const std::size_t bytes = out == DataType::bf16 ? 2 : 4;
        ASSERT_EQ(std::memcmp(ops.c->data() + at * static_cast<std::int64_t>(bytes),
                              before.data() + at * static_cast<std::int64_t>(bytes), bytes), 0)
            << "padding row " << i << " column " << j << " changed";
        continue;
      }
      double sum = d.beta == 1 ? read(before.data(), at, out) : 0.0;
      double magnitude = std::fabs(sum);
      std::int64_t terms = 0;
      for (std::int64_t e = 0; e < count; ++e) {
        const std::uint8_t* a = ops.entry_a(d, e);
        const std::uint8_t* b = ops.entry_b(d, e);
        for (std::int64_t kk = 0; kk < d.k; ++kk, ++terms) {
          const double p = bf16_input(read_bits(a, (kk / 2) * 2 * d.lda + 2 * i + kk % 2)) *
                           bf16_input(read_bits(b, j * d.ldb + kk));
          sum += p;
          magnitude += std::fabs(p);
        }
      }
      double e = bound::accumulator_bound(magnitude, steps) + bound::double_sum_slack(magnitude, terms);
      if (d.bias != BrgemmBias::none) {
        sum += read(ops.bias->data(), d.bias == BrgemmBias::per_row ? i : j, out);
        e = bound::after_bias(e, std::fabs(sum));
      }
      if (d.activation == BrgemmActivation::relu && sum <= 0) sum = 0.0;
      if (out == DataType::bf16) e = bound::after_bf16_round(e, std::fabs(sum));
      const double got = read(ops.c->data(), at, out);
      const bool ok = std::isnan(sum) ? std::isnan(got) : std::isinf(sum) ? got == sum : std::fabs(got - sum) <= e;
      if (!ok) {
        ADD_FAILURE() << "row " << i << " column " << j << ": " << got << ", exact " << sum << ", bound " << e
                      << " (difference " << std::fabs(got - sum) << ")";
        return;
      }
    }
  }
}

// Runs the kernel of d and checks every element of C against the exact sum and the bound.
// packing: bfmmla with the plan's tiling choice (automatic; with path automatic, bfdot where the
// plan chooses it), packed B wherever it fits (always), or the in-register tiling only (never: the
// kernel's path for calls of many entries). path dot: the bfdot kernel.
void check(const BrgemmDesc& d, std::int64_t count, std::uint32_t seed, int special_every = 0, bool flush_front = false,
           neon::MmlaPacking packing = neon::MmlaPacking::always, neon::Bf16Path path = neon::Bf16Path::automatic) {
  SCOPED_TRACE(to_string(d) + " count=" + std::to_string(count) + " seed=" + std::to_string(seed) +
               " packing=" + std::to_string(static_cast<int>(packing)) +
               " path=" + std::to_string(static_cast<int>(path)));
  auto code = std::make_unique<neon::BrgemmEmitter>(d, true, packing, path);
  const neon::NeonBrgemmMath math = code->plan().math;
  if (path == neon::Bf16Path::dot) {
    ASSERT_EQ(math, neon::NeonBrgemmMath::bf16_dot);
  } else if (path == neon::Bf16Path::mmla || packing != neon::MmlaPacking::automatic) {
    ASSERT_EQ(math, neon::NeonBrgemmMath::bf16_mmla);
  }
  const std::int64_t steps = math == neon::NeonBrgemmMath::bf16_dot ? d.k / 2 : (d.k + 3) / 4 * 2;
  check_kernel(d, finalize(code, d), count, seed, special_every, flush_front, steps);
}

TEST(NeonBrgemmMmla, PlansPacked4By24AndInRegisters12By8) {
  const BrgemmDesc d{.m = 64, .n = 64, .k = 64, .lda = 64, .ldb = 64, .ldc = 64, .types = kBf16F32};
  const neon::NeonBrgemmPlan packed = neon::plan_neon_brgemm(d, true);
  EXPECT_EQ(packed.math, neon::NeonBrgemmMath::bf16_mmla);
  EXPECT_TRUE(packed.packed_b);
  EXPECT_EQ(packed.max_cols, 24);
  EXPECT_EQ(packed.panels.size(), 16u);  // 4 rows each
  ASSERT_EQ(packed.blocks.size(), 3u);   // 22 + 22 + 20: column pairs near-equal
  EXPECT_EQ(packed.blocks[1].cols, 22);
  EXPECT_EQ(packed.blocks[2].cols, 20);
  const std::vector<neon::NeonColumnBlock> odd{{.col0 = 0, .cols = 8}, {.col0 = 8, .cols = 5}};
  EXPECT_EQ(neon::plan_neon_brgemm({.m = 4, .n = 13, .k = 4, .lda = 4, .ldb = 4, .ldc = 4, .types = kBf16F32}, true,
                                   neon::MmlaPacking::never).blocks, odd);
  EXPECT_EQ(packed.packed_entry_bytes, 16 * 11 * 16);  // 16 steps of 4 k, 11 column pairs
  EXPECT_EQ(packed.packed_max_count, 65536 / (16 * 11 * 16));
  EXPECT_EQ(neon::tile_registers(packed.math, 4, 1, 24), 32);
  // An entry's packed B above 48 KiB: in registers only, even when asked; fewer than 32 rows: not
  // by default.
  EXPECT_FALSE(neon::plan_neon_brgemm({.m = 4, .n = 24, .k = 2052, .lda = 4, .ldb = 2052, .ldc = 4, .types = kBf16F32},
                                      true, neon::MmlaPacking::always).packed_b);
  const BrgemmDesc low{.m = 31, .n = 64, .k = 64, .lda = 31, .ldb = 64, .ldc = 31, .types = kBf16F32};
  EXPECT_FALSE(neon::plan_neon_brgemm(low, true).packed_b);
  EXPECT_TRUE(neon::plan_neon_brgemm(low, true, neon::MmlaPacking::always).packed_b);
  // Fewer than 16 columns: in registers by default (the packed 4-row tile is latency-bound).
  BrgemmDesc narrow = d;
  narrow.n = 15;
  EXPECT_FALSE(neon::plan_neon_brgemm(narrow, true).packed_b);
  narrow.n = 16;
  EXPECT_TRUE(neon::plan_neon_brgemm(narrow, true).packed_b);
  const neon::NeonBrgemmPlan plan = neon::plan_neon_brgemm(d, true, neon::MmlaPacking::never);
  EXPECT_EQ(plan.math, neon::NeonBrgemmMath::bf16_mmla);
  EXPECT_FALSE(plan.packed_b);
  EXPECT_EQ(plan.max_cols, 8);
  ASSERT_EQ(plan.panels.size(), 6u);  // 5 x 12 rows + 4
  EXPECT_EQ(plan.panels[0].vectors, 3);
  EXPECT_EQ(plan.panels[5].vectors, 1);
  EXPECT_EQ(plan.blocks.size(), 8u);
  EXPECT_EQ(neon::tile_registers(plan.math, 4, 3, 8), 32);
  EXPECT_EQ(neon::tile_registers(plan.math, 4, 3, 7), 32);  // an odd count takes the even one above
  // Without bf16 instructions: the widening plan, unchanged.
  EXPECT_EQ(neon::plan_neon_brgemm(d).math, neon::NeonBrgemmMath::bf16_widen);
  EXPECT_EQ(neon::plan_neon_brgemm({.m = 8, .n = 8, .k = 8, .lda = 8, .ldb = 8, .ldc = 8}, true).math,
            neon::NeonBrgemmMath::fma);  // f32 ignores it
}

void every_shape(const DataTypes& types, std::uint32_t seed0, neon::MmlaPacking packing,
                 neon::Bf16Path path = neon::Bf16Path::automatic) {
  static constexpr int kMs[] = {1, 2, 3, 4, 5, 8, 11, 12, 13, 16, 23, 25};
  static constexpr int kNs[] = {1, 2, 3, 7, 8, 9, 16, 17};
  static constexpr int kKs[] = {2, 4, 6, 8, 10, 18};
  int index = 0;
  for (int m : kMs) {
    for (int n : kNs) {
      for (int k : kKs) {
        ++index;
        if (index % 2 == 0 && k > 10) continue;  // fewer long ones
        const int pad = index % 5 % 3;
        const BrgemmDesc d{.m = m, .n = n, .k = k, .lda = m + pad * 2, .ldb = k + pad, .ldc = m + pad,
                           .beta = index % 2, .batch = kBatches[index % 3], .bias = kBiases[index / 3 % 3],
                           .activation = index % 4 == 1 ? BrgemmActivation::relu : BrgemmActivation::none,
                           .types = types};
        const std::int64_t count = index / 7 % 4 == 3 ? 0 : 1 + index / 7 % 4;
        check(d, count, seed0 + static_cast<std::uint32_t>(index), index % 3 == 0 ? 9 : 0, index % 2 == 1, packing,
              path);
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

TEST(NeonBrgemmMmla, F32OutputEveryShapeWithinTheBound) {
  SKIP_WITHOUT_BF16();
  every_shape(kBf16F32, 9100, neon::MmlaPacking::always);
}

TEST(NeonBrgemmMmla, Bf16OutputEveryShapeWithinTheBound) {
  SKIP_WITHOUT_BF16();
  every_shape(kBf16, 9200, neon::MmlaPacking::always);
}

TEST(NeonBrgemmMmla, InRegistersF32OutputEveryShapeWithinTheBound) {
  SKIP_WITHOUT_BF16();
  every_shape(kBf16F32, 9300, neon::MmlaPacking::never);
}

TEST(NeonBrgemmMmla, InRegistersBf16OutputEveryShapeWithinTheBound) {
  SKIP_WITHOUT_BF16();
  every_shape(kBf16, 9400, neon::MmlaPacking::never);
}

// The packed buffer's limits: k = 256, 24 columns: 64 x 12 x 16 = 12 KiB per entry, 5 entries in
// 64 KiB: counts 5 (packed) and 6 (the in-register path of the same kernel); k = 1024: 48 KiB, one
// entry; k = 2052: in registers only.
TEST(NeonBrgemmMmla, CountsAroundThePackedBuffersSize) {
  SKIP_WITHOUT_BF16();
  const BrgemmDesc d{.m = 5, .n = 24, .k = 256, .lda = 5, .ldb = 256, .ldc = 5, .beta = 1, .types = kBf16F32};
  ASSERT_EQ(neon::plan_neon_brgemm(d, true, neon::MmlaPacking::always).packed_max_count, 5);
  // A negative count (an empty sum, compared unsigned: the in-register path) and 0 (the packed one).
  for (std::int64_t count : {5, 6, -1, 0}) check(d, count, 60 + static_cast<std::uint32_t>(count + 2));
  const BrgemmDesc e{.m = 3, .n = 23, .k = 1024, .lda = 3, .ldb = 1024, .ldc = 3, .beta = 0,
                     .batch = BrgemmBatch::addresses, .bias = BrgemmBias::per_col, .types = kBf16};
  ASSERT_EQ(neon::plan_neon_brgemm(e, true, neon::MmlaPacking::always).packed_max_count, 1);
  for (std::int64_t count : {1, 2}) check(e, count, 70 + static_cast<std::uint32_t>(count));
  check({.m = 6, .n = 25, .k = 2052, .lda = 6, .ldb = 2052, .ldc = 7, .beta = 1, .types = kBf16F32}, 1, 80);
}

TEST(NeonBrgemmMmla, LargeShapesLongSumsAndLeadingDimensions) {
  SKIP_WITHOUT_BF16();
  check({.m = 64, .n = 64, .k = 64, .lda = 64, .ldb = 64, .ldc = 64, .beta = 1, .types = kBf16}, 2, 30, 0, false,
        neon::MmlaPacking::never);
  check({.m = 40, .n = 30, .k = 14, .lda = 41, .ldb = 15, .ldc = 40, .beta = 1, .types = kBf16}, 2, 35, 0, false,
        neon::MmlaPacking::automatic);
  // prefetch next_c (prfm only: the same numbers), both tilings.
  for (auto packing : {neon::MmlaPacking::always, neon::MmlaPacking::never}) {
    check({.m = 26, .n = 11, .k = 6, .lda = 26, .ldb = 6, .ldc = 27, .beta = 1, .prefetch = BrgemmPrefetch::next_c,
           .types = kBf16F32},
          2, 36, 0, true, packing);
  }
  check({.m = 64, .n = 64, .k = 64, .lda = 64, .ldb = 64, .ldc = 64, .beta = 0, .batch = BrgemmBatch::offsets,
         .types = kBf16F32},
        4, 31);
  check({.m = 37, .n = 21, .k = 34, .lda = 5000, .ldb = 7001, .ldc = 4099, .beta = 1, .types = kBf16F32}, 3, 32);
  check({.m = 37, .n = 21, .k = 34, .lda = 5000, .ldb = 7001, .ldc = 4099, .beta = 1, .bias = BrgemmBias::per_row,
         .activation = BrgemmActivation::relu, .types = kBf16},
        3, 33, 11);
  check({.m = 25, .n = 9, .k = 258, .lda = 25, .ldb = 258, .ldc = 25, .beta = 1, .types = kBf16F32}, 2, 34);
}

// Specials everywhere (one input in 3): NaN and infinities exactly where the exact sum has them.
void special_values(neon::Bf16Path path) {
  int index = 0;
  for (const DataTypes& types : {kBf16F32, kBf16}) {
    for (int beta : {0, 1}) {
      for (BrgemmBias bias : kBiases) {
        ++index;
        check({.m = 13, .n = path == neon::Bf16Path::dot ? 1 + index % 9 : 9, .k = 6, .lda = 13, .ldb = 6, .ldc = 14,
               .beta = beta, .bias = bias, .activation = index % 2 ? BrgemmActivation::relu : BrgemmActivation::none,
               .types = types},
              2, 40 + static_cast<std::uint32_t>(index), 3, false,
              path == neon::Bf16Path::dot ? neon::MmlaPacking::automatic : neon::MmlaPacking::always, path);
      }
    }
  }
}

TEST(NeonBrgemmMmla, SpecialValues) {
  SKIP_WITHOUT_BF16();
  special_values(neon::Bf16Path::mmla);
}

// The unary epilogue: the fused kernel's C is the plain kernel's (f32 C, no activation) passed
// through the Neon unary TPP of the op (and rounded by to_bfloat16 for a bf16 C), bit for bit.
TEST(NeonBrgemmMmla, UnaryEpilogueIsThePlainKernelThenTheUnaryTpp) {
  SKIP_WITHOUT_BF16();
  constexpr UnaryOp kOps[] = {UnaryOp::exp, UnaryOp::gelu, UnaryOp::sigmoid, UnaryOp::tanh, UnaryOp::scale,
                              UnaryOp::sqrt};
  int index = 0;
  for (const DataTypes& types : {kBf16F32, kBf16}) {
    for (UnaryOp op : kOps) {
      ++index;
      const int m = 3 + 5 * (index % 4), n = 1 + 3 * (index % 5), k = 2 + 2 * (index % 4);
      BrgemmDesc d{.m = m, .n = n, .k = k, .lda = m, .ldb = k + 1, .ldc = m + 1, .beta = index % 2,
                   .batch = kBatches[index % 3], .bias = kBiases[index % 3], .activation = BrgemmActivation::unary,
                   .unary = op, .unary_alpha = op == UnaryOp::scale ? -0.75f : 0.0f, .types = types};
      SCOPED_TRACE(to_string(d));
      Operands fused(d, 2, 500 + static_cast<std::uint32_t>(index), 0, false);
      // The plain kernel on the same inputs with an f32 C and bias holding the same values.
      BrgemmDesc plain_d = d;
      plain_d.activation = BrgemmActivation::none;
      plain_d.unary = UnaryOp::copy;
      plain_d.unary_alpha = 0.0f;
      plain_d.types = kBf16F32;
      Operands plain(plain_d, 2, 500 + static_cast<std::uint32_t>(index), 0, false);
      const bool bf16_c = types.out == DataType::bf16;
      std::memcpy(plain.a->data(), fused.a->data(), plain.a->size());
      std::memcpy(plain.b->data(), fused.b->data(), plain.b->size());
      plain.args.offsets_a = fused.args.offsets_a;
      plain.args.offsets_b = fused.args.offsets_b;
      plain.args.addresses_a = fused.args.addresses_a;
      plain.args.addresses_b = fused.args.addresses_b;
      auto widen = [&](const Buffer& from, Buffer& to) {
        for (std::size_t i = 0; i < to.size() / 4; ++i) {
          const float x = bf16_c ? bf16_value(read_bits(from.data(), static_cast<std::int64_t>(i)))
                                 : static_cast<float>(read(from.data(), static_cast<std::int64_t>(i), DataType::f32));
          std::memcpy(to.data() + 4 * i, &x, 4);
        }
      };
      widen(*fused.c, *plain.c);
      widen(*fused.bias, *plain.bias);
      // bfmmla's two tilings and bfdot in turn.
      const auto packing = index % 3 == 2 ? neon::MmlaPacking::automatic
                           : index % 3 == 1 ? neon::MmlaPacking::always : neon::MmlaPacking::never;
      const auto path = index % 3 == 2 ? neon::Bf16Path::dot : neon::Bf16Path::mmla;
      auto fused_code = std::make_unique<neon::BrgemmEmitter>(d, true, packing, path);
      auto plain_code = std::make_unique<neon::BrgemmEmitter>(plain_d, true, packing, path);
      ASSERT_EQ(fused_code->plan().math, path == neon::Bf16Path::dot ? neon::NeonBrgemmMath::bf16_dot
                                                                     : neon::NeonBrgemmMath::bf16_mmla);
      finalize(fused_code, d)(&fused.args);
      finalize(plain_code, plain_d)(&plain.args);
      const UnaryDesc ud{.op = op, .m = m, .n = n, .ld_in = d.ldc, .ld_out = d.ldc, .alpha = d.unary_alpha};
      auto unary = unary_kernel(ud, weft::jit::Isa::neon);
      std::vector<float> after(static_cast<std::size_t>(plain.c_size));
      const UnaryArgs ua{.in = plain.c->data(), .out = after.data()};
      unary(&ua);
      for (std::int64_t j = 0; j < n; ++j) {
        for (std::int64_t i = 0; i < m; ++i) {
          const std::int64_t at = i + j * d.ldc;
          const float want = after[static_cast<std::size_t>(at)];
          if (bf16_c) {
            const std::uint16_t w = weft::jit::to_bfloat16(want).bits, g = read_bits(fused.c->data(), at);
            ASSERT_EQ(g, w) << "row " << i << " column " << j;
          } else {
            float g;
            std::memcpy(&g, fused.c->data() + 4 * at, 4);
            ASSERT_EQ(std::bit_cast<std::uint32_t>(g), std::bit_cast<std::uint32_t>(want)) << "row " << i << " column " << j;
          }
        }
      }
    }
  }
}

// The library's kernels of every ISA with BF16 this CPU runs (neon_bf16, and sve*_bf16 at its
// vector length) keep the bound: the dispatcher gives them the Neon bf16 paths (n = 1: bfdot).
TEST(NeonBrgemmMmla, EveryBf16IsaThroughTheLibraryWithinTheBound) {
  const std::vector<weft::jit::Isa> isas = weft::test::runnable_bf16_bound_isas();
  if (isas.empty()) GTEST_SKIP() << "this CPU has no BF16 (HWCAP2_BF16)";
  std::uint32_t seed = 900;
  // m = 3 or n = 1: bfdot, the others bfmmla; the bound with bfmmla's step count (k = 18: 10 per
  // entry), which holds for bfdot's 9 too.
  for (weft::jit::Isa isa : isas) {
    for (const DataTypes& types : {kBf16F32, kBf16}) {
      for (int m : {3, 7, 40}) {
        for (int n : {1, 9}) {
          BrgemmDesc d{.m = m, .n = n, .k = 18, .lda = m + 1, .ldb = 20, .ldc = m + 2, .beta = 1, .types = types};
          SCOPED_TRACE(std::string(weft::jit::to_string(isa)) + " " + to_string(d));
          check_kernel(d, brgemm_kernel(d, isa).fn(), 3, seed++);
        }
      }
    }
  }
}

// --- bfdot (NeonBrgemmMath::bf16_dot) ---

TEST(NeonBrgemmBfdot, PlanChoosesBfdotForNarrowShapes) {
  const auto desc = [](int m, int n, int k) {
    return BrgemmDesc{.m = m, .n = n, .k = k, .lda = m, .ldb = k, .ldc = m, .types = kBf16F32};
  };
  // n <= 3 or m <= 4 (the llvm-mca table in neon_brgemm_plan.cpp).
  EXPECT_TRUE(neon::bfdot_pays(desc(64, 1, 64)));
  EXPECT_TRUE(neon::bfdot_pays(desc(1, 1, 2)));
  EXPECT_TRUE(neon::bfdot_pays(desc(16, 2, 64)));
  EXPECT_TRUE(neon::bfdot_pays(desc(64, 3, 64)));
  EXPECT_TRUE(neon::bfdot_pays(desc(4, 64, 64)));
  EXPECT_TRUE(neon::bfdot_pays(desc(1, 17, 8)));
  EXPECT_FALSE(neon::bfdot_pays(desc(64, 64, 64)));
  EXPECT_FALSE(neon::bfdot_pays(desc(64, 4, 64)));
  EXPECT_FALSE(neon::bfdot_pays(desc(5, 64, 64)));
  EXPECT_FALSE(neon::bfdot_pays(desc(8, 8, 64)));
  EXPECT_EQ(neon::plan_neon_brgemm(desc(4, 64, 64), true).math, neon::NeonBrgemmMath::bf16_dot);
  EXPECT_EQ(neon::plan_neon_brgemm(desc(5, 64, 64), true).math, neon::NeonBrgemmMath::bf16_mmla);
  // n = 1: one column, panels of up to 24 vectors, near-equal (100 rows: 13 + 12 vectors).
  const neon::NeonBrgemmPlan gemv = neon::plan_neon_brgemm(desc(100, 1, 34), true);
  EXPECT_EQ(gemv.math, neon::NeonBrgemmMath::bf16_dot);
  EXPECT_EQ(gemv.panel_vectors, 24);
  const std::vector<neon::NeonPanel> panels{{.row0 = 0, .vectors = 13, .tail = 0},
                                            {.row0 = 52, .vectors = 12, .tail = 0}};
  EXPECT_EQ(gemv.panels, panels);
  EXPECT_EQ(neon::plan_neon_brgemm(desc(64, 1, 64), true).panels.size(), 1u);
  EXPECT_EQ(neon::plan_neon_brgemm(desc(97, 1, 64), true).panels.back().tail, 1);
  // Forced bfdot elsewhere: fma's 6-column blocks, panels of 24 / the widest block, at least 4.
  const neon::NeonBrgemmPlan wide = neon::plan_neon_brgemm(desc(64, 64, 64), true, neon::MmlaPacking::automatic,
                                                           neon::Bf16Path::dot);
  EXPECT_EQ(wide.math, neon::NeonBrgemmMath::bf16_dot);
  EXPECT_EQ(wide.panel_vectors, 4);
  EXPECT_EQ(wide.blocks.size(), 11u);
  EXPECT_EQ(neon::plan_neon_brgemm(desc(64, 2, 64), true, neon::MmlaPacking::automatic, neon::Bf16Path::dot)
                .panel_vectors, 12);
  for (int n : {1, 2, 3, 5, 7, 13}) {
    const neon::NeonBrgemmPlan p =
        neon::plan_neon_brgemm(desc(200, n, 8), true, neon::MmlaPacking::automatic, neon::Bf16Path::dot);
    for (const neon::NeonColumnBlock& b : p.blocks)
      for (const neon::NeonPanel& panel : p.panels)
        EXPECT_LE(panel.vectors * b.cols * p.k_split, 24) << "n=" << n;  // v8..v31
  }
  // Partial sums up to 16 chains in the widest tile: 64x1 has 16 vectors, 16x1 4 x 4 partials,
  // 8x8 2 x 6 x 2, 4x64 1 x 6 x 4, 8x1 2 x 1 x 4 (at most 4), 16x2 4 x 2 x 2.
  const auto split = [&](int m, int n) {
    return neon::plan_neon_brgemm(desc(m, n, 64), true, neon::MmlaPacking::automatic, neon::Bf16Path::dot).k_split;
  };
  EXPECT_EQ(split(64, 1), 1);
  EXPECT_EQ(split(16, 1), 4);
  EXPECT_EQ(split(8, 8), 2);
  EXPECT_EQ(split(4, 64), 4);
  EXPECT_EQ(split(8, 1), 4);
  EXPECT_EQ(split(32, 2), 1);  // 8 x 2
  EXPECT_EQ(split(16, 2), 2);
  EXPECT_EQ(neon::tile_registers(neon::NeonBrgemmMath::bf16_dot, 4, 1, 6, 4), 32);
  // A packing asked for, or bfmmla asked for, is bfmmla even for n = 1; without bf16 instructions
  // the widening kernel.
  EXPECT_EQ(neon::plan_neon_brgemm(desc(64, 1, 64), true, neon::MmlaPacking::never).math,
            neon::NeonBrgemmMath::bf16_mmla);
  EXPECT_EQ(neon::plan_neon_brgemm(desc(64, 1, 64), true, neon::MmlaPacking::automatic, neon::Bf16Path::mmla).math,
            neon::NeonBrgemmMath::bf16_mmla);
  EXPECT_EQ(neon::plan_neon_brgemm(desc(64, 1, 64)).math, neon::NeonBrgemmMath::bf16_widen);
}

TEST(NeonBrgemmBfdot, F32OutputEveryShapeWithinTheBound) {
  SKIP_WITHOUT_BF16();
  every_shape(kBf16F32, 9500, neon::MmlaPacking::automatic, neon::Bf16Path::dot);
}

TEST(NeonBrgemmBfdot, Bf16OutputEveryShapeWithinTheBound) {
  SKIP_WITHOUT_BF16();
  every_shape(kBf16, 9600, neon::MmlaPacking::automatic, neon::Bf16Path::dot);
}

TEST(NeonBrgemmBfdot, SpecialValues) {
  SKIP_WITHOUT_BF16();
  special_values(neon::Bf16Path::dot);
}

// n = 1 (GEMV-like): tall panels, near-equal, m's tail; long sums, large leading dimensions.
TEST(NeonBrgemmBfdot, NarrowAndLargeShapes) {
  SKIP_WITHOUT_BF16();
  const auto dot = neon::Bf16Path::dot;
  const auto automatic = neon::MmlaPacking::automatic;
  check({.m = 64, .n = 1, .k = 64, .lda = 64, .ldb = 64, .ldc = 64, .beta = 1, .types = kBf16F32}, 2, 1000, 0, false,
        automatic, dot);
  check({.m = 97, .n = 1, .k = 34, .lda = 99, .ldb = 35, .ldc = 97, .beta = 1, .bias = BrgemmBias::per_row,
         .activation = BrgemmActivation::relu, .types = kBf16},
        3, 1001, 0, true, automatic, dot);
  check({.m = 100, .n = 1, .k = 258, .lda = 100, .ldb = 258, .ldc = 100, .beta = 0, .batch = BrgemmBatch::offsets,
         .bias = BrgemmBias::per_col, .types = kBf16F32},
        2, 1002, 0, false, automatic, dot);
  check({.m = 37, .n = 21, .k = 34, .lda = 5000, .ldb = 7001, .ldc = 4099, .beta = 1, .types = kBf16F32}, 3, 1003, 0,
        false, automatic, dot);
  check({.m = 64, .n = 64, .k = 64, .lda = 64, .ldb = 64, .ldc = 64, .beta = 1, .batch = BrgemmBatch::addresses,
         .types = kBf16},
        2, 1004, 0, false, automatic, dot);
  check({.m = 26, .n = 2, .k = 6, .lda = 26, .ldb = 6, .ldc = 27, .beta = 1, .prefetch = BrgemmPrefetch::next_c,
         .types = kBf16F32},
        2, 1005, 0, true, automatic, dot);
  for (std::int64_t count : {-1, 0}) {  // C with specials, -0 among them (4 partial sums)
    check({.m = 9, .n = 1, .k = 10, .lda = 9, .ldb = 10, .ldc = 9, .beta = 1, .types = kBf16F32}, count, 1006, 2, false,
          automatic, dot);
  }
}

// Random shapes with fixed seeds, each on both paths (bfmmla in its two tilings, bfdot) and on the
// plan's choice: the same bound.
TEST(NeonBrgemmBfdot, RandomShapesBothPathsWithinTheBound) {
  SKIP_WITHOUT_BF16();
  std::mt19937 rng(2811);
  for (int shape = 0; shape < 24; ++shape) {
    const int m = 1 + static_cast<int>(rng() % 40);
    const int n = shape % 4 == 0 ? 1 : 1 + static_cast<int>(rng() % 20);
    const int k = 2 * (1 + static_cast<int>(rng() % 20));  // k % 4 == 2 about half the time
    const int pad = static_cast<int>(rng() % 3);
    const BrgemmDesc d{.m = m, .n = n, .k = k, .lda = m + pad, .ldb = k + pad, .ldc = m + 2 * pad,
                       .beta = static_cast<int>(rng() % 2), .batch = kBatches[rng() % 3], .bias = kBiases[rng() % 3],
                       .activation = rng() % 3 == 0 ? BrgemmActivation::relu : BrgemmActivation::none,
                       .types = rng() % 2 ? kBf16 : kBf16F32};
    const std::int64_t count = static_cast<std::int64_t>(rng() % 4);
    const auto seed = 3000 + 10 * static_cast<std::uint32_t>(shape);
    check(d, count, seed, shape % 5 == 0 ? 7 : 0, shape % 2 == 1, neon::MmlaPacking::automatic, neon::Bf16Path::dot);
    check(d, count, seed + 1, 0, false, neon::MmlaPacking::always);
    check(d, count, seed + 2, 0, false, neon::MmlaPacking::never);
    check(d, count, seed + 3, 0, true, neon::MmlaPacking::automatic);
    if (::testing::Test::HasFailure()) return;
  }
}

// The forms each path uses (bfdot by element and no bfmmla, or the reverse; each form is checked
// against GNU as in tests/a64_assembler), on the shapes whose llvm-mca figures bfdot_pays and
// docs/tpp_brgemm.md quote; with WEFT_BF16_CODE_DUMP=dir, their code goes to
// dir/bf16_<dot|mmla|mmlareg>_<m>x<n>x<k>.bin (f32 C, beta 1; mmla: the plan's tiling, mmlareg:
// in registers) for scripts/mca_kernels.py ("file PATH"; a packed kernel's packed loop: "file PATH 1").
TEST(NeonBrgemmBfdot, FormsUsedAndCodeDump) {
  using weft::jit::a64::Form;
  static constexpr int kShapes[][3] = {{64, 64, 64}, {64, 1, 64}, {64, 2, 64}, {64, 3, 64}, {64, 4, 64},
                                       {16, 1, 64}, {4, 1, 64},   {8, 8, 64},  {16, 2, 64}, {4, 64, 64},
                                       {256, 1, 64}, {8, 1, 64}, {12, 1, 64}, {32, 2, 64}, {16, 3, 64},
                                       {64, 6, 64}, {64, 8, 64}, {64, 12, 64}, {64, 16, 64}, {16, 4, 64},
                                       {2, 64, 64}, {64, 5, 64}};
  for (const auto& [m, n, k] : kShapes) {
    const BrgemmDesc d{.m = m, .n = n, .k = k, .lda = m, .ldb = k, .ldc = m, .beta = 1, .types = kBf16F32};
    for (int variant = 0; variant < 3; ++variant) {
      const bool dot = variant == 0;
      // bfdot, bfmmla with the plan's tiling, bfmmla in registers
      neon::BrgemmEmitter code(d, true, variant == 2 ? neon::MmlaPacking::never : neon::MmlaPacking::automatic,
                               dot ? neon::Bf16Path::dot : neon::Bf16Path::mmla);
      EXPECT_EQ(code.used(Form::bfdot_4s_elem), dot) << to_string(d);
      EXPECT_EQ(code.used(Form::bfmmla_4s), !dot) << to_string(d);
      const std::vector<std::uint8_t> bytes = code.bytes();
      if (const char* dir = std::getenv("WEFT_BF16_CODE_DUMP")) {
        const char* name = variant == 0 ? "dot_" : variant == 1 ? "mmla_" : "mmlareg_";
        const std::string file = std::string(dir) + "/bf16_" + name + std::to_string(m) + "x" +
                                 std::to_string(n) + "x" + std::to_string(k) + ".bin";
        std::FILE* f = std::fopen(file.c_str(), "wb");
        ASSERT_NE(f, nullptr) << file;
        std::fwrite(bytes.data(), 1, bytes.size(), f);
        std::fclose(f);
      }
    }
  }
}

}  // namespace
