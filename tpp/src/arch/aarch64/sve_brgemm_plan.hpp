// The register blocking of the SVE BRGEMM (sve_brgemm_emit.cpp), a pure function of the descriptor
// and the vector length the code is generated for (16, 32 or 64 bytes: the code runs at that VL
// only).
//
//   lanes:          accumulator lanes per vector: vector_bytes / 4 (f32) or / 8 (f64)
//   row panels:     panel_vectors vectors each (4, or all of m's vectors when fewer); the last panel
//                   has the remaining 1-4 vectors, its last vector `tail` rows (1..lanes-1) when m
//                   is not a multiple of lanes (loaded and stored under a whilelt predicate)
//   B, column-major (indexed): each column's next 128 bits of k (4 f32 / 2 f64) replicated into every
//                   segment (ld1rqw / ld1rqd), multiplied by element (fmla z.s, z.s, z.s[i]): Neon's
//                   scheme, one B load per column per k group, so that 1- and 2-vector panels are
//                   not bound by B's loads
//   B transposed (broadcast): B(k, j) broadcast with ld1rw / ld1rd from the row pointer (B's
//                   columns contiguous)
//   column blocks:  near-equal blocks of at most max_cols columns covering n: 6 (x19..x24 point at
//                   B's columns); when m is one panel of 1-3 vectors more, so that the FMAs have
//                   enough accumulators to hide their latency (1 x 6 on Neoverse V1: 75 % of the peak
//                   in llvm-mca's model): indexed min(8, 22 / vectors) (8, 8, 7: B in z0..z7, which
//                   fmla by element requires for f32), broadcast min(12, 24 / vectors) (12, 12, 8);
//                   the columns' pointers past x24 in x26, x27, x16, x17, x29, x30 (free in such a
//                   kernel's k loop)
//   registers:      indexed: z0..z5 B's columns, z6 and z7 two A registers in turn, z8..z31 the
//                   accumulators (vectors x cols <= 24); with 7-8 columns z0..z7 B, z30 and z31 A,
//                   z8..z29 the accumulators (<= 22). broadcast: z0..z3 the A vectors of a k step,
//                   z4..z7 B's broadcasts (four in rotation), z8..z31 the accumulators (<= 24)
//   k groups:       indexed: 128 bits of k per loop iteration (4 f32, 2 f64), the rest under a
//                   predicate (p4: whilelt); broadcast: 4 k per iteration (offsets in the ld1r
//                   immediate), the rest after the loop
#pragma once

#include <vector>

#include "weft/tpp/brgemm.hpp"

namespace weft::tpp::sve {

inline constexpr int kPanelVectors = 4;   // vectors per full row panel
inline constexpr int kPanelCols = 6;      // columns per block with full panels (x19..x24)
inline constexpr int kMaxCols = 12;       // columns per block at most (broadcast, one m panel of 1-2 vectors)
inline constexpr int kMaxIndexedCols = 8;  // indexed: B in z0..z7
inline constexpr int kMaxAccumulators = 24;  // z8..z31
inline constexpr int kKUnroll = 4;  // broadcast: k per loop iteration

// Accumulators a tile of `cols` columns may use: 24 (z8..z31), 22 when indexed with more than 6
// columns (z30 and z31 then hold A).
constexpr int max_accumulators(bool indexed, int cols) { return indexed && cols > kPanelCols ? 22 : 24; }

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
  bool indexed = true;  // B column-major: ld1rq + fmla by element; false (b_transposed): broadcasts
  int k_group = 4;      // k per loop iteration (indexed: 128 bits of B's column)
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
