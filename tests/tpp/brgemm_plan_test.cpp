// plan_brgemm by enumeration: every row and column is covered exactly once, tiles fit the register
// file, tails sit where the emitter expects them; and the AVX-512 emitter emits on any host.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "host_isas.hpp"

#include "emitters.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/jit/error.hpp"
#include "weft/tpp/brgemm.hpp"

namespace {

using namespace weft::tpp;
using weft::jit::Isa;

BrgemmDesc desc(int m, int n, int k) { return {.m = m, .n = n, .k = k, .lda = m, .ldb = k, .ldc = m}; }

void check_plan(const BrgemmDesc& d, const BrgemmPlan& plan) {
  SCOPED_TRACE(to_string(d) + " -> " + to_string(plan));
  ASSERT_FALSE(plan.panels.empty());
  EXPECT_GE(plan.k_unroll, 1);
  EXPECT_LE(plan.k_unroll, d.k);
  int rows = 0;
  for (std::size_t p = 0; p < plan.panels.size(); ++p) {
    const BrgemmPanel& panel = plan.panels[p];
    EXPECT_GE(panel.vectors, 1);
    EXPECT_GE(panel.count, 1);
    if (panel.tail != 0) {
      EXPECT_EQ(p + 1, plan.panels.size()) << "only the last panel may have a tail";
      EXPECT_EQ(panel.count, 1);
      EXPECT_EQ(panel.tail, d.m % plan.lanes);
    }
    rows += panel.rows(plan.lanes) * panel.count;
    int cols = 0, widest = 0, narrowest = d.n;
    for (const BrgemmColumnBlock& c : panel.columns) {
      EXPECT_GE(c.cols, 1);
      EXPECT_GE(c.count, 1);
      cols += c.cols * c.count;
      widest = std::max(widest, c.cols);
      narrowest = std::min(narrowest, c.cols);
      EXPECT_LE(brgemm_tile_registers(plan, panel, c.cols), plan.vector_registers);
    }
    EXPECT_EQ(cols, d.n) << "panel " << p << " covers every column once";
    EXPECT_LE(widest - narrowest, 1) << "near-equal column blocks, no thin tail tile";
    if (panel.dot) {
      EXPECT_EQ(plan.isa, Isa::avx2) << "dot tiles are AVX2 only";
      EXPECT_EQ(d.m, 1);
      EXPECT_GE(d.k, plan.lanes);
      EXPECT_EQ(panel.vectors, 1);
      EXPECT_EQ(panel.tail, 0);
    }
  }
  EXPECT_EQ(rows, d.m) << "panels cover every row once";
  EXPECT_GE(plan.k_split, 1);
  EXPECT_LE(plan.k_split, d.k);
  // k step p goes to partial p % k_split: a loop iteration must start at partial 0.
  const bool dot = plan.panels[0].dot;
  const int step = dot ? plan.lanes : 1;
  if (plan.k_split > 1 && d.k / step > plan.k_unroll / step) {
    EXPECT_EQ(plan.k_unroll / step % plan.k_split, 0);
  }
  if (dot) {
    EXPECT_EQ(plan.k_unroll % plan.lanes, 0);
  }
}

TEST(BrgemmPlan, EveryShapeIsCoveredAndFits) {
  for (Isa isa : {Isa::avx2, Isa::avx512})
    for (int m = 1; m <= 80; ++m)
      for (int n = 1; n <= 80; ++n)
        for (int k : {1, 2, 3, 7, 16, 31, 64, 128}) check_plan(desc(m, n, k), plan_brgemm(desc(m, n, k), isa));
}

TEST(BrgemmPlan, OptionsAreFollowedAndStillFit) {
  for (int m : {1, 7, 8, 9, 31, 32, 33, 64, 80})
    for (int n : {1, 5, 32, 80})
      for (int v = 1; v <= 4; ++v)
        for (int cols : {0, 1, 3})
          for (int unroll : {0, 1, 5, 200}) {
            const BrgemmPlan plan = plan_brgemm(desc(m, n, 33), Isa::avx2, {v, cols, unroll});
            check_plan(desc(m, n, 33), plan);
            for (const BrgemmPanel& p : plan.panels) {
              EXPECT_LE(p.vectors, v);
              for (const auto& c : p.columns) {
                if (cols > 0) {
                  EXPECT_LE(c.cols, cols);
                }
              }
            }
            if (unroll > 0 && plan.reference_order()) {
              EXPECT_EQ(plan.k_unroll, std::min(unroll, 33));
            }
          }
}

TEST(BrgemmPlan, ChosenTilesForTheTargetShapes) {
  // 32 x 3 tiles with B broadcasts in registers: 12 accumulators, the measured best on Zen 3.
  const BrgemmPlan p32 = plan_brgemm(desc(32, 32, 32), Isa::avx2);
  ASSERT_EQ(p32.panels.size(), 1u);
  EXPECT_EQ(p32.panels[0].vectors, 4);
  EXPECT_TRUE(p32.panels[0].b_in_registers);
  EXPECT_EQ(p32.panels[0].columns[0].cols, 3);
  EXPECT_EQ(to_string(p32), "avx2 k_unroll=8 | 1x[4v b-in-regs 3c x10 2c x1]");
  // Narrow M: one vector, wide tiles.
  const BrgemmPlan p5 = plan_brgemm(desc(5, 64, 16), Isa::avx2);
  ASSERT_EQ(p5.panels.size(), 1u);
  EXPECT_EQ(p5.panels[0].tail, 5);
  EXPECT_GE(p5.panels[0].columns[0].cols, 12);
  EXPECT_TRUE(plan_brgemm(desc(5, 5, 5), Isa::reference).panels.empty());
}

TEST(BrgemmPlan, Avx512TwoVectorTilesAndShortUnroll) {
  // Measured on Zen 5 (docs/tpp_brgemm.md): 32 rows take 8-column tiles, one loop body, and k
  // steps two at a time; one-vector panels keep their widest tiles; AVX2 keeps its unroll of 8.
  EXPECT_EQ(to_string(plan_brgemm(desc(32, 32, 32), Isa::avx512)), "avx512 k_unroll=2 | 1x[2v 8c x4]");
  EXPECT_GT(plan_brgemm(desc(16, 32, 32), Isa::avx512).panels[0].columns[0].cols, 8);
  EXPECT_EQ(plan_brgemm(desc(32, 32, 32), Isa::avx2).k_unroll, 8);
  EXPECT_EQ(plan_brgemm(desc(32, 32, 1), Isa::avx512).k_unroll, 1);
  // An explicit max_cols wins over the default cap.
  BrgemmPlanOptions wide;
  wide.max_cols = 11;
  EXPECT_EQ(plan_brgemm(desc(32, 32, 32), Isa::avx512, wide).panels[0].columns[0].cols, 11);
}

TEST(BrgemmPlan, NarrowShapesGetMoreAccumulatorChains) {
  // n = 1: up to 8 vectors per panel (A is the FMA's memory operand), partial sums where the FMA
  // latency would be the bound (fewer than 8 FMAs or loads per k step).
  EXPECT_EQ(to_string(plan_brgemm(desc(64, 1, 128), Isa::avx2)), "avx2 k_unroll=8 | 1x[8v b-in-regs 1c x1]");
  EXPECT_EQ(to_string(plan_brgemm(desc(32, 1, 128), Isa::avx2)), "avx2 k_unroll=8 k_split=2 | 1x[4v b-in-regs 1c x1]");
  EXPECT_EQ(to_string(plan_brgemm(desc(8, 1, 128), Isa::avx2)), "avx2 k_unroll=8 k_split=4 | 1x[1v b-in-regs 1c x1]");
  EXPECT_EQ(to_string(plan_brgemm(desc(72, 1, 64), Isa::avx2)),
            "avx2 k_unroll=8 k_split=2 | 1x[5v b-in-regs 1c x1] 1x[4v b-in-regs 1c x1]");
  EXPECT_EQ(plan_brgemm(desc(16, 2, 64), Isa::avx2).k_split, 2);
  EXPECT_EQ(plan_brgemm(desc(8, 7, 64), Isa::avx2).k_split, 1);  // 8 loads per k step: load-bound
  EXPECT_EQ(plan_brgemm(desc(32, 32, 32), Isa::avx2).k_split, 1);
  EXPECT_TRUE(plan_brgemm(desc(32, 32, 32), Isa::avx2).reference_order());
  // k_split never exceeds k.
  EXPECT_EQ(plan_brgemm(desc(8, 1, 3), Isa::avx2).k_split, 3);
  // m = 1: dot tiles along k, 8 columns per tile; narrow ones get partial sums.
  const BrgemmPlan row = plan_brgemm(desc(1, 64, 128), Isa::avx2);
  EXPECT_EQ(to_string(row), "avx2 k_unroll=32 | 1x[1r dot 8c x8]");
  EXPECT_EQ(to_string(plan_brgemm(desc(1, 13, 128), Isa::avx2)), "avx2 k_unroll=32 | 1x[1r dot 7c x1 6c x1]");
  EXPECT_EQ(to_string(plan_brgemm(desc(1, 5, 128), Isa::avx2)), "avx2 k_unroll=32 k_split=2 | 1x[1r dot 5c x1]");
  EXPECT_FALSE(row.reference_order());
  EXPECT_EQ(to_string(plan_brgemm(desc(1, 1, 128), Isa::avx2)), "avx2 k_unroll=32 k_split=4 | 1x[1r dot 1c x1]");
  EXPECT_EQ(to_string(plan_brgemm(desc(1, 3, 20), Isa::avx2)), "avx2 k_unroll=16 k_split=2 | 1x[1r dot 3c x1]");
  // ... but not for k < lanes, not when asked not to, and not in zmm code (AVX-512 plans AVX2 code
  // for m = 1 unless told not to: NarrowMOnAvx512IsAvx2Code).
  EXPECT_FALSE(plan_brgemm(desc(1, 64, 7), Isa::avx2).panels[0].dot);
  EXPECT_FALSE(plan_brgemm(desc(1, 64, 64), Isa::avx2, {.dot = -1}).panels[0].dot);
  EXPECT_FALSE(plan_brgemm(desc(1, 64, 64), Isa::avx512, {.narrow_ymm = -1}).panels[0].dot);
}

// f32 kernels of m <= 8 and f64 kernels of m <= 4 on AVX-512 are the AVX2 kernels (ymm; dot tiles
// for f32 m = 1); wider m, and bf16, zmm. narrow_ymm = -1 keeps zmm.
TEST(BrgemmPlan, NarrowMOnAvx512IsAvx2Code) {
  const DataTypes f64{.in = weft::jit::DataType::f64, .out = weft::jit::DataType::f64, .compute = weft::jit::DataType::f64};
  auto typed = [](BrgemmDesc d, DataTypes types) {
    d.types = types;
    return d;
  };
  for (Isa isa : {Isa::avx512, Isa::avx512_bf16}) {
    for (int m : {1, 4, 7, 8}) {
      EXPECT_EQ(plan_brgemm(desc(m, 50, 64), isa), plan_brgemm(desc(m, 50, 64), Isa::avx2)) << m;
      EXPECT_EQ(plan_brgemm(desc(m, 50, 64), isa, {.narrow_ymm = -1}).isa, isa) << m;
    }
    for (int m : {1, 3, 4})
      EXPECT_EQ(plan_brgemm(typed(desc(m, 50, 64), f64), isa), plan_brgemm(typed(desc(m, 50, 64), f64), Isa::avx2)) << m;
    EXPECT_EQ(plan_brgemm(desc(9, 50, 64), isa).isa, isa);
    EXPECT_EQ(plan_brgemm(typed(desc(5, 50, 64), f64), isa).isa, isa);
  }
  EXPECT_TRUE(plan_brgemm(desc(1, 64, 128), Isa::avx512).panels[0].dot);
  const DataTypes bf16{.in = weft::jit::DataType::bf16, .out = weft::jit::DataType::f32, .compute = weft::jit::DataType::f32};
  EXPECT_EQ(plan_brgemm(typed(desc(4, 50, 64), bf16), Isa::avx512_bf16).isa, Isa::avx512_bf16) << "bf16 keeps vdpbf16ps";
}

// Emits, and where objdump exists disassembles, AVX-512 kernels on any host (running them needs
// the CPU). Tails use opmask k1.
// AVX-512 panels of five vectors where panels of four would leave a one-vector panel.
TEST(BrgemmPlan, Avx512AvoidsOneVectorRemainderPanels) {
  EXPECT_EQ(to_string(plan_brgemm(desc(80, 80, 80), Isa::avx512)), "avx512 k_unroll=2 | 1x[5v 5c x16]");
  EXPECT_EQ(plan_brgemm(desc(144, 8, 8), Isa::avx512).panels.front().vectors, 5);  // 9 = 5 + 4
  EXPECT_EQ(plan_brgemm(desc(96, 8, 8), Isa::avx512).panels.front().vectors, 4);   // 6 = 4 + 2
  EXPECT_EQ(plan_brgemm(desc(80, 80, 80), Isa::avx2).panels.front().vectors, 4);   // AVX2: 10 = 4 x 2 + 2
  for (const BrgemmPanel& p : plan_brgemm(desc(208, 16, 8), Isa::avx512).panels) EXPECT_GT(p.vectors, 1);
}

// The prefetch hint reaches the plan of row-panel tiles on both instruction sets; dot tiles
// (m = 1 on AVX2) hold a row of C and do not prefetch.
TEST(BrgemmPlan, PrefetchNextCFollowsTheDescriptor) {
  BrgemmDesc d = desc(32, 32, 32);
  d.prefetch = BrgemmPrefetch::next_c;
  for (Isa isa : {Isa::avx2, Isa::avx512}) {
    EXPECT_TRUE(plan_brgemm(d, isa).prefetch_next_c);
    EXPECT_NE(to_string(plan_brgemm(d, isa)).find(" prefetch-c"), std::string::npos);
    EXPECT_FALSE(plan_brgemm(desc(32, 32, 32), isa).prefetch_next_c);
  }
  BrgemmDesc row = desc(1, 32, 64);
  row.prefetch = BrgemmPrefetch::next_c;
  EXPECT_FALSE(plan_brgemm(row, Isa::avx2).prefetch_next_c);
  EXPECT_FALSE(plan_brgemm(row, Isa::avx512).prefetch_next_c);  // the AVX2 dot tiles (narrow m)
  EXPECT_TRUE(plan_brgemm(row, Isa::avx512, {.narrow_ymm = -1}).prefetch_next_c);
}

TEST(BrgemmEmit, Avx512EmitsOnAnyHost) {
  WEFT_SKIP_UNLESS_BUILT_FOR(weft::jit::Isa::avx512);
  for (const BrgemmDesc& d : {desc(64, 12, 32), desc(37, 5, 3), desc(8, 1, 64), desc(1, 20, 64), BrgemmDesc{.m = 16, .n = 7, .k = 9, .lda = 20, .ldb = 9,
                                                                             .ldc = 17, .beta = 0,
                                                                             .batch = BrgemmBatch::addresses,
                                                                             .bias = BrgemmBias::per_row,
                                                                             .activation = BrgemmActivation::relu}}) {
    const BrgemmPlan plan = plan_brgemm(d, Isa::avx512, {.narrow_ymm = -1});  // zmm for m <= 8 too
    auto code = weft::tpp::detail::emit_kernel(d, plan);
    ASSERT_GT(code->code_bytes().size(), 100u) << to_string(d);
    if (std::system("objdump --version > /dev/null 2>&1") != 0) continue;
    const std::string bin = ::testing::TempDir() + "weft_brgemm_avx512.bin";
    std::ofstream(bin, std::ios::binary).write(reinterpret_cast<const char*>(code->code_bytes().data()),
                                               static_cast<std::streamsize>(code->code_bytes().size()));
    const std::string cmd = "objdump -D -b binary -m i386:x86-64 " + bin;
    FILE* pipe = ::popen(cmd.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string text;
    char buffer[4096];
    while (std::size_t got = std::fread(buffer, 1, sizeof buffer, pipe)) text.append(buffer, got);
    ::pclose(pipe);
    EXPECT_NE(text.find("vfmadd231ps"), std::string::npos);
    EXPECT_NE(text.find("zmm"), std::string::npos);
    EXPECT_EQ(text.find("(bad)"), std::string::npos) << text;
    if (d.m % 16 != 0) {
      EXPECT_NE(text.find("{%k1}"), std::string::npos) << "masked tail";
    }
  }
}

TEST(BrgemmEmit, RejectsPlansThatDoNotFit) {
  const BrgemmDesc d = desc(32, 32, 4);
  BrgemmPlan plan = plan_brgemm(d, Isa::avx2);
  plan.panels[0].columns = {{16, 2}};
  EXPECT_THROW(weft::tpp::detail::emit_kernel(d, plan), weft::Error);
  EXPECT_THROW(weft::tpp::detail::emit_kernel(d, plan_brgemm(d, Isa::reference)), weft::Error);
}

}  // namespace
