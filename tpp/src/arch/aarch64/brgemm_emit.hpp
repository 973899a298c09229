// The Neon BRGEMM emitter: one kernel `void(const BrgemmArgs*)` per descriptor, following
// neon::plan_neon_brgemm (not the shared plan's panels, which are shaped for x86; see
// neon_brgemm_plan.hpp). Sums in brgemm_reference's order (C or 0, then batch entry by batch
// entry, k ascending, one FMA per term; in bf16 each pair of k as k + 1, then k), so results agree
// with it bit for bit.
//
// Scope: every descriptor validate() accepts (check_neon_brgemm_scope only validates):
//   types      f32; f64 (2 lanes); bf16 A (VNNI-2) and B with an f32 or bf16 C and bias (fp32
//              accumulators: B's pairs widened once per 4 pairs of a column, A's per pair and
//              vector, bits << 16 and bits & 0xffff0000; a bf16 C and bias move through ElementIo,
//              widened on load, rounded as jit::to_bfloat16 on store)
//   batch      strided, offsets, addresses; beta 0 or 1; count <= 0 is an empty sum
//   B          column-major, or b_transposed (f32, f64: a k step's row of the tile is loaded as
//              vectors, one FMA by element per column)
//   epilogue   bias per_row / per_col (added to the sum), then relu (fcmle #0 + bic: x <= 0 -> +0,
//              NaN kept with its bits, exactly the reference's select) or any element-wise unary op
//              (ActivationEmitter, its constants in a ConstantPool after the code: the unary TPPs'
//              bits; exp, sigmoid, tanh, gelu within their documented bounds of the reference). The
//              op's sequence is one subroutine after the kernel, called (bl) per accumulator: the
//              code does not grow with the tiles times the sequence, and the pool stays within adr's
//              1 MiB of it whatever the kernel's size.
//   prefetch   next_c: prfm pldl1keep on the next column block's C (brgemm.hpp)
//
// bf16_instructions (FEAT_BF16; the dispatcher passes true for Isa::neon_bf16 and the sve*_bf16
// ones) makes bf16 inputs use bfdot by element (NeonBrgemmMath::bf16_dot, where neon::bfdot_pays:
// n <= 3 or m <= 4) or bfmmla (NeonBrgemmMath::bf16_mmla) instead of widening, for every
// descriptor above (the same batch kinds, beta, bias, epilogues and C types; nothing falls back).
// bf16_dot is fma's scheme with a pair of k per step: A's q load is 4 rows x a pair (VNNI-2 as it
// is), B's q load 4 pairs of a column, `bfdot acc.4s, a.8h, b.2h[pair]`; k_split partial sums
// (the extra ones from -0) are added after the batch; a bf16 C moves as in bf16_mmla. bf16_mmla:
//   - per 4 k (two VNNI-2 pairs p, p + 1) and 4 rows of A: the q loads of pair p and of pair p + 1,
//     zip1 / zip2 (.4s) = rows (0, 1) and (2, 3), 4 k each: bfmmla's 2x4 operand; per 2 columns of
//     B: their 4 k (two d loads, zip1 .2d): the other operand; the accumulators hold 2x2 blocks
//     (rows r, r + 1 by columns c, c + 1).
//   - packed_b (the plan's choice from 32 rows and 16 columns on, when an entry's packed B fits
//     48 KiB): per column block, each
//     batch entry's B column pairs are zipped once into a stack buffer (count x the entry's bytes,
//     at most 64 KiB: calls of more entries take the in-register path below, also in the kernel),
//     then tiles of 4 rows x 24 columns read them with q loads: 24 bfmmla and 2 zips per 4 k.
//     In registers: tiles of 12 rows x 8 columns zip both operands in the k loop (24 bfmmla and 10
//     zips per 4 k).
//   - C (beta 1) is loaded by columns and zipped into the blocks; after the batch the blocks are
//     unzipped (uzp1 / uzp2) into columns, and the epilogue and store are the widening path's.
//   - k % 4 == 2: the last pair with zero k + 2, k + 3 (A zipped with a zero register, B's pairs
//     loaded as s); m % 4: A's partial loads (the other rows' lanes are never stored); an odd column
//     count: the last column pair's second column is zero (one d load).
//   - numbers (both paths): BFDotAdd (round to odd, denormal inputs and results flushed, default NaN),
//     not brgemm_reference's bits: the bound in tests/support/bf16_dot_bound.hpp and
//     docs/tpp_brgemm.md ("bf16 with bfdot and bfmmla").
#pragma once

