#include "neon_brgemm_plan.hpp"

#include <algorithm>
#include <cstdint>

#include "weft/jit/data_type.hpp"

namespace weft::tpp::neon {

namespace {

// Near-equal blocks: as many as max_cols-column blocks need, the first n % blocks one column
// wider, so that no block is much narrower than the others (a 1-column block would waste the A
// loads). unit 2 (bf16_mmla): the same in pairs of columns, so that only the last block can have
// an odd count (64 in at most 24: 22 + 22 + 20, not 22 + 21 + 21 with two half-used pairs).
std::vector<NeonColumnBlock> column_blocks(int n, int max_cols, int unit = 1) {
  std::vector<NeonColumnBlock> out;
  const int units = (n + unit - 1) / unit, max_units = max_cols / unit;
  const int blocks = (units + max_units - 1) / max_units;
  int col0 = 0;
  for (int b = 0; b < blocks; ++b) {
    const int cols = std::min(n - col0, unit * (units / blocks + (b < units % blocks ? 1 : 0)));
    out.push_back({.col0 = col0, .cols = cols});
    col0 += cols;
  }
  return out;
}

}  // namespace

NeonBrgemmPlan plan_neon_brgemm(const BrgemmDesc& d, bool bf16_instructions, MmlaPacking packing) {
  validate(d);
  NeonBrgemmPlan plan;
  if (d.types.in == jit::DataType::bf16 && bf16_instructions) {
    // The llvm-mca models of Neoverse V1 and V2 run bfmmla and zip on the same four vector pipes.
    // In registers, a tile of 2a rows x 2b columns takes a x b bfmmla and a + b zips per 4 k: at
    // most 24 / 34 (12 x 8; 8 x 8 16 / 24, 16 x 6 24 / 35). With B zipped once per entry and block
    // (packed_b), 4 x 24 takes 24 bfmmla and 2 zips (docs/tpp_brgemm.md, "bf16 with bfmmla").
    plan.math = NeonBrgemmMath::bf16_mmla;
    plan.max_cols = 8;
    plan.panel_vectors = 3;
    if (packing == MmlaPacking::always || (packing == MmlaPacking::automatic && d.m >= kMinPackedRows)) {
      const std::int64_t quads = (d.k + 3) / 4;
      std::int64_t widest = 0;
      for (const NeonColumnBlock& b : column_blocks(d.n, 24, 2)) widest = std::max<std::int64_t>(widest, (b.cols + 1) / 2);
      const std::int64_t entry_bytes = quads * widest * 16;
      if (entry_bytes <= kMaxPackedEntryBytes) {
        plan.packed_b = true;
        plan.max_cols = 24;
        plan.panel_vectors = 1;
        plan.packed_entry_bytes = entry_bytes;
        plan.packed_max_count = kMaxPackedBytes / entry_bytes;
      }
    }
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
  plan.blocks = column_blocks(d.n, plan.max_cols, plan.math == NeonBrgemmMath::bf16_mmla ? 2 : 1);
  return plan;
}

}  // namespace weft::tpp::neon
