// The register blocking of the SVE BRGEMM (sve_brgemm_emit.cpp), a pure function of the descriptor
// and the vector length the code is generated for (16, 32 or 64 bytes: the code runs at that VL
// only).
//
//   lanes:          accumulator lanes per vector: vector_bytes / 4 (f32) or / 8 (f64)
//   row panels:     panel_vectors vectors each (4, or all of m's vectors when fewer); the last panel
//                   has the remaining 1-4 vectors, its last vector `tail` rows (1..lanes-1) when m
//                   is not a multiple of lanes (loaded and stored under a whilelt predicate)
//   column blocks:  near-equal blocks of at most max_cols columns covering n: 6 (x19..x24 point at
//                   B's columns); when m is one panel of 1-3 vectors, 24 / vectors up to 12 (12, 12,
//                   8), the columns' pointers also in x26, x27, x16, x17, x29, x30, free in such a
//                   kernel's k loop: fewer accumulators would leave the FMA pipes waiting on their
//                   latency (1 x 6 on Neoverse V1: 75 % of the peak in llvm-mca's model)
//   registers:      z8..z31 the accumulators (vectors x cols <= 24), z0..z3 the A vectors of a k
//                   step, z4..z7 B's broadcasts (ld1rw / ld1rd, four in rotation): 24 + 4 + 4 = 32
//   k unroll:       4 k per loop iteration (the broadcasts' offsets in the ld1r immediate, one
//                   pointer update per column per 4 k), the k % 4 rest after the loop
#pragma once

#include <vector>

#include "weft/tpp/brgemm.hpp"

namespace weft::tpp::sve {

inline constexpr int kPanelVectors = 4;   // vectors per full row panel
inline constexpr int kPanelCols = 6;      // columns per block with full panels (x19..x24)
inline constexpr int kMaxCols = 12;       // columns per block at most (one m panel of 1-2 vectors)
inline constexpr int kMaxAccumulators = 24;  // z8..z31
inline constexpr int kKUnroll = 4;

struct SvePanel {
  int row0 = 0;     // first row of C
  int vectors = 0;  // 1..4
  int tail = 0;     // rows of the last vector when it is partial (1..lanes-1), 0 when full
  int rows(int lanes) const { return tail == 0 ? vectors * lanes : (vectors - 1) * lanes + tail; }
  bool operator==(const SvePanel&) const = default;
};

struct SveColumnBlock {
  int col0 = 0;
  int cols = 0;  // 1..max_cols
  bool operator==(const SveColumnBlock&) const = default;
};

struct SveBrgemmPlan {
  int vector_bytes = 32;
  int lanes = 8;
  int tail = 0;  // m % lanes: the predicate of the last panel's last vector (0: none)
  int max_cols = kPanelCols;
  std::vector<SvePanel> panels;        // cover rows 0..m-1 in order
  std::vector<SveColumnBlock> blocks;  // cover columns 0..n-1 in order
  bool operator==(const SveBrgemmPlan&) const = default;
};

// What the SVE emitter handles (for a descriptor validate() accepts): f32 or f64 everywhere
// (types.in == out == compute), B column-major or b_transposed, every batch kind, beta 0/1, bias
// none / per_row / per_col, any activation (relu; unary: f32, as validate() allows), prefetch none
// or next_c. Not yet: bf16 inputs (the dispatcher sends those to the Neon emitter). False for an
// invalid descriptor.
bool supports(const BrgemmDesc& d);

// Throws weft::Error for an invalid descriptor, one outside supports() or a vector_bytes other than
// 16, 32, 64.
SveBrgemmPlan plan_sve_brgemm(const BrgemmDesc& d, int vector_bytes);

}  // namespace weft::tpp::sve
