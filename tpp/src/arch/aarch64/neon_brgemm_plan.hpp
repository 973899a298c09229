// The register blocking of the Neon BRGEMM (brgemm_emit.cpp), a pure function of the descriptor.
// The shared planner (plan_brgemm) plans x86 shapes (its panels follow AVX2 / AVX-512 register
// files and tail rules); the Neon emitter follows this plan instead, so the shared planner stays
// unchanged until the Neon families are registered.
//
//   lanes:          accumulator lanes per 128-bit vector: 4 (f32, and bf16 inputs, summed in f32),
//                   2 (f64)
//   row panels:     4 vectors (16 f32 / 8 f64 rows) each; the last panel has the remaining 1-4
//                   vectors, its last vector `tail` rows (1..lanes-1) when m is not a multiple of lanes
//   column blocks:  near-equal blocks of at most max_cols columns covering n (f32, f64: 6, so
//                   13 -> 5 + 4 + 4; bf16: 4)
//   registers:      vectors x cols accumulators plus the operands of one step (tile_registers):
//                     f32, f64:        one B register per column (`lanes` consecutive k of the
//                                      column, one ldr q) and two A registers: 4 x 6 + 6 + 2 = 32
//                     b_transposed:    two sets of the B registers one k step's row of the tile
//                                      takes (its columns are contiguous), two A registers:
//                                      f32 4 x 6 + 2 x 2 + 2 = 30, f64 4 x 6 + 2 x 3 + 2 = 32
//                     bf16 (VNNI-2 A): two registers per column (B's even and odd k of 4 pairs,
//                                      widened), two sets of an A vector's odd and even k, the
//                                      0xffff0000 mask: 4 x 4 + 2 x 4 + 4 + 1 = 29
//                     bf16_mmla:       bfmmla 2x2 accumulators (an odd column count takes the even
//                                      one above) and 8 operand registers (B's, A's two loads and
//                                      their zip, a temporary); two tilings (brgemm_emit.hpp):
//                                      packed_b (B's column pairs zipped once per batch entry and
//                                      column block into a stack buffer): 1 vector (4 rows) x 24
//                                      columns, 24 + 8 = 32; in registers (both operands zipped in
//                                      the k loop): 3 vectors (12 rows) x 8 columns, 24 + 8 = 32
//                     bf16_dot:        fma's: one B register per column (4 pairs of k of the column,
//                                      one ldr q; bfdot by element takes one pair), two A registers
//                                      (4 rows x a pair: VNNI-2 as it is); taller panels for narrow
//                                      blocks (24 accumulators: n = 1 24 vectors x 1, n = 2 12 x 2),
//                                      and k_split partial sums per accumulator where a tile has
//                                      fewer than 16 (bfdot's latency, 4 cycles on Neoverse V1's
//                                      model, times its 4 pipes): vectors x cols x k_split <= 24
#pragma once

#include <vector>

#include "weft/tpp/brgemm.hpp"

