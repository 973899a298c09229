// The register blocking of the Neon fp32 BRGEMM (brgemm_emit.cpp), a pure function of the
// descriptor. The shared planner (plan_brgemm) plans x86 shapes (its panels follow AVX2 / AVX-512
// register files and tail rules); the Neon emitter follows this plan instead, so the shared planner
// stays unchanged until the Neon families are registered.
//
//   row panels:     4 vectors (16 fp32 rows) each; the last panel has the remaining 1-4 vectors,
//                   its last vector `tail` rows (1-3) when m is not a multiple of 4
//   column blocks:  near-equal blocks of at most 6 columns covering n (13 -> 5 + 4 + 4)
//   registers:      vectors x cols accumulators, one B register per column (4 consecutive k of
//                   the column, one ldr q), two A registers: 4 x 6 + 6 + 2 = 32
#pragma once

#include <vector>

#include "weft/tpp/brgemm.hpp"

namespace weft::tpp::neon {

inline constexpr int kLanes = 4;          // fp32 per 128-bit vector
inline constexpr int kPanelVectors = 4;   // vectors per full row panel
inline constexpr int kMaxCols = 6;        // columns per register tile
inline constexpr int kARegisters = 2;     // A vectors, alternated
inline constexpr int kVectorRegisters = 32;

struct NeonPanel {
  int row0 = 0;     // first row of C
  int vectors = 0;  // 1..4
  int tail = 0;     // rows of the last vector when it is partial (1..3), 0 when full
  int rows() const { return tail == 0 ? vectors * kLanes : (vectors - 1) * kLanes + tail; }
  bool operator==(const NeonPanel&) const = default;
};

struct NeonColumnBlock {
  int col0 = 0;
  int cols = 0;  // 1..6
  bool operator==(const NeonColumnBlock&) const = default;
};

struct NeonBrgemmPlan {
  std::vector<NeonPanel> panels;        // cover rows 0..m-1 in order
  std::vector<NeonColumnBlock> blocks;  // cover columns 0..n-1 in order
  bool operator==(const NeonBrgemmPlan&) const = default;
};

// Vector registers of a tile: accumulators, B columns, A vectors.
constexpr int tile_registers(int vectors, int cols) { return vectors * cols + cols + kARegisters; }

// Throws weft::Error for m or n < 1.
NeonBrgemmPlan plan_neon_brgemm(const BrgemmDesc& d);

}  // namespace weft::tpp::neon
