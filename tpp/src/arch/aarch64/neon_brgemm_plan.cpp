#include "neon_brgemm_plan.hpp"

#include "weft/jit/data_type.hpp"

namespace weft::tpp::neon {

NeonBrgemmPlan plan_neon_brgemm(const BrgemmDesc& d, bool bf16_instructions) {
  validate(d);
  NeonBrgemmPlan plan;
  if (d.types.in == jit::DataType::bf16 && bf16_instructions) {
    // 12 x 8 tiles: the llvm-mca models of Neoverse V1 and V2 run bfmmla and zip on the same four
    // vector pipes, so the share of bfmmla is (12 x 8 / 4) / (that + 12 / 2 + 8 / 2) = 24 / 34 per
    // 4 k; 8 x 8 gives 16 / 24, 16 x 6 24 / 35 (docs/tpp_brgemm.md, "bf16 with bfmmla").
    plan.math = NeonBrgemmMath::bf16_mmla;
    plan.max_cols = 8;
    plan.panel_vectors = 3;
  } else if (d.types.in == jit::DataType::bf16) {
    plan.math = NeonBrgemmMath::bf16_widen;
    plan.max_cols = 4;
  } else if (d.b_transposed) {
    plan.math = NeonBrgemmMath::fma_transposed;
  }
  plan.lanes = d.types.compute == jit::DataType::f64 ? 2 : 4;
  const int lanes = plan.lanes;
  const int vectors = (d.m + lanes - 1) / lanes;
  const int full = plan.panel_vectors;
  for (int v = 0; v < vectors; v += full) {
    NeonPanel p{.row0 = v * lanes, .vectors = v + full <= vectors ? full : vectors - v, .tail = 0};
    if (v + p.vectors == vectors) p.tail = d.m % lanes;  // the last panel ends in the partial vector
    plan.panels.push_back(p);
  }
  // Near-equal blocks: as many as max_cols-column blocks need, the first n % blocks one column
  // wider, so that no block is much narrower than the others (a 1-column block would waste the A
  // loads).
  const int blocks = (d.n + plan.max_cols - 1) / plan.max_cols;
  int col0 = 0;
  for (int b = 0; b < blocks; ++b) {
    const int cols = d.n / blocks + (b < d.n % blocks ? 1 : 0);
    plan.blocks.push_back({.col0 = col0, .cols = cols});
    col0 += cols;
  }
  return plan;
}

}  // namespace weft::tpp::neon
