// The Neon fp32 BRGEMM emitter (tpp/src/arch/aarch64/brgemm_emit.cpp) and its plan: bit for bit
// against brgemm_reference for every m in 1..40, n in 1..13 and k in 1..19, every batch kind with
// count 0, 1 and 3, beta 0 and 1, leading dimensions at and above their minimum, with A, B and C
// flush against guard pages so that touching one element past an operand faults (and C's padding
// rows compared, so that a store past m in a column other than the last is seen too).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "brgemm_emit.hpp"
#include "neon_brgemm_check.hpp"
#include "emitters.hpp"
#include "guarded_buffer.hpp"
#include "neon_brgemm_plan.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/jit/error.hpp"
#include "weft/tpp/brgemm.hpp"

namespace {

using namespace weft::tpp;
using weft::jit::Isa;
using weft::test::GuardedBuffer;

// ---- plan -----------------------------------------------------------------------------------------

TEST(NeonBrgemmPlan, PanelsCoverMAndBlocksCoverNWithin32Registers) {
  for (int m = 1; m <= 100; ++m) {
    for (int n = 1; n <= 40; ++n) {
      const BrgemmDesc d{.m = m, .n = n, .k = 8, .lda = m, .ldb = 8, .ldc = m};
      const neon::NeonBrgemmPlan plan = neon::plan_neon_brgemm(d);
      SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n));
      int row = 0;
      for (std::size_t p = 0; p < plan.panels.size(); ++p) {
        const neon::NeonPanel& panel = plan.panels[p];
        EXPECT_EQ(panel.row0, row);
        EXPECT_GE(panel.vectors, 1);
        EXPECT_LE(panel.vectors, neon::kPanelVectors);
        EXPECT_GE(panel.tail, 0);
        EXPECT_LT(panel.tail, plan.lanes);
        if (p + 1 < plan.panels.size()) {
          EXPECT_EQ(panel.vectors, neon::kPanelVectors) << "only the last panel is shorter";
          EXPECT_EQ(panel.tail, 0) << "only the last panel has a tail";
        }
        row += panel.rows(plan.lanes);
      }
      EXPECT_EQ(row, m);
      int col = 0, widest = 0, narrowest = 1 << 20;
      for (const neon::NeonColumnBlock& block : plan.blocks) {
        EXPECT_EQ(block.col0, col);
        EXPECT_GE(block.cols, 1);
        EXPECT_LE(block.cols, plan.max_cols);
        widest = std::max(widest, block.cols);
        narrowest = std::min(narrowest, block.cols);
        col += block.cols;
        for (const neon::NeonPanel& panel : plan.panels)
          EXPECT_LE(neon::tile_registers(plan.math, plan.lanes, panel.vectors, block.cols), neon::kVectorRegisters);
      }
      EXPECT_EQ(col, n);
      EXPECT_LE(widest - narrowest, 1) << "near-equal blocks";
    }
  }
  EXPECT_EQ(neon::tile_registers(neon::NeonBrgemmMath::fma, 4, 4, 6), 32);
}

TEST(NeonBrgemmPlan, Examples) {
  const BrgemmDesc d{.m = 37, .n = 13, .k = 5, .lda = 40, .ldb = 5, .ldc = 37};
  const neon::NeonBrgemmPlan plan = neon::plan_neon_brgemm(d);
  ASSERT_EQ(plan.panels.size(), 3u);
  EXPECT_EQ(plan.panels[2], (neon::NeonPanel{.row0 = 32, .vectors = 2, .tail = 1}));
  ASSERT_EQ(plan.blocks.size(), 3u);
  EXPECT_EQ(plan.blocks[0].cols, 5);
  EXPECT_EQ(plan.blocks[1].cols, 4);
  EXPECT_EQ(plan.blocks[2], (neon::NeonColumnBlock{.col0 = 9, .cols = 4}));
}

// ---- kernels against the reference -------------------------------------------------------------