namespace weft::tpp::neon {

inline constexpr int kPanelVectors = 4;   // vectors per full row panel
inline constexpr int kVectorRegisters = 32;

enum class NeonBrgemmMath : unsigned char {
  fma,             // f32 or f64, B column-major: a q of B holds `lanes` k of one column
  fma_transposed,  // f32 or f64, b_transposed: a q of B holds `lanes` columns of one k
  bf16_widen,      // bf16 A (VNNI-2) and B, widened to f32 in registers (bits << 16), fp32 FMAs
  bf16_mmla,       // bf16 A (VNNI-2) and B with bfmmla (FEAT_BF16): 2x2 fp32 blocks, 4 k per step
  bf16_dot,        // bf16 A (VNNI-2) and B with bfdot by element (FEAT_BF16): 4 rows x 1 column, a pair
};

struct NeonPanel {
  int row0 = 0;     // first row of C
  int vectors = 0;  // 1..4
  int tail = 0;     // rows of the last vector when it is partial (1..lanes-1), 0 when full
  int rows(int lanes) const { return tail == 0 ? vectors * lanes : (vectors - 1) * lanes + tail; }
  bool operator==(const NeonPanel&) const = default;
};

struct NeonColumnBlock {
  int col0 = 0;
  int cols = 0;  // 1..max_cols
  bool operator==(const NeonColumnBlock&) const = default;
};

struct NeonBrgemmPlan {
  NeonBrgemmMath math = NeonBrgemmMath::fma;
  int lanes = 4;
  int max_cols = 6;
  int panel_vectors = kPanelVectors;    // vectors of a full row panel (bf16_mmla: 1 packed_b, else 3;
                                        // bf16_dot: 24 / the widest block, at least 4)
  // bf16_mmla: B's column pairs zipped once per batch entry and column block into a stack buffer
  // of packed_entry_bytes per entry (brgemm_emit.hpp), for calls of at most packed_max_count entries.
  bool packed_b = false;
  std::int64_t packed_entry_bytes = 0;
  std::int64_t packed_max_count = 0;
  // bf16_dot: pair p of each entry's k goes to partial sum p % k_split (1, 2 or 4), added
  // after the batch ((0 + 1) + (2 + 3)); the extra partials start at -0, the sum's identity.
  int k_split = 1;
  std::vector<NeonPanel> panels;        // cover rows 0..m-1 in order
  std::vector<NeonColumnBlock> blocks;  // cover columns 0..n-1 in order
  bool operator==(const NeonBrgemmPlan&) const = default;
};

// Vector registers of a tile: accumulators and one step's operands (see the top of this header).
constexpr int tile_registers(NeonBrgemmMath math, int lanes, int vectors, int cols, int k_split = 1) {
  switch (math) {
    case NeonBrgemmMath::fma: return vectors * cols + cols + 2;
    case NeonBrgemmMath::bf16_dot: return vectors * cols * k_split + cols + 2;
    case NeonBrgemmMath::fma_transposed: return vectors * cols + 2 * ((cols + lanes - 1) / lanes) + 2;
    case NeonBrgemmMath::bf16_widen: break;
    case NeonBrgemmMath::bf16_mmla: return vectors * ((cols + 1) / 2 * 2) + 8;
  }
  return vectors * cols + 2 * cols + 4 + 1;
}

// Validates the descriptor (weft::Error for an invalid one). bf16_instructions: bf16 inputs use
// FEAT_BF16's instructions instead of widening (the CPU must have FEAT_BF16); other types ignore it.
// Which instruction: bf16_path (automatic: bfdot where bfdot_pays, else bfmmla; a packing other than
// automatic asks for bfmmla). bf16_mmla's tilings: packed_b where it pays (automatic: m >=
// kMinPackedRows, n >= kMinPackedCols, and an entry's packed B within kMaxPackedEntryBytes), or
// always (where it fits: tests), or never (the in-register tiling; also the kernel's path for calls
// of more entries than packed_max_count).
enum class MmlaPacking : unsigned char { automatic, always, never };
enum class Bf16Path : unsigned char { automatic, mmla, dot };
NeonBrgemmPlan plan_neon_brgemm(const BrgemmDesc& d, bool bf16_instructions = false,
                                MmlaPacking packing = MmlaPacking::automatic, Bf16Path bf16_path = Bf16Path::automatic);

// Whether bfdot (NeonBrgemmMath::bf16_dot) is predicted faster than bfmmla for d's shape (a bf16
// descriptor; pure). The figures it comes from are in neon_brgemm_plan.cpp and docs/tpp_brgemm.md
// ("bf16 with bfdot and bfmmla").
bool bfdot_pays(const BrgemmDesc& d);

// Packing costs about one cycle per column pair and 4 k (llvm-mca, -noalias), once per entry and
// column block; each 4-row panel of the block saves 8 zips per 4 k against the in-register tiles:
// from 32 rows on the packed kernel is ahead (docs/tpp_brgemm.md, "bf16 with bfdot and bfmmla").
inline constexpr int kMinPackedRows = 32;
// The packed tile is 4 rows x the block's columns: below 16 columns its few accumulators wait on
// bfmmla's latency. llvm-mca 19, useful flops per cycle on Neoverse V1 / V2, packed against in
// registers: 64x8 51.0 / 63.7 against 90.1, 64x12 76.6 / 95.5 against 85.1, 64x16 102.0 / 113.2
// against 90.1 (neon_brgemm_plan.cpp has the rest).
inline constexpr int kMinPackedCols = 16;

inline constexpr std::int64_t kMaxPackedEntryBytes = 48 * 1024;  // one entry of one block
inline constexpr std::int64_t kMaxPackedBytes = 64 * 1024;       // the stack buffer of one call

}  // namespace weft::tpp::neon
