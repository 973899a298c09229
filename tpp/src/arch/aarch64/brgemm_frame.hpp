// What the Neon and the SVE BRGEMM emitters (brgemm_emit.cpp, sve_brgemm_emit.cpp) share: the
// general registers of a kernel `void(const BrgemmArgs*)`, the saving of the callee-saved ones,
// the arguments' loads and the batch entry's A and B pointers (strided, offsets, addresses).
//
// General registers, fixed for the whole kernel (AAPCS64: x0-x17 are the caller's to lose; x19-x28
// are saved by save_registers):
//   x0 args          x1 a, x2 b, x3 c, x4 count
//   x5, x6           strided: stride_a, stride_b in bytes; offsets: offsets_a/b; addresses: addresses_a/b
//   x7               batch entries left in the tile's batch loop
//   x8, x9           strided: A_i and B_i; offsets / addresses: cursors into the arrays
//   x10              bytes from one k step of A to the next (lda elements; bf16: a pair, 2 lda)
//   x11              bytes from one column of B to the next (b_transposed: from one k to the next)
//   x12              A of the current k step (A_i + the panel's rows)
//   x13              k groups left
//   x14, x15         the tile's row offset in A (bytes), its column offset in B (bytes)
//   x16, x17         scratch
//   x19..x24         B_i's columns of the tile, advancing along k (b_transposed: x19, B_i's row k)
//   x25              ldc in bytes
//   x26              the C column being loaded or stored
//   x27              row panels left in a loop over equal panels
//   x28              the tile's C (its first row and column)
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "weft/jit/aarch64/code_buffer.hpp"
#include "weft/tpp/brgemm.hpp"

namespace weft::tpp::a64_brgemm {

using jit::a64::XReg;

inline constexpr XReg kArgs = jit::a64::x0, kA = jit::a64::x1, kB = jit::a64::x2, kC = jit::a64::x3,
                      kCount = jit::a64::x4, kBatchA = jit::a64::x5, kBatchB = jit::a64::x6, kLeft = jit::a64::x7,
                      kEntryA = jit::a64::x8, kEntryB = jit::a64::x9, kLda = jit::a64::x10, kLdb = jit::a64::x11,
                      kAPtr = jit::a64::x12, kKLeft = jit::a64::x13, kRowOff = jit::a64::x14,
                      kColOff = jit::a64::x15, kT0 = jit::a64::x16, kT1 = jit::a64::x17, kLdc = jit::a64::x25,
                      kCCol = jit::a64::x26, kPanelsLeft = jit::a64::x27, kCTile = jit::a64::x28;
inline constexpr unsigned kFirstBColumn = 19;
inline constexpr int kMaxBColumns = 6;  // x19..x24

inline XReg b_column(int j) { return XReg(kFirstBColumn + static_cast<unsigned>(j)); }

// Pushes x19-x28 and d8-d15 (the low halves of v8-v15 / z8-z15), with x29/x30 first when the
// kernel calls a subroutine (`calls`); restore_registers pops them (no ret).
void save_registers(jit::a64::CodeBuffer& code, bool calls);
void restore_registers(jit::a64::CodeBuffer& code, bool calls);

// kA, kB, kC, kCount and the batch kind's kBatchA / kBatchB (strided: in bytes of `in_bytes`
// elements) from the BrgemmArgs at kArgs.
void load_args(jit::a64::CodeBuffer& code, BrgemmBatch batch, int in_bytes);

// Before a tile's batch loop: branches to `empty` when count <= 0 (an empty sum, also for a
// negative count), else kLeft = count and kEntryA / kEntryB at the first entry.
void begin_batch(jit::a64::CodeBuffer& code, BrgemmBatch batch, jit::a64::Label& empty);

// This entry's A rows of the panel (kAPtr = A_i + kRowOff) and the block's first B column
// (b_column(0) = B_i + kColOff), then kEntryA / kEntryB to the next entry.
void entry_pointers(jit::a64::CodeBuffer& code, BrgemmBatch batch, int in_bytes);

// One column block's row panels in order: tile(panel) for each, a run of equal consecutive panels
// (same vectors and tail: the full ones) as one counted loop (kPanelsLeft), kRowOff and kCTile
// advanced by a panel's bytes of A and of C (a_bytes(panel), c_bytes(panel): add immediates, at
// most 4 KiB) between panels. Panel: NeonPanel or SvePanel.
template <class Panel, class Tile, class ABytes, class CBytes>
void row_panels(jit::a64::CodeBuffer& code, const std::vector<Panel>& panels, Tile tile, ABytes a_bytes,
                CBytes c_bytes) {
  for (std::size_t p = 0; p < panels.size();) {
    const Panel& panel = panels[p];
    std::size_t run = 1;
    while (p + run < panels.size() && panels[p + run].vectors == panel.vectors && panels[p + run].tail == panel.tail)
      ++run;
    const bool last = p + run == panels.size();
    const std::int64_t a = a_bytes(panel), c = c_bytes(panel);
    if (run == 1) {
      tile(panel);
      if (!last) {
        code.add(kRowOff, kRowOff, a);
        code.add(kCTile, kCTile, c);
      }
    } else {
      jit::a64::Label loop;
      code.mov_imm(kPanelsLeft, run);
      code.bind(loop);
      tile(panel);
      code.add(kRowOff, kRowOff, a);
      code.add(kCTile, kCTile, c);
      code.subs(kPanelsLeft, kPanelsLeft, 1);
      code.b(jit::a64::Cond::ne, loop);
    }
    p += run;
  }
}

}  // namespace weft::tpp::a64_brgemm