// The shared check (neon_brgemm_check.hpp): operands flush against guard pages, C's padding rows
// compared too, bit for bit with brgemm_reference.
using neon_brgemm_test::check;
std::unique_ptr<weft::jit::GeneratedCode> emit(const BrgemmDesc& d) { return neon_brgemm_test::emit_neon(d); }

constexpr BrgemmBatch kBatches[] = {BrgemmBatch::strided, BrgemmBatch::offsets, BrgemmBatch::addresses};

// Every (m, n, k) of 1..40 x 1..13 x 1..19; beta, batch kind, count (3, 1, 0) and the leading
// dimensions' padding (none: the operands' columns touch, so a row past m is the next column's)
// rotate with the case, so that each shape class meets each of them.
TEST(NeonBrgemm, EveryShapeMatchesTheReferenceBitForBit) {
  int index = 0;
  for (int m = 1; m <= 40; ++m) {
    for (int n = 1; n <= 13; ++n) {
      for (int k = 1; k <= 19; ++k, ++index) {
        const int pad = index % 5 % 3;  // 0: the minimum leading dimensions
        const BrgemmDesc d{.m = m, .n = n, .k = k, .lda = m + pad * 3, .ldb = k + pad, .ldc = m + pad * 2,
                           .beta = index % 2, .batch = kBatches[index % 3]};
        const std::int64_t count = index / 7 % 3 == 0 ? 3 : index / 7 % 3 == 1 ? 1 : 0;
        check(d, count, static_cast<std::uint32_t>(1000 + index));
        if (HasFatalFailure()) return;
      }
    }
  }
}

// Every n and every k with an m tail and a full panel, so that each k tail (1-3) meets each column
// block width.
TEST(NeonBrgemm, EveryNAndKMatchTheReference) {
  int index = 0;
  for (int n = 1; n <= 13; ++n) {
    for (int k = 1; k <= 19; k += (n % 2 == 0 ? 1 : 2), ++index) {
      const int m = index % 2 == 0 ? 19 : 8;
      const BrgemmDesc d{.m = m, .n = n, .k = k, .lda = m + 1, .ldb = k, .ldc = m, .beta = 1,
                         .batch = kBatches[index % 3]};
      check(d, 2, static_cast<std::uint32_t>(5000 + index));
      if (HasFatalFailure()) return;
    }
  }
}

// Each batch kind with count 0, 1 and 3 and beta 0 and 1 on a few shapes (count 0 with beta 0
// writes zeros).
TEST(NeonBrgemm, BatchKindsCountsAndBeta) {
  const int shapes[][3] = {{16, 6, 4}, {7, 5, 3}, {33, 13, 9}};
  int index = 0;
  for (const auto& s : shapes)
    for (BrgemmBatch batch : kBatches)
      for (std::int64_t count : {0, 1, 3})
        for (int beta : {0, 1}) {
          const BrgemmDesc d{.m = s[0], .n = s[1], .k = s[2], .lda = s[0] + 2, .ldb = s[2] + 1, .ldc = s[0] + 1,
                             .beta = beta, .batch = batch};
          check(d, count, static_cast<std::uint32_t>(9000 + index++));
          if (HasFatalFailure()) return;
        }
}

// A negative count (which check_args rejects before a checked call) runs no batch entry, as on
// x86: the raw kernel must not loop through 2^64 entries.
TEST(NeonBrgemm, NegativeCountIsAnEmptySum) {
  const BrgemmDesc d{.m = 5, .n = 3, .k = 2, .lda = 5, .ldb = 2, .ldc = 5, .beta = 1};
  auto code = emit(d);
  auto fn = code->finalize<BrgemmKernelFn>(to_string(d));
  std::vector<float> a(10, 1.0f), b(6, 1.0f), c(15, 3.0f);
  BrgemmArgs args{.a = a.data(), .b = b.data(), .c = c.data(), .count = -1};
  fn(&args);
  for (float x : c) ASSERT_EQ(x, 3.0f);
}

