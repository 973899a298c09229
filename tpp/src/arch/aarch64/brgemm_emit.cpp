#include "brgemm_emit.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

#include "weft/jit/error.hpp"

namespace weft::tpp::neon {
namespace {

using namespace jit::a64;

// General registers, fixed for the whole kernel (AAPCS64: x0-x17 are the caller's to lose; x19-x28
// are saved in the prologue):
//   x0 args          x1 a, x2 b, x3 c, x4 count
//   x5, x6           strided: stride_a, stride_b in bytes; offsets: offsets_a/b; addresses: addresses_a/b
//   x7               batch entries left in the tile's batch loop
//   x8, x9           strided: A_i and B_i; offsets / addresses: cursors into the arrays
//   x10, x11         lda and ldb in bytes
//   x12              A of the current k column (A_i + the panel's rows)
//   x13              k groups left
//   x14, x15         the tile's row offset in A (bytes), its column offset in B (bytes)
//   x16, x17         scratch
//   x19..x24         B_i's columns of the tile, advancing along k
//   x25              ldc in bytes
//   x26              the C column being loaded or stored
//   x27              row panels left in a loop over equal panels
//   x28              the tile's C (its first row and column)
constexpr XReg kArgs = x0, kA = x1, kB = x2, kC = x3, kCount = x4, kBatchA = x5, kBatchB = x6, kLeft = x7,
               kEntryA = x8, kEntryB = x9, kLda = x10, kLdb = x11, kAPtr = x12, kKLeft = x13, kRowOff = x14,
               kColOff = x15, kT0 = x16, kT1 = x17, kLdc = x25, kCCol = x26, kPanelsLeft = x27, kCTile = x28;
constexpr unsigned kFirstBColumn = 19;

// Vector registers: v0..v5 the B columns, v6 and v7 the A vectors, v8.. the accumulators
// (vector-major: accumulator (v, j) of a tile with `cols` columns is v8 + v * cols + j). v8-v15's
// low halves are callee-saved: the prologue saves them.
constexpr unsigned kFirstA = 6, kFirstAcc = 8;

XReg b_column(int j) { return XReg(kFirstBColumn + static_cast<unsigned>(j)); }
VReg acc(int v, int j, int cols) { return VReg(kFirstAcc + static_cast<unsigned>(v * cols + j)); }

}  // namespace

void check_neon_brgemm_scope(const BrgemmDesc& d) {
  validate(d);
  auto unsupported = [](const std::string& what) { throw Error("neon brgemm: " + what + " not supported yet"); };
  if (!(d.types == DataTypes{})) unsupported("types " + name_suffix(d.types));
  if (d.b_transposed) unsupported("b_transposed");
  if (d.bias != BrgemmBias::none) unsupported("bias");
  if (d.activation != BrgemmActivation::none) unsupported("activation");
}

BrgemmEmitter::BrgemmEmitter(const BrgemmDesc& d) : d_(d) {
  check_neon_brgemm_scope(d);
  plan_ = plan_neon_brgemm(d);
  for (const NeonColumnBlock& block : plan_.blocks) {
    for (const NeonPanel& panel : plan_.panels) {
      if (tile_registers(panel.vectors, block.cols) > kVectorRegisters) {
        throw Error("neon brgemm: a tile of " + std::to_string(panel.vectors) + " x " + std::to_string(block.cols) +
                    " needs more than 32 vector registers");
      }
    }
  }
  prologue();
  // Column blocks outside, row panels inside: the panels of one block read the same B columns,
  // which stay in L1 from one panel to the next. Equal consecutive panels (the full ones) are one
  // loop, so that the code grows with the column blocks only (64x64x64: 11 blocks, not 44 tiles).
  for (const NeonColumnBlock& block : plan_.blocks) {
    mov_imm(kColOff, static_cast<std::uint64_t>(static_cast<std::int64_t>(block.col0) * d_.ldb * 4));
    mov_imm(kT0, static_cast<std::uint64_t>(static_cast<std::int64_t>(block.col0) * d_.ldc * 4));
    add(kCTile, kC, kT0);
    mov_imm(kRowOff, 0);
    for (std::size_t p = 0; p < plan_.panels.size();) {
      const NeonPanel& panel = plan_.panels[p];
      std::size_t run = 1;
      while (p + run < plan_.panels.size() && plan_.panels[p + run].vectors == panel.vectors &&
             plan_.panels[p + run].tail == panel.tail)
        ++run;
      const bool last = p + run == plan_.panels.size();
      const auto panel_bytes = panel.rows() * 4;  // at most 64: an add immediate
      if (run == 1) {
        tile(panel, block);
        if (!last) {
          add(kRowOff, kRowOff, panel_bytes);
          add(kCTile, kCTile, panel_bytes);
        }
      } else {
        Label panels;
        mov_imm(kPanelsLeft, run);
        bind(panels);
        tile(panel, block);
        add(kRowOff, kRowOff, panel_bytes);
        add(kCTile, kCTile, panel_bytes);
        subs(kPanelsLeft, kPanelsLeft, 1);
        b(Cond::ne, panels);
      }
      p += run;
    }
  }
  epilogue();
}

void BrgemmEmitter::prologue() {
  stp(x19, x20, pre_ptr(sp, -16));
  stp(x21, x22, pre_ptr(sp, -16));
  stp(x23, x24, pre_ptr(sp, -16));
  stp(x25, x26, pre_ptr(sp, -16));
  stp(x27, x28, pre_ptr(sp, -16));
  stp(d8, d9, pre_ptr(sp, -16));
  stp(d10, d11, pre_ptr(sp, -16));
  stp(d12, d13, pre_ptr(sp, -16));
  stp(d14, d15, pre_ptr(sp, -16));
  ldr(kA, ptr(kArgs, offsetof(BrgemmArgs, a)));
  ldr(kB, ptr(kArgs, offsetof(BrgemmArgs, b)));
  ldr(kC, ptr(kArgs, offsetof(BrgemmArgs, c)));
  ldr(kCount, ptr(kArgs, offsetof(BrgemmArgs, count)));
  switch (d_.batch) {
    case BrgemmBatch::strided:
      ldr(kBatchA, ptr(kArgs, offsetof(BrgemmArgs, stride_a)));
      ldr(kBatchB, ptr(kArgs, offsetof(BrgemmArgs, stride_b)));
      lsl(kBatchA, kBatchA, 2);  // elements -> bytes
      lsl(kBatchB, kBatchB, 2);
      break;
    case BrgemmBatch::offsets:
      ldr(kBatchA, ptr(kArgs, offsetof(BrgemmArgs, offsets_a)));
      ldr(kBatchB, ptr(kArgs, offsetof(BrgemmArgs, offsets_b)));
      break;
    case BrgemmBatch::addresses:
      ldr(kBatchA, ptr(kArgs, offsetof(BrgemmArgs, addresses_a)));
      ldr(kBatchB, ptr(kArgs, offsetof(BrgemmArgs, addresses_b)));
      break;
  }
  mov_imm(kLda, static_cast<std::uint64_t>(d_.lda * 4));
  mov_imm(kLdb, static_cast<std::uint64_t>(d_.ldb * 4));
  mov_imm(kLdc, static_cast<std::uint64_t>(d_.ldc * 4));
}

void BrgemmEmitter::epilogue() {
  ldp(d14, d15, post_ptr(sp, 16));
  ldp(d12, d13, post_ptr(sp, 16));
  ldp(d10, d11, post_ptr(sp, 16));
  ldp(d8, d9, post_ptr(sp, 16));
  ldp(x27, x28, post_ptr(sp, 16));
  ldp(x25, x26, post_ptr(sp, 16));
  ldp(x23, x24, post_ptr(sp, 16));
  ldp(x21, x22, post_ptr(sp, 16));
  ldp(x19, x20, post_ptr(sp, 16));
  ret();
}

void BrgemmEmitter::tile(const NeonPanel& panel, const NeonColumnBlock& block) {
  const int cols = block.cols;
  // The accumulators keep the tile's C across the whole batch: C (beta 1) or 0 first, then every
  // entry's terms, k ascending (brgemm_reference's order).
  if (d_.beta == 0) {
    for (int v = 0; v < panel.vectors; ++v)
      for (int j = 0; j < cols; ++j) movi(acc(v, j, cols).d2(), 0);
  } else {
    c_access(true, panel, block);
    if (d_.prefetch == BrgemmPrefetch::next_c) prefetch_next_c(panel, block);
  }
  Label store, batch;
  // count 0 (or negative, as on x86): C stays (beta 1) or becomes 0 (beta 0).
  cmp(kCount, 0);
  b(Cond::le, store);
  mov(kLeft, kCount);
  if (d_.batch == BrgemmBatch::strided) {
    mov(kEntryA, kA);
    mov(kEntryB, kB);
  } else {
    mov(kEntryA, kBatchA);
    mov(kEntryB, kBatchB);
  }
  bind(batch);
  entry_pointers(block);
  const int groups = d_.k / kLanes, rest = d_.k % kLanes;
  if (groups >= 2) {
    Label group;
    mov_imm(kKLeft, static_cast<std::uint64_t>(groups));
    bind(group);
    k_steps(panel, cols, kLanes);
    subs(kKLeft, kKLeft, 1);
    b(Cond::ne, group);
  } else if (groups == 1) {
    k_steps(panel, cols, kLanes);
  }
  if (rest > 0) k_steps(panel, cols, rest);
  subs(kLeft, kLeft, 1);
  b(Cond::ne, batch);
  bind(store);
  c_access(false, panel, block);
}

// This entry's A rows of the panel (kAPtr) and B columns of the block (x19..), then the next entry.
void BrgemmEmitter::entry_pointers(const NeonColumnBlock& block) {
  switch (d_.batch) {
    case BrgemmBatch::strided:
      add(kAPtr, kEntryA, kRowOff);
      add(b_column(0), kEntryB, kColOff);
      add(kEntryA, kEntryA, kBatchA);
      add(kEntryB, kEntryB, kBatchB);
      break;
    case BrgemmBatch::offsets:
      ldr(kT0, post_ptr(kEntryA, 8));
      ldr(kT1, post_ptr(kEntryB, 8));
      add(kAPtr, kA, kT0, jit::a64::lsl(2));
      add(b_column(0), kB, kT1, jit::a64::lsl(2));
      add(kAPtr, kAPtr, kRowOff);
      add(b_column(0), b_column(0), kColOff);
      break;
    case BrgemmBatch::addresses:
      ldr(kT0, post_ptr(kEntryA, 8));
      ldr(kT1, post_ptr(kEntryB, 8));
      add(kAPtr, kT0, kRowOff);
      add(b_column(0), kT1, kColOff);
      break;
  }
  for (int j = 1; j < block.cols; ++j) add(b_column(j), b_column(j - 1), kLdb);
}

// `lanes` consecutive k (4, or the k tail's 1-3): B(k.., j) of every column in one register each
// (B is column-major: the k of a column are contiguous), then for each k the A column's vectors,
// each multiplied by the B lane of every column. The B pointers advance past these k; so does
// kAPtr, one column of A per k.
void BrgemmEmitter::k_steps(const NeonPanel& panel, int cols, int lanes) {
  for (int j = 0; j < cols; ++j) {
    const auto bj = static_cast<unsigned>(j);
    switch (lanes) {
      case 4: ldr(QReg(bj), post_ptr(b_column(j), 16)); break;
      case 2: ldr(DReg(bj), post_ptr(b_column(j), 8)); break;
      case 1: ldr(SReg(bj), ptr(b_column(j))); break;  // only in the tail: no advance needed
      default:  // 3: two lanes, then the third, never reading past B's column
        ldr(DReg(bj), post_ptr(b_column(j), 8));
        ld1(VReg(bj).s(2), ptr(b_column(j)));
        break;
    }
  }
  for (int kk = 0; kk < lanes; ++kk) {
    for (int v = 0; v < panel.vectors; ++v) {
      const unsigned a = kFirstA + next_a_;
      next_a_ ^= 1;  // two A registers alternated: the next load need not wait for this one's FMAs
      load_a(a, panel, v);
      for (int j = 0; j < cols; ++j)
        fmla(acc(v, j, cols).s4(), VReg(a).s4(), VReg(static_cast<unsigned>(j)).s(static_cast<unsigned>(kk)));
    }
    add(kAPtr, kAPtr, kLda);
  }
}

// A(rows of vector v, k) into v<reg>: a q load, or for the panel's partial vector its 1-3 rows only
// (the rows past m may be past the end of A).
void BrgemmEmitter::load_a(unsigned reg, const NeonPanel& panel, int v) {
  const std::int64_t offset = v * 16;
  const int rows = (panel.tail != 0 && v == panel.vectors - 1) ? panel.tail : kLanes;
  switch (rows) {
    case 4: ldr(QReg(reg), ptr(kAPtr, offset)); break;
    case 2: ldr(DReg(reg), ptr(kAPtr, offset)); break;
    case 1: ldr(SReg(reg), ptr(kAPtr, offset)); break;
    default:
      ldr(DReg(reg), ptr(kAPtr, offset));
      add(kT0, kAPtr, offset + 8);
      ld1(VReg(reg).s(2), ptr(kT0));
      break;
  }
}

// BrgemmPrefetch::next_c (brgemm.hpp): the C of the next column block, `cols` columns from the
// tile's column col0 + cols on (past the last block: past C, where the caller's next C is), this
// panel's rows. c_access left kCCol at the tile's last column. The column's alignment is unknown,
// so besides its first byte its last one gets a prefetch (the line a misaligned column spills
// into); the panel's rows span at most 64 bytes. prfm never faults, whatever the address.
void BrgemmEmitter::prefetch_next_c(const NeonPanel& panel, const NeonColumnBlock& block) {
  const int bytes = panel.rows() * 4;
  for (int j = 0; j < block.cols; ++j) {
    add(kCCol, kCCol, kLdc);
    prfm(Prefetch::pldl1keep, ptr(kCCol));
    if (bytes > 4) prfum(Prefetch::pldl1keep, ptr(kCCol, bytes - 1));
  }
}

// The tile's C into (load) or from (store) the accumulators, column by column; the panel's partial
// vector moves only its rows (C's rows past m may be past its end, or another tile's).
void BrgemmEmitter::c_access(bool load, const NeonPanel& panel, const NeonColumnBlock& block) {
  const int cols = block.cols;
  mov(kCCol, kCTile);
  for (int j = 0; j < cols; ++j) {
    for (int v = 0; v < panel.vectors; ++v) {
      const unsigned r = acc(v, j, cols).index;
      const std::int64_t offset = v * 16;
      const int rows = (panel.tail != 0 && v == panel.vectors - 1) ? panel.tail : kLanes;
      switch (rows) {
        case 4: load ? ldr(QReg(r), ptr(kCCol, offset)) : str(QReg(r), ptr(kCCol, offset)); break;
        case 2: load ? ldr(DReg(r), ptr(kCCol, offset)) : str(DReg(r), ptr(kCCol, offset)); break;
        case 1: load ? ldr(SReg(r), ptr(kCCol, offset)) : str(SReg(r), ptr(kCCol, offset)); break;
        default:
          add(kT1, kCCol, offset + 8);
          if (load) {
            ldr(DReg(r), ptr(kCCol, offset));
            ld1(VReg(r).s(2), ptr(kT1));
          } else {
            str(DReg(r), ptr(kCCol, offset));
            st1(VReg(r).s(2), ptr(kT1));
          }
          break;
      }
    }
    if (j + 1 < cols) add(kCCol, kCCol, kLdc);
  }
}

}  // namespace weft::tpp::neon