#include <memory>

#include "activation_emit.hpp"
#include "constant_pool.hpp"
#include "element_io.hpp"
#include "brgemm_frame.hpp"
#include "neon_brgemm_plan.hpp"
#include "weft/jit/aarch64/code_buffer.hpp"
#include "weft/tpp/brgemm.hpp"

namespace weft::tpp::neon {

// Throws weft::Error ("neon brgemm: ... not supported yet") for a descriptor outside the scope.
void check_neon_brgemm_scope(const BrgemmDesc& d);

class BrgemmEmitter : public jit::a64::CodeBuffer {
 public:
  // Emits (does not finalize) the kernel; works on any AArch64 host.
  // packing (tests): bf16_mmla's tiling choice (neon_brgemm_plan.hpp).
  // bf16_path (tests): bfdot or bfmmla (neon_brgemm_plan.hpp).
  explicit BrgemmEmitter(const BrgemmDesc& d, bool bf16_instructions = false,
                         MmlaPacking packing = MmlaPacking::automatic, Bf16Path bf16_path = Bf16Path::automatic);

  const NeonBrgemmPlan& plan() const { return plan_; }

 private:
  void prologue();
  void epilogue();
  void tile(const NeonPanel& panel, const NeonColumnBlock& block);
  void entry_pointers(const NeonColumnBlock& block);
  void k_loop(const NeonPanel& panel, int cols);
  void k_steps(const NeonPanel& panel, int cols, int steps);
  void k_steps_transposed(const NeonPanel& panel, int cols, int steps);
  void k_pairs_bf16(const NeonPanel& panel, int cols, int pairs);
  void k_quads_mmla(const NeonPanel& panel, int cols, int pairs);
  void k_quads_packed(const NeonPanel& panel, int cols, int pairs);
  bool mmla_a_operands(const NeonPanel& panel, int v, bool single);
  void body(const NeonBrgemmPlan& plan);
  void pack_b(const NeonColumnBlock& block);
  void entry_b(jit::a64::XReg dst);
  void mmla_layout(bool to_blocks, const NeonPanel& panel, int cols);
  jit::a64::VReg acc_of(int v, int j, int cols) const;
  jit::a64::VReg partial(int s, int v, int j, const NeonPanel& panel, int cols) const;
  void add_partials(const NeonPanel& panel, int cols);
  void load_a(unsigned reg, const NeonPanel& panel, int v);
  void load_bytes(unsigned reg, jit::a64::XReg base, std::int64_t offset, int bytes);
  void c_access(bool load, const NeonPanel& panel, const NeonColumnBlock& block);
  void prefetch_next_c(const NeonPanel& panel, const NeonColumnBlock& block);
  void tile_epilogue(const NeonPanel& panel, const NeonColumnBlock& block);
  void fma(unsigned acc, unsigned a, unsigned b, int lane);
  void c_access_bf16(bool load, const NeonPanel& panel, const NeonColumnBlock& block);
  int rows_of(const NeonPanel& panel, int v) const;

  BrgemmDesc d_;
  NeonBrgemmPlan plan_;
  NeonBrgemmPlan fallback_plan_;  // packed_b: the in-register tiling for calls of more entries
  bool packed_ = false;           // emitting the packed_b path
  int lanes_ = 4;
  int in_bytes_ = 4, out_bytes_ = 4;
  bool mmla_ = false;    // NeonBrgemmMath::bf16_mmla
  bool dot_ = false;     // NeonBrgemmMath::bf16_dot
  bool reload_io_ = false;  // a bf16 C's ElementIo registers are the k loop's: set up before each use
  int a_row_bytes_ = 4;  // bytes of one row of A within a k step (bf16 VNNI-2: a pair, 4)
  unsigned next_a_ = 0;  // which of the two A registers (sets) the next A load uses
  unsigned next_b_ = 0;  // b_transposed: which of the two B register sets the next k step uses
  ConstantPool pool_;    // the unary epilogue's constants, after the code
  jit::a64::Label activation_;  // the unary epilogue's subroutine (one copy, after the kernel's ret)
  std::unique_ptr<ElementIo> io_;  // a bf16 C and bias (f32 and f64 ones move as they are)
};

}  // namespace weft::tpp::neon