// Large leading dimensions: offsets past add's and ldr's immediate ranges.
TEST(NeonBrgemm, LargeLeadingDimensions) {
  const BrgemmDesc d{.m = 21, .n = 9, .k = 11, .lda = 5000, .ldb = 7001, .ldc = 4099, .beta = 1};
  check(d, 2, 77);
  const BrgemmDesc e{.m = 64, .n = 64, .k = 64, .lda = 64, .ldb = 64, .ldc = 64, .beta = 0,
                     .batch = BrgemmBatch::offsets};
  check(e, 8, 78);
}

// The kernel cache generates Neon code on request (the ISA is not registered yet).
TEST(NeonBrgemm, KernelCacheGeneratesNeon) {
  const BrgemmDesc d{.m = 32, .n = 32, .k = 32, .lda = 32, .ldb = 32, .ldc = 32, .beta = 0};
  BrgemmCode code = brgemm_kernel(d, Isa::neon);
  std::vector<float> a(32 * 32 * 2, 0.5f), b(32 * 32 * 2, 2.0f), c(32 * 32, -1.0f);
  BrgemmArgs args{.a = a.data(), .b = b.data(), .c = c.data(), .count = 2, .stride_a = 1024, .stride_b = 1024};
  code(&args);
  for (float x : c) ASSERT_EQ(x, 64.0f);
}

// Every descriptor validate() accepts is in the scope; an invalid one is validate's error.
TEST(NeonBrgemm, InvalidDescriptorsAreErrors) {
  BrgemmDesc d{.m = 8, .n = 8, .k = 3, .lda = 8, .ldb = 3, .ldc = 8,
               .types = {.in = weft::jit::DataType::bf16, .out = weft::jit::DataType::bf16,
                         .compute = weft::jit::DataType::f32}};
  EXPECT_THROW((void)neon::BrgemmEmitter(d), weft::Error) << "odd k in bf16";
  d.k = 4;
  d.ldb = 4;
  EXPECT_NO_THROW((void)neon::BrgemmEmitter(d));
  d.ldc = 7;
  EXPECT_THROW((void)neon::BrgemmEmitter(d), weft::Error) << "ldc < m";
}

// The forms the emitter used (each is checked against GNU as in tests/a64_assembler); with
// WEFT_NEON_BRGEMM_DUMP=dir, the code of the 64x64x64 and 32x32x32 kernels (beta 1) goes to
// dir/neon_brgemm_<m>.bin (f32), neon_brgemm_<m>_t.bin (f32, B transposed), neon_brgemm_<m>_f64.bin
// and neon_brgemm_<m>_bf16.bin (bf16 inputs, f32 C), for objdump and llvm-mca.
TEST(NeonBrgemm, FormsUsedAndCodeDump) {
  using weft::jit::DataType;
  for (int size : {32, 64}) {
    const BrgemmDesc d{.m = size, .n = size, .k = size, .lda = size, .ldb = size, .ldc = size, .beta = 1};
    BrgemmDesc transposed = d, f64 = d, bf16 = d;
    transposed.b_transposed = true;
    f64.types = {.in = DataType::f64, .out = DataType::f64, .compute = DataType::f64};
    bf16.types = {.in = DataType::bf16, .out = DataType::f32, .compute = DataType::f32};
    const std::pair<const BrgemmDesc*, const char*> kernels[] = {
        {&d, ""}, {&transposed, "_t"}, {&f64, "_f64"}, {&bf16, "_bf16"}};
    for (const auto& [desc, suffix] : kernels) {
      neon::BrgemmEmitter code(*desc);
      EXPECT_TRUE(code.forms_used().any());
      const std::vector<std::uint8_t> bytes = code.bytes();
      EXPECT_GT(bytes.size(), 0u);
      if (const char* dir = std::getenv("WEFT_NEON_BRGEMM_DUMP")) {
        const std::string path = std::string(dir) + "/neon_brgemm_" + std::to_string(size) + suffix + ".bin";
        std::FILE* f = std::fopen(path.c_str(), "wb");
        ASSERT_NE(f, nullptr) << path;
        std::fwrite(bytes.data(), 1, bytes.size(), f);
        std::fclose(f);
      }
    }
  }
}

}  // namespace
