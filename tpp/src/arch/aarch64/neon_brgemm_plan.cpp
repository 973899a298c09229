#include "neon_brgemm_plan.hpp"

#include "weft/jit/error.hpp"

namespace weft::tpp::neon {

NeonBrgemmPlan plan_neon_brgemm(const BrgemmDesc& d) {
  if (d.m < 1 || d.n < 1) throw Error("neon brgemm plan: m and n must be at least 1");
  NeonBrgemmPlan plan;
  const int vectors = (d.m + kLanes - 1) / kLanes;
  for (int v = 0; v < vectors; v += kPanelVectors) {
    NeonPanel p{.row0 = v * kLanes, .vectors = v + kPanelVectors <= vectors ? kPanelVectors : vectors - v, .tail = 0};
    if (v + p.vectors == vectors) p.tail = d.m % kLanes;  // the last panel ends in the partial vector
    plan.panels.push_back(p);
  }
  // Near-equal blocks: as many as 6-column blocks need, the first n % blocks one column wider, so
  // that no block is much narrower than the others (a 1-column block would waste the A loads).
  const int blocks = (d.n + kMaxCols - 1) / kMaxCols;
  int col0 = 0;
  for (int b = 0; b < blocks; ++b) {
    const int cols = d.n / blocks + (b < d.n % blocks ? 1 : 0);
    plan.blocks.push_back({.col0 = col0, .cols = cols});
    col0 += cols;
  }
  return plan;
}

}  // namespace weft::tpp::neon
