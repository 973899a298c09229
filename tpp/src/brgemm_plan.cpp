// Register blocking for BRGEMM: which row panels, which register tiles, how far k is unrolled.
// Pure and cheap, so tests can enumerate it and benchmarks can try alternatives.
#include <algorithm>
#include <string>
#include <vector>

#include "op_properties.hpp"
#include "weft/jit/data_type.hpp"
#include "weft/jit/isa_traits.hpp"
#include "weft/tpp/brgemm.hpp"

namespace weft::tpp {

namespace {

bool needs_scratch_register(const BrgemmPlan& plan, const BrgemmPanel& panel) {
  // A piecewise partial vector is assembled with its upper half in a scratch register.
  // bf16_staged_ab's tiles read A from whole vectors of the stack buffer (the staging and C's
  // loads and stores use registers that are free at that time).
  return panel.tail != 0 && jit::isa_traits(plan.isa).tail == jit::TailPolicy::piecewise &&
         plan.math != BrgemmMath::bf16_staged_ab;
}

bool widens(BrgemmMath math) { return math == BrgemmMath::bf16_widen || math == BrgemmMath::bf16_staged_b; }

// Registers per operand vector: widening keeps the even and the odd k of a pair apart.
int registers_per_operand(BrgemmMath math) { return widens(math) ? 2 : 1; }

int operand_registers(BrgemmMath math, const BrgemmPanel& panel, int cols) {
  // bf16_staged_b: A's even and odd vectors, and one broadcast from the staged B.
  if (math == BrgemmMath::bf16_staged_b) return 2 * panel.vectors + 1;
  // One broadcast (or A) operand besides the operands kept for a whole k step.
  return ((panel.b_in_registers ? cols : panel.vectors) + 1) * registers_per_operand(math);
}

// Widest tile for `vectors` rows of vectors in `free` registers, and the loop order that gets it.
void widest_tile(BrgemmMath math, int vectors, int free, int& cols, bool& b_in_registers) {
  if (math == BrgemmMath::bf16_staged_b) {
    b_in_registers = false;
    cols = std::max(1, (free - 2 * vectors - 1) / vectors);
    return;
  }
  const int w = registers_per_operand(math);
  const int a_in = (free - w * (vectors + 1)) / vectors;
  const int b_in = (free - w) / (vectors + w);
  b_in_registers = b_in > a_in;
  cols = std::max(1, std::max(a_in, b_in));
}

// k steps of a batch entry: one per k, or one per pair of k in bf16.
int steps_of(const BrgemmDesc& d) { return d.types.in == jit::DataType::bf16 ? d.k / 2 : d.k; }

// Vectors per full row panel when the caller does not say: the ISA's panel (measurements in
// jit::BrgemmIsaDefaults); below it one panel covers all rows (24 x 4, 16 x 6, 8 x 14 on AVX2).
int default_panel_vectors(int vectors, const jit::BrgemmIsaDefaults& defaults) {
  const int panel = defaults.panel_vectors;
  if (defaults.widen_to_avoid_single_vector_panel && vectors > panel && vectors % panel == 1) return panel + 1;
  return std::min(vectors, panel);
}

// FMA latency times FMA pipes (Zen 3: 4 x 2): the independent accumulator chains that keep the
// pipes busy.
constexpr int kAccumulatorsInFlight = 8;

// Vectors per panel when n = 1. A one-column panel costs one broadcast per k step besides its
// vectors (loads are the bound there): 8 vectors ran at 79 GFLOPS for 64 x 1 x 128, two panels
// of 4 with 2 partial sums at 73.
constexpr int kSingleColumnPanel = 8;

// Dot tiles (m = 1): columns per tile and vectors (of k) per loop iteration. 8 columns (one
// register of sums) measured 0-6 % faster than 13 (the most that fit) for k <= 48 and equal above
// (1 x 64 x k, 1 x 32 x 48); the unroll made no difference between 2 and 8 vectors.
constexpr int kDotColumns = 8;

// bf16_staged_b: the largest k whose staged B columns (k floats each, at most 5 columns: 10 KB)
// stay in L1 beside A's rows.
constexpr int kMaxStagedK = 512;
constexpr int kStagedFullUnroll = 16;
// bf16_staged_b: stack bytes for the widened B columns shared by the row panels (half of L1: 32^3
// batch 8 takes 5 KB, 64^3 batch 8 10 KB).
constexpr int kSharedStagedBytes = 16 * 1024;
// bf16_staged_ab: stack bytes for the widened A rows of a row panel, one slot per batch entry (32^3
// batch 16: 16 slots of 32 rows x 32 k floats; 64^3 batch 8: 8 of 32 x 64). Slots past L1 are read
// as the fp32 kernel reads its own A (measured on the Xeon, bf16 / fp32 with 32 / 64 / 128 KiB: 64^3
// batch 8 0.98 (staged B) / 1.05 / -, 32^3 batch 16 0.85 / 0.94 / -, 32^3 batch 32 - / 0.83 / 0.94);
// the bound is the stack a kernel may take (up to 64 KiB here, plus one B slot: at most 28 KiB). A
// kernel whose single entry does not fit is planned bf16_staged_b, a call with more entries runs that
// plan's body.
constexpr int kStagedABytes = 64 * 1024;
// bf16_staged_ab: the fewest columns. A row panel's widened A pays off over its column blocks:
// measured on the Xeon (bf16 / fp32, batch 4, k 32 and 64, m 16 / 32 / 64), staged B was ahead for
// n <= 10 (32 x 8 x 64: 0.79 against 0.67-0.69, 32 x 4 x 64: 0.85 against 0.57; n = 6 within 0.02),
// level or behind at n = 12 (0.76-0.84 against 0.76-0.81), behind from n = 16 (16 x 16 x 64: 0.78
// against 0.92).
constexpr int kStagedAMinColumns = 12;
constexpr int kDotUnroll = 4;

// Near-equal blocks of at most `most` columns covering n.
void add_column_blocks(BrgemmPanel& p, int n, int most) {
  const int blocks = (n + most - 1) / most;
  const int base = n / blocks;
  const int wide = n % blocks;
  if (wide > 0) p.columns.push_back({base + 1, wide});
  p.columns.push_back({base, blocks - wide});
}

// Partial sums for a tile whose k step is `fmas` FMAs and `loads` loads. One step takes at least
// max(fmas, loads) / 2 cycles (2 FMA and 2 load pipes), and at least 4 / k_split cycles of FMA
// latency when every accumulator is split k_split ways: k_split = ceil(8 / max(fmas, loads)) makes
// the latency bound no worse than the throughput bound. Measured (bench/tpp/brgemm.cpp,
// WEFT_BENCH_PLAN): 8x1x128 ran 3.6x faster with 4 partials, 16x2x64 1.9x with 2, 8x5x128 1.27x
// with 2; 8x7x128 (8 loads per step) gained nothing, and more partials than the rule gave gained
// nothing anywhere.
int split_for(int fmas, int loads) {
  const int per_step = std::max(fmas, loads);
  return (kAccumulatorsInFlight + per_step - 1) / per_step;
}

// bf16_staged_b: batch entries whose widened B columns the row panels can share (see
// BrgemmPlan::shared_staged_entries), 0 when there is one panel to run, the panels block their
// columns differently, or C of the next tile is prefetched (that assumes the panel-outer order).
int shared_staged_entries(const BrgemmPlan& plan, const BrgemmDesc& d) {
  int runs = 0;
  for (const BrgemmPanel& p : plan.panels) runs += p.count;
  if (runs < 2 || plan.prefetch_next_c) return 0;
  for (const BrgemmPanel& p : plan.panels)
    if (p.columns != plan.panels.front().columns) return 0;
  return kSharedStagedBytes / brgemm_staged_entry_bytes(plan, d.k);
}

}  // namespace

int brgemm_staged_entry_bytes(const BrgemmPlan& plan, int k) {
  int cols = 1;
  for (const BrgemmPanel& p : plan.panels)
    for (const BrgemmColumnBlock& c : p.columns) cols = std::max(cols, c.cols);
  // bf16_staged_ab: each column's even k, then its odd k, each half rounded up to 8 floats.
  if (plan.math == BrgemmMath::bf16_staged_ab) return cols * ((k + 15) / 16) * 64;
  return (cols * k * 4 + 63) / 64 * 64;
}

int brgemm_staged_a_entry_bytes(const BrgemmPlan& plan, int k) {
  int rows = 1;
  for (const BrgemmPanel& p : plan.panels) rows = std::max(rows, p.vectors * plan.lanes);
  return rows * k * 4;
}

int brgemm_tile_registers(const BrgemmPlan& plan, const BrgemmPanel& panel, int cols) {
  if (panel.dot) {
    // Accumulators, the A vector, the k-tail mask and a scratch register (the masked B of the
    // k tail, the upper half of a gathered A). After the batch the sums of the (at most 8)
    // columns take one register and the epilogue fits in the rest.
    return cols * plan.k_split + 3;
  }
  // The epilogue runs after the k loop and the fold of the partial sums, when the operand and
  // partial-sum registers are free again.
  const int accumulators = panel.vectors * cols;
  const int body = operand_registers(plan.math, panel, cols) + (needs_scratch_register(plan, panel) ? 1 : 0);
  return std::max(accumulators * plan.k_split + body, accumulators + std::max(body, plan.epilogue_scratch));
}

namespace {

// m = 1 on AVX2: one dot-product tile per column block of at most kDotColumns columns; fewer
// columns get partial sums instead (up to 13 accumulators, besides the A vector, the k-tail mask
// and one scratch register).
void plan_dot(const BrgemmDesc& d, const BrgemmPlanOptions& options, BrgemmPlan& plan) {
  BrgemmPanel p;
  p.vectors = 1;
  p.count = 1;
  p.dot = true;
  int cols = std::min(d.n, kDotColumns);
  if (options.max_cols > 0) cols = std::min(cols, options.max_cols);
  add_column_blocks(p, d.n, cols);
  plan.panels.push_back(p);
  const int narrowest = p.columns.back().cols;
  const int chunks = (d.k + plan.lanes - 1) / plan.lanes;
  plan.k_split = std::clamp(options.k_split > 0 ? options.k_split : split_for(narrowest, narrowest + 1), 1, chunks);
  while (plan.k_split > 1 && brgemm_tile_registers(plan, p, p.columns.front().cols) > plan.vector_registers) --plan.k_split;
  // k steps per loop iteration: whole vectors, a multiple of k_split of them, within k.
  const int per_iteration = options.k_unroll > 0 ? std::max(1, options.k_unroll / plan.lanes) : kDotUnroll;
  const int unroll = (per_iteration + plan.k_split - 1) / plan.k_split * plan.k_split;
  plan.k_unroll = std::min(unroll, d.k / plan.lanes) * plan.lanes;
}

}  // namespace

bool BrgemmPlan::reference_order() const {
  return k_split == 1 && std::none_of(panels.begin(), panels.end(), [](const BrgemmPanel& p) { return p.dot; });
}

int brgemm_epilogue_scratch(const BrgemmDesc& d) {
  int scratch = d.bias != BrgemmBias::none ? 1 : 0;
  if (d.activation == BrgemmActivation::relu) scratch = std::max(scratch, detail::activation_scratch(UnaryOp::relu));
  if (d.activation == BrgemmActivation::unary) scratch = std::max(scratch, detail::activation_scratch(d.unary));
  return scratch;
}

BrgemmPlan plan_brgemm(const BrgemmDesc& d, jit::Isa isa, const BrgemmPlanOptions& options) {
  validate(d);
  // A zmm tile of at most a ymm vector's rows (8 floats, 4 doubles) leaves half its lanes or more
  // idle, and AVX-512 has no dot tiles for m = 1; a ymm vector holds those rows whole and runs at
  // the same instruction rate on every AVX-512 core (Zen 4 splits a zmm op in two, Zen 5 issues
  // ymm and zmm ops alike). Measured on Zen 4, one core, in one process, GFLOPS zmm -> AVX2 code:
  // f32 4 x 64 x 64 21.2 -> 48.9, 8 x 64 x 64 42.4 -> 100.5, 1 x 64 x 128 5.3 -> 80.5 (dot
  // tiles); f64 4 x 64 x 64 20.6 -> 45.3, 1 x 64 x 128 5.3 -> 11.4. Wider m stays zmm (a full or
  // nearly full vector, which a core with 512-bit FMAs runs at twice the ymm rate). bf16 keeps
  // vdpbf16ps. (AVX-512 only: the opmask tails; SVE-512 has no narrower sibling to fall back to.)
  const int ymm_rows = jit::isa_traits(jit::Isa::avx2).lanes(static_cast<int>(jit::size_of(d.types.compute)));
  if (options.narrow_ymm >= 0 && jit::isa_traits(isa).tail == jit::TailPolicy::opmask && d.types.in != jit::DataType::bf16 &&
      d.m <= ymm_rows) {
    BrgemmPlanOptions ymm = options;
    ymm.narrow_ymm = -1;
    return plan_brgemm(d, jit::Isa::avx2, ymm);
  }
  BrgemmPlan plan;
  plan.isa = isa;
  const jit::IsaTraits& traits = jit::isa_traits(isa);
  if (isa == jit::Isa::reference || d.m < 1 || d.n < 1 || d.k < 1) return plan;
  const jit::BrgemmIsaDefaults& defaults = traits.brgemm;
  const bool bf16 = d.types.in == jit::DataType::bf16;
  if (bf16) plan.math = traits.bf16_dot ? BrgemmMath::bf16_dot : BrgemmMath::bf16_widen;
  // AVX2's 16 registers leave widening both operands in registers a 32 x 2 tile: 12 integer ops per
  // 16 FMAs. With B's columns widened once per tile and batch entry into a stack buffer (k floats
  // per column, kMaxStagedK bounds it), a 16 x 5 tile widens only A: 4 per 20 (bf16_staged_b). With
  // A's rows widened too, once per row panel and entry (bf16_staged_ab), the tiles are fp32's and
  // widen nothing; the staging costs a shift and a mask per 16 bf16 of A and of each tile's B.
  if (plan.math == BrgemmMath::bf16_widen && traits.vector_registers == 16 && d.k <= kMaxStagedK && d.n > 1)
    plan.math = options.staged_ab >= 0 && d.n >= kStagedAMinColumns ? BrgemmMath::bf16_staged_ab : BrgemmMath::bf16_staged_b;
  // bf16_staged_ab's tiles are fp32's (default_panel_vectors, widest_tile as for fma): A comes from
  // whole vectors of its slots, so a tail panel needs no scratch register either.
  plan.lanes = traits.lanes(static_cast<int>(jit::size_of(d.types.compute)));
  plan.vector_registers = traits.vector_registers;
  plan.epilogue_scratch = brgemm_epilogue_scratch(d);
  // Rounding C to bf16 without vcvtneps2bf16 takes two registers (bf16_emit.hpp).
  if (d.types.out == jit::DataType::bf16 && !traits.bf16_dot) plan.epilogue_scratch = std::max(plan.epilogue_scratch, 2);
  const int steps = steps_of(d);
  plan.k_unroll = std::clamp(options.k_unroll > 0 ? options.k_unroll : std::min(steps, defaults.k_unroll), 1, steps);

  // Dot tiles load B's columns as vectors along k: with B transposed those are ldb apart. f32 only.
  if (defaults.dot_tiles && d.m == 1 && d.k >= plan.lanes && !d.b_transposed && options.dot >= 0 &&
      d.types == DataTypes{}) {
    plan_dot(d, options, plan);
    return plan;
  }
  plan.prefetch_next_c = d.prefetch == BrgemmPrefetch::next_c;
  const int vectors = (d.m + plan.lanes - 1) / plan.lanes;
  const int tail = d.m % plan.lanes;
  auto add_panel = [&](int v, int t, int count) {
    if (count <= 0) return;
    BrgemmPanel p;
    p.vectors = v;
    p.tail = t;
    p.count = count;
    plan.panels.push_back(p);
  };
  if (d.n == 1 && options.panel_vectors <= 0) {
    // One column (a GEMV): each A vector is one FMA's memory operand, so a panel holds up to 8
    // accumulators besides the broadcast; near-equal panels (9 vectors: 5 + 4, not 8 + 1).
    const int count = (vectors + kSingleColumnPanel - 1) / kSingleColumnPanel;
    const int base = vectors / count, wide = vectors % count;
    add_panel(base + 1, 0, wide);
    add_panel(base, 0, count - wide - (tail != 0 ? 1 : 0));
    if (tail != 0) add_panel(base, tail, 1);
  } else {
    const int natural = plan.math == BrgemmMath::bf16_staged_b ? 2 : default_panel_vectors(vectors, defaults);
    const bool tail_scratch =
        traits.tail == jit::TailPolicy::piecewise && plan.math != BrgemmMath::bf16_staged_ab;
    const int per_panel = std::clamp(options.panel_vectors > 0 ? options.panel_vectors : natural, 1, vectors);
    // Full panels first; the remainder (or, when the split is even, the last full panel) carries the tail.
    const int full = vectors / per_panel;
    const int rest = vectors % per_panel;
    // A piecewise tail costs a scratch register, which leaves a 4-vector tile of 16 registers only
    // 2 columns: a 4-vector tail panel becomes two 2-vector panels (16 x 6 tiles) instead.
    auto add_tail_panel = [&](int v) {
      if (v == 4 && tail_scratch && plan.vector_registers == 16) {
        add_panel(2, 0, 1);
        add_panel(2, tail, 1);
      } else {
        add_panel(v, tail, 1);
      }
    };
    if (rest == 0) {
      add_panel(per_panel, 0, tail == 0 ? full : full - 1);
      if (tail != 0) add_tail_panel(per_panel);
    } else {
      add_panel(per_panel, 0, full);
      if (tail != 0) {
        add_tail_panel(rest);
      } else {
        add_panel(rest, 0, 1);
      }
    }
  }
  for (BrgemmPanel& p : plan.panels) {
    const int free = plan.vector_registers - (needs_scratch_register(plan, p) ? 1 : 0);
    int cols = 1;
    widest_tile(plan.math, p.vectors, free, cols, p.b_in_registers);
    // A register-hungry activation (sigmoid, tanh, gelu: 3) may need a column fewer.
    while (cols > 1 && brgemm_tile_registers(plan, p, cols) > plan.vector_registers) --cols;
    if (options.max_cols > 0) {
      cols = std::min(cols, options.max_cols);
    } else if (defaults.two_vector_max_cols > 0 && p.vectors == 2 && !p.b_in_registers) {
      cols = std::min(cols, defaults.two_vector_max_cols);
    }
    cols = std::min(cols, d.n);
    // Near-equal column blocks instead of full tiles plus one thin tail tile.
    add_column_blocks(p, d.n, cols);
    // The order only matters for register pressure; prefer A in registers when both fit.
    int widest = 0;
    for (const auto& c : p.columns) widest = std::max(widest, c.cols);
    if (widest == 1) {
      // One column: each A vector feeds one FMA (fma: as its memory operand); nothing to keep.
      p.b_in_registers = true;
    } else if (p.b_in_registers) {
      BrgemmPanel probe = p;
      probe.b_in_registers = false;
      if (brgemm_tile_registers(plan, probe, widest) <= plan.vector_registers) p.b_in_registers = false;
    }
  }
  // bf16_staged_b: all pair steps of k <= 32 in line when the kernel has at most two kinds of tile
  // (its code then stays small). Measured, Zen 4 in AVX2 mode, bf16 / fp32 in alternating runs: 32^3
  // batch 8 0.890-0.893 -> 0.903-0.905; 64^3, 80^3, 16 x 16 x 64 unchanged; 23 x 17 x 32 (four kinds
  // of tile) lost 5 %, so it keeps 8.
  if (plan.math == BrgemmMath::bf16_staged_b && options.k_unroll <= 0 && steps <= kStagedFullUnroll) {
    int kinds = 0;
    for (const BrgemmPanel& p : plan.panels) {
      std::vector<int> widths;
      for (const BrgemmColumnBlock& c : p.columns) widths.push_back(c.cols);
      std::sort(widths.begin(), widths.end());
      kinds += static_cast<int>(std::unique(widths.begin(), widths.end()) - widths.begin());
    }
    if (kinds <= 2) plan.k_unroll = steps;
  }
  if (plan.math == BrgemmMath::bf16_staged_b) plan.shared_staged_entries = shared_staged_entries(plan, d);
  if (plan.math == BrgemmMath::bf16_staged_ab) {
    plan.staged_a_entries = kStagedABytes / brgemm_staged_a_entry_bytes(plan, d.k);
    if (plan.staged_a_entries < 1) {
      BrgemmPlanOptions without = options;
      without.staged_ab = -1;
      return plan_brgemm(d, isa, without);
    }
  }
  // Partial sums when a tile has too few accumulators to hide the FMA latency (small m times small
  // n): what the narrowest tile needs, as many as fit every tile, at most k.
  int split = options.k_split;
  if (split <= 0) {
    split = 1;
    for (const BrgemmPanel& p : plan.panels)
      for (const auto& c : p.columns)
        split = std::max(split, split_for(p.vectors * c.cols * registers_per_operand(plan.math), p.vectors + c.cols));
  }
  for (plan.k_split = std::clamp(split, 1, steps); plan.k_split > 1; --plan.k_split) {
    bool fits = true;
    for (const BrgemmPanel& p : plan.panels)
      for (const auto& c : p.columns) fits = fits && brgemm_tile_registers(plan, p, c.cols) <= plan.vector_registers;
    if (fits) break;
  }
  if (plan.k_split > 1 && plan.k_unroll < steps) {
    // Every loop iteration starts at a step that goes to partial 0.
    plan.k_unroll = std::min(steps, (plan.k_unroll + plan.k_split - 1) / plan.k_split * plan.k_split);
  }
  return plan;
}

std::string to_string(const BrgemmPlan& plan) {
  // Appends piecewise: GCC 12 warns (-Wrestrict, a false positive) on "literal" + std::string&&.
  std::string s{jit::to_string(plan.isa)};
  if (plan.isa == jit::Isa::reference) return s;
  if (plan.math == BrgemmMath::bf16_dot) s += " bf16-dot";
  if (plan.math == BrgemmMath::bf16_widen) s += " bf16-widen";
  if (plan.math == BrgemmMath::bf16_staged_b) s += " bf16-staged-b";
  if (plan.math == BrgemmMath::bf16_staged_ab) s += " bf16-staged-ab";
  auto add = [&s](const char* text, int value) {
    s += text;
    s += std::to_string(value);
  };
  add(" k_unroll=", plan.k_unroll);
  if (plan.k_split > 1) add(" k_split=", plan.k_split);
  if (plan.prefetch_next_c) s += " prefetch-c";
  if (plan.shared_staged_entries > 0) add(" shared-b=", plan.shared_staged_entries);
  if (plan.staged_a_entries > 0) add(" staged-a=", plan.staged_a_entries);
  s += " |";
  for (const BrgemmPanel& p : plan.panels) {
    add(" ", p.count);
    add("x[", p.vectors);
    s += p.dot ? 'r' : 'v';
    if (p.dot) s += " dot";
    if (p.tail != 0) add(" tail", p.tail);
    if (p.b_in_registers) s += " b-in-regs";
    for (const auto& c : p.columns) {
      add(" ", c.cols);
      add("c x", c.count);
    }
    s += ']';
  }
  return s;
}

}  // namespace weft::tpp
