#include "neon_brgemm_plan.hpp"

#include "weft/jit/data_type.hpp"

namespace weft::tpp::neon {

NeonBrgemmPlan plan_neon_brgemm(const BrgemmDesc& d) {
  validate(d);
  NeonBrgemmPlan plan;
  if (d.types.in == jit::DataType::bf16) {
    plan.math = NeonBrgemmMath::bf16_widen;
    plan.max_cols = 4;
  } else if (d.b_transposed) {
    plan.math = NeonBrgemmMath::fma_transposed;
  }
  plan.lanes = d.types.compute == jit::DataType::f64 ? 2 : 4;
  const int lanes = plan.lanes;
  const int vectors = (d.m + lanes - 1) / lanes;
  for (int v = 0; v < vectors; v += kPanelVectors) {
    NeonPanel p{.row0 = v * lanes, .vectors = v + kPanelVectors <= vectors ? kPanelVectors : vectors - v, .tail = 0};
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
