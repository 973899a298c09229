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

// llvm-mca 19's Neoverse V1 / V2 models, the hot k loop of each kernel (f32 C, k = 64; useful
// flops per cycle: bfmmla's zero column of an odd n and its skipped or unused rows of a small m not
// counted; the BFMMLA peak is 127.7, bfdot's 63.9; docs/tpp_brgemm.md, "bf16 with bfdot and bfmmla"):
//
//   shape      bfdot         bfmmla packed   bfmmla in registers
//   64x1       47.2 / 47.2    6.4 /  8.0     19.2 / 23.9
//   16x1       44.9 / 45.0                   19.2 / 23.9
//    4x1       15.9 / 15.9                    6.4 /  8.0
//   64x2, 16x2 63.9 / 63.9   12.8 / 15.9     38.3 / 47.8
//   16x3       63.8 / 63.9                   57.4 / 60.4
//   64x4       63.9 / 63.9   25.5 / 31.9     76.5 / 76.5
//   4x64       63.7 / 63.7                   51.0 / 63.7
//   2x64       31.9 / 31.9                   25.5 / 31.8
//   8x8        63.7 / 63.7                   85.0 / 85.0
//   64x64      63.9 / 63.9  117.0 / 116.9    90.1 / 90.1
//
// bfdot issues at its peak (half bfmmla's) on every tile with 16 chains (k_split); bfmmla, with 2x2
// blocks, wastes a column of an odd n and needs 2 columns and 4 rows per block: n <= 3 and m <= 4
// are where it stays below bfdot.
bool bfdot_pays(const BrgemmDesc& d) { return d.n <= 3 || d.m <= 4; }

NeonBrgemmPlan plan_neon_brgemm(const BrgemmDesc& d, bool bf16_instructions, MmlaPacking packing, Bf16Path bf16_path) {
  validate(d);
  NeonBrgemmPlan plan;
  const bool bf16 = d.types.in == jit::DataType::bf16 && bf16_instructions;
  if (bf16_path == Bf16Path::automatic)
    bf16_path = packing == MmlaPacking::automatic && bfdot_pays(d) ? Bf16Path::dot : Bf16Path::mmla;
  if (bf16 && bf16_path == Bf16Path::dot) {
    // fma's tiles with a pair of k per lane: up to 6 columns; the panels as tall as 24 accumulators
    // allow for the widest block (a narrow block has few bfdot per A load: n = 1 24 x 1).
    plan.math = NeonBrgemmMath::bf16_dot;
    plan.blocks = column_blocks(d.n, plan.max_cols);
    int widest = 1;
    for (const NeonColumnBlock& b : plan.blocks) widest = std::max(widest, b.cols);
    plan.panel_vectors = std::max(kPanelVectors, 24 / widest);
    // Near-equal panels (m = 100, n = 1: 13 + 12 vectors, not 24 + 1, whose single accumulator
    // would wait on bfdot's latency); the partial vector in the last one.
    const int vectors = (d.m + 3) / 4;
    const int panels = (vectors + plan.panel_vectors - 1) / plan.panel_vectors;
    int v0 = 0;
    for (int p = 0; p < panels; ++p) {
      NeonPanel panel{.row0 = v0 * 4, .vectors = vectors / panels + (p < vectors % panels ? 1 : 0), .tail = 0};
      v0 += panel.vectors;
      if (v0 == vectors) panel.tail = d.m % 4;
      plan.panels.push_back(panel);
    }
    // Partial sums until the widest tile has 16 independent chains (4 bfdot pipes x 4 cycles of
    // latency on the Neoverse V1 model; 2 on V2's), within the 24 accumulators.
    const int chains = plan.panels.front().vectors * widest;
    while (plan.k_split < 4 && chains * plan.k_split < 16 && chains * plan.k_split * 2 <= 24) plan.k_split *= 2;
    return plan;
  }
  if (bf16) {
    // The llvm-mca models of Neoverse V1 and V2 run bfmmla and zip on the same four vector pipes.
    // In registers, a tile of 2a rows x 2b columns takes a x b bfmmla and a + b zips per 4 k: at
    // most 24 / 34 (12 x 8; 8 x 8 16 / 24, 16 x 6 24 / 35). With B zipped once per entry and block
    // (packed_b), 4 x 24 takes 24 bfmmla and 2 zips (docs/tpp_brgemm.md, "bf16 with bfdot and bfmmla").
    plan.math = NeonBrgemmMath::bf16_mmla;
    plan.max_cols = 8;
    plan.panel_vectors = 3;
    if (packing == MmlaPacking::always ||
        (packing == MmlaPacking::automatic && d.m >= kMinPackedRows && d.n >= kMinPackedCols)) {
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
