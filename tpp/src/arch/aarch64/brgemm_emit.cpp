#include "brgemm_emit.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "weft/jit/data_type.hpp"
#include "weft/jit/error.hpp"

namespace weft::tpp::neon {
namespace {

using namespace jit::a64;
using jit::DataType;

// General registers: brgemm_frame.hpp (shared with the SVE emitter).
using namespace a64_brgemm;

// Vector registers: v8.. the accumulators (vector-major: accumulator (v, j) of a tile with `cols`
// columns is v8 + v * cols + j; v8-v15's low halves are callee-saved: the prologue saves them).
//   fma:            v0..v5 the B columns, v6 and v7 the A vectors
//   fma_transposed: v0..v2 and v3..v5 two sets of a k step's B row, v6 and v7 the A vectors
//   bf16_widen:     v(2j) and v(2j + 1) column j's even and odd k (j < 4), v24/v25 and v26/v27 two
//                   sets of an A vector's odd and even k, v28 the mask 0xffff0000
// The epilogue uses the operands' registers, dead by then: v6 the bias, v1 relu's mask, v7 the unary
// op's value (its subroutine's argument and result) and v0..v5 the op's scratch. A bf16 C
// (bf16 inputs: 16 accumulators at most, v8..v23) moves through ElementIo with its constants in
// v29 and v30 (set once in the prologue: no other code touches them) and v24..v26 as scratch.
constexpr unsigned kFirstA = 6, kFirstAcc = 8, kBf16FirstA = 24, kBf16Mask = 28;
constexpr unsigned kBiasScratch = 6, kReluScratch = 1, kActivationValue = 7;
constexpr VReg kActivationScratch[] = {v0, v1, v2, v3, v4, v5};
constexpr VReg kIoConstants[] = {v29, v30};
constexpr VReg kIoScratch[] = {v24, v25, v26};
// bf16_mmla: v8..v31 the accumulators (vectors x columns rounded up to even; accumulator (v, 2c + h)
// is the 2x2 block of rows 4v + 2h, 4v + 2h + 1 and columns 2c, 2c + 1 during the k loop, column
// 2c + h's 4 rows of vector v before and after it), v0..v3 the B operands of 4 column pairs, v4 a
// temporary (B's odd column, the layout changes), v5 and v6 A's loads of pairs p and p + 1, v7 the
// zip1 of them (rows 0, 1; the zip2 goes to v6). x19..x22 the column pairs' first columns in B,
// x23 A at pair p + 1. A bf16 C moves through ElementIo with its constants in v4, v5 and scratch
// v0, v2, v3, set up again before each use (the k loop and the unary op clobber them).
// bf16_dot: fma's registers (v0..v5 the B columns' 4 pairs, v6 and v7 A's 4 rows x a pair, v8..v31
// up to 24 accumulators: v29, v30 are not free), so a bf16 C moves as in bf16_mmla.
constexpr unsigned kMmlaFirstB = 0, kMmlaTemp = 4, kMmlaA0 = 5, kMmlaA1 = 6, kMmlaZip = 7;
constexpr XReg kAPtr2 = x23;
// packed_b: x24 the packed B (the tile's batch entries one after the other); while packing x19 the
// entry's first column of the block, x20 / x21 a column pair's two columns, x22 the destination,
// x23 the stride between a column pair's 4 k steps in the buffer, x24 the entry's buffer, v0 / v1
// the pair's two columns. The tiles: v0..v3 the column pairs' operands in turn, A as above.
constexpr XReg kPacked = x24, kPackSrc0 = x20, kPackSrc1 = x21, kPackDst = x22, kPackStride = x23;
constexpr VReg kMmlaIoConstants[] = {v4, v5};
constexpr VReg kMmlaIoScratch[] = {v0, v2, v3};

VReg acc(int v, int j, int cols) { return VReg(kFirstAcc + static_cast<unsigned>(v * cols + j)); }

}  // namespace

void check_neon_brgemm_scope(const BrgemmDesc& d) { validate(d); }

BrgemmEmitter::BrgemmEmitter(const BrgemmDesc& d, bool bf16_instructions, MmlaPacking packing,
                             Bf16Path bf16_path)
    : d_(d) {
  check_neon_brgemm_scope(d);
  plan_ = plan_neon_brgemm(d, bf16_instructions, packing, bf16_path);
  lanes_ = plan_.lanes;
  mmla_ = plan_.math == NeonBrgemmMath::bf16_mmla;
  dot_ = plan_.math == NeonBrgemmMath::bf16_dot;
  reload_io_ = mmla_ || dot_;
  in_bytes_ = static_cast<int>(jit::size_of(d.types.in));
  out_bytes_ = static_cast<int>(jit::size_of(d.types.out));
  a_row_bytes_ = plan_.math == NeonBrgemmMath::bf16_widen || mmla_ || dot_ ? 2 * in_bytes_ : in_bytes_;
  if (d.types.out == DataType::bf16) {
    if (reload_io_) {
      io_ = std::make_unique<ElementIo>(*this, DataType::bf16, DataType::f32, kT0, kMmlaIoConstants, kMmlaIoScratch);
    } else {
      io_ = std::make_unique<ElementIo>(*this, DataType::bf16, DataType::f32, kT0, kIoConstants, kIoScratch);
    }
  }
  if (plan_.packed_b) fallback_plan_ = plan_neon_brgemm(d, bf16_instructions, MmlaPacking::never, Bf16Path::mmla);
  for (const NeonBrgemmPlan* plan : {&plan_, &fallback_plan_}) {
    for (const NeonColumnBlock& block : plan->blocks) {
      for (const NeonPanel& panel : plan->panels) {
        if (tile_registers(plan->math, lanes_, panel.vectors, block.cols, plan->k_split) > kVectorRegisters) {
          throw Error("neon brgemm: a tile of " + std::to_string(panel.vectors) + " x " + std::to_string(block.cols) +
                      " needs more than 32 vector registers");
        }
      }
    }
  }
  prologue();
  if (plan_.packed_b) {
    // Calls of more entries than the stack buffer holds take the in-register tiling (the count
    // compared unsigned: a negative one too; its empty sum is the same on either path).
    Label in_registers, done;
    mov_imm(kT0, static_cast<std::uint64_t>(plan_.packed_max_count));
    cmp(kCount, kT0);
    b(Cond::hi, in_registers);
    body(plan_);
    b(done);
    bind(in_registers);
    body(fallback_plan_);
    bind(done);
  } else {
    body(plan_);
  }
  epilogue();
  if (d_.activation == BrgemmActivation::unary) {
    // v7 = op(v7), clobbering v0..v5 and x17 (the pool's address, adr's reach from here is the
    // pool's few entries).
    bind(activation_);
    pool_.load_base(*this, kT1);
    ActivationEmitter(*this, pool_, kT1)
        .emit(d_.unary, d_.unary_alpha, VReg(kActivationValue), kActivationScratch, d_.types.compute);
    ret();
  }
  pool_.emit(*this);  // the unary epilogue's constants (nothing when there are none)
}

// The kernel's column blocks and row panels after the prologue, tiled as `plan` says (packed_b:
// with the stack buffer around them).
void BrgemmEmitter::body(const NeonBrgemmPlan& plan) {
  packed_ = plan.packed_b;
  if (packed_) {
    mov_imm(kT0, static_cast<std::uint64_t>(plan.packed_entry_bytes));
    mul(kT1, kCount, kT0);
    sub(sp, sp, kT1, jit::a64::uxtx());
  }
  // Column blocks outside, row panels inside: the panels of one block read the same B columns,
  // which stay in L1 from one panel to the next. Equal consecutive panels (the full ones) are one
  // loop, so that the code grows with the column blocks only (64x64x64: 11 blocks, not 44 tiles).
  const std::int64_t b_col_bytes = plan.math == NeonBrgemmMath::fma_transposed ? in_bytes_ : d_.ldb * in_bytes_;
  for (const NeonColumnBlock& block : plan.blocks) {
    mov_imm(kColOff, static_cast<std::uint64_t>(block.col0 * b_col_bytes));
    mov_imm(kT0, static_cast<std::uint64_t>(static_cast<std::int64_t>(block.col0) * d_.ldc * out_bytes_));
    add(kCTile, kC, kT0);
    mov_imm(kRowOff, 0);
    if (packed_) {
      Label none;
      cmp(kCount, 0);
      b(Cond::le, none);
      pack_b(block);
      bind(none);
    }
    // At most 16 rows of 8 bytes: add immediates.
    row_panels(
        *this, plan.panels, [&](const NeonPanel& panel) { tile(panel, block); },
        [&](const NeonPanel& panel) { return panel.rows(lanes_) * a_row_bytes_; },
        [&](const NeonPanel& panel) { return panel.rows(lanes_) * out_bytes_; });
  }
  if (packed_) {
    mov_imm(kT0, static_cast<std::uint64_t>(plan.packed_entry_bytes));
    mul(kT1, kCount, kT0);
    add(sp, sp, kT1, jit::a64::uxtx());
  }
  packed_ = false;
}

// bf16_mmla packed_b: this batch entry's B columns of the block (x19 = B_i + the block's column
// offset), then the next entry (kEntryB).
void BrgemmEmitter::entry_b(XReg dst) {
  const auto element_shift = static_cast<unsigned>(std::countr_zero(static_cast<unsigned>(in_bytes_)));
  switch (d_.batch) {
    case BrgemmBatch::strided:
      add(dst, kEntryB, kColOff);
      add(kEntryB, kEntryB, kBatchB);
      break;
    case BrgemmBatch::offsets:
      ldr(kT1, post_ptr(kEntryB, 8));
      add(dst, kB, kT1, jit::a64::lsl(element_shift));
      add(dst, dst, kColOff);
      break;
    case BrgemmBatch::addresses:
      ldr(kT1, post_ptr(kEntryB, 8));
      add(dst, kT1, kColOff);
      break;
  }
}

// bf16_mmla packed_b: every batch entry's B columns of the block, zipped into bfmmla's operands at
// [sp]: entry after entry (block bytes each), 4 k step after 4 k step, column pair after column
// pair (16 bytes: the pair's first column's 4 k, then its second's; zero for a missing second
// column and for the k + 2, k + 3 of a last single pair). Called with count > 0.
void BrgemmEmitter::pack_b(const NeonColumnBlock& block) {
  const int pairs_of_cols = (block.cols + 1) / 2;
  const int quads = d_.k / 4;
  const bool single = (d_.k / 2) % 2 == 1;
  const std::int64_t block_bytes = static_cast<std::int64_t>((d_.k + 3) / 4) * pairs_of_cols * 16;
  const VReg t0(0), t1(1);
  mov(kPacked, sp);
  mov(kLeft, kCount);
  mov(kEntryB, d_.batch == BrgemmBatch::strided ? kB : kBatchB);
  mov_imm(kPackStride, static_cast<std::uint64_t>(pairs_of_cols * 16));
  Label entry;
  bind(entry);
  entry_b(b_column(0));
  for (int c = 0; c < pairs_of_cols; ++c) {
    const bool two = 2 * c + 1 < block.cols;
    add(kPackDst, kPacked, c * 16);
    mov_imm(kT0, static_cast<std::uint64_t>(2 * c * d_.ldb * in_bytes_));
    add(kPackSrc0, b_column(0), kT0);
    if (two) add(kPackSrc1, kPackSrc0, kLdb);
    if (quads > 0) {
      Label quad;
      mov_imm(kKLeft, static_cast<std::uint64_t>(quads));
      bind(quad);
      if (two) ldr(DReg(t1.index), post_ptr(kPackSrc1, 8));
      ldr(DReg(t0.index), post_ptr(kPackSrc0, 8));
      if (two) zip1(t0.d2(), t0.d2(), t1.d2());
      st1({t0.d2()}, post_ptr(kPackDst, kPackStride));
      subs(kKLeft, kKLeft, 1);
      b(Cond::ne, quad);
    }
    if (single) {
      if (two) ldr(SReg(t1.index), ptr(kPackSrc1));
      ldr(SReg(t0.index), ptr(kPackSrc0));
      if (two) zip1(t0.d2(), t0.d2(), t1.d2());
      str(QReg(t0.index), ptr(kPackDst));
    }
  }
  mov_imm(kT0, static_cast<std::uint64_t>(block_bytes));
  add(kPacked, kPacked, kT0);
  subs(kLeft, kLeft, 1);
  b(Cond::ne, entry);
}

void BrgemmEmitter::prologue() {
  // The unary epilogue calls its subroutine: the link register is saved (with x29, for 16 bytes).
  save_registers(*this, d_.activation == BrgemmActivation::unary);
  load_args(*this, d_.batch, in_bytes_);
  // A k step of A is a column (lda elements); in VNNI-2 a pair of k is one block of 2 lda.
  const std::int64_t a_step = plan_.math == NeonBrgemmMath::bf16_widen || mmla_ || dot_ ? 2 * d_.lda : d_.lda;
  mov_imm(kLda, static_cast<std::uint64_t>(a_step * in_bytes_));
  mov_imm(kLdb, static_cast<std::uint64_t>(d_.ldb * in_bytes_));
  mov_imm(kLdc, static_cast<std::uint64_t>(d_.ldc * out_bytes_));
  if (io_ && !reload_io_) io_->setup();  // bf16_mmla, bf16_dot: before each use (the k loop's registers)
}

void BrgemmEmitter::epilogue() {
  restore_registers(*this, d_.activation == BrgemmActivation::unary);
  ret();
}

int BrgemmEmitter::rows_of(const NeonPanel& panel, int v) const {
  return (panel.tail != 0 && v == panel.vectors - 1) ? panel.tail : lanes_;
}

void BrgemmEmitter::tile(const NeonPanel& panel, const NeonColumnBlock& block) {
  const int cols = block.cols;
  // The accumulators keep the tile's C across the whole batch: C (beta 1) or 0 first, then every
  // entry's terms, k ascending (brgemm_reference's order).
  const int acc_cols = mmla_ ? (cols + 1) / 2 * 2 : cols;
  if (d_.beta == 0) {
    for (int v = 0; v < panel.vectors; ++v)
      for (int j = 0; j < acc_cols; ++j) movi(acc(v, j, acc_cols).d2(), 0);
  } else {
    if (io_ && reload_io_) io_->setup();
    c_access(true, panel, block);
    if (mmla_) mmla_layout(true, panel, cols);
    if (d_.prefetch == BrgemmPrefetch::next_c) prefetch_next_c(panel, block);
  }
  if (plan_.math == NeonBrgemmMath::bf16_widen) movi(VReg(kBf16Mask).d2(), 0xffff0000ffff0000u);
  // k_split: the other partial sums start at -0 (x + -0 is x, -0 included: a count of 0 keeps C).
  for (int s = 1; s < plan_.k_split; ++s)
    for (int v = 0; v < panel.vectors; ++v)
      for (int j = 0; j < cols; ++j) movi(partial(s, v, j, panel, cols).s4(), 0x80, jit::a64::lsl(24));
  Label store, batch;
  // count 0 (or negative, as on x86): C stays (beta 1) or becomes 0 (beta 0).
  begin_batch(*this, d_.batch, store);
  if (packed_) mov(kPacked, sp);
  bind(batch);
  entry_pointers(block);
  k_loop(panel, cols);
  subs(kLeft, kLeft, 1);
  b(Cond::ne, batch);
  bind(store);
  add_partials(panel, cols);
  if (mmla_) mmla_layout(false, panel, cols);
  if (reload_io_ && io_) io_->setup();
  tile_epilogue(panel, block);
  if (reload_io_ && io_ && d_.activation == BrgemmActivation::unary) io_->setup();
  c_access(false, panel, block);
}

// Partial sum s of accumulator (v, j) (k_split): the tile's accumulators s times over; 0 is acc(v, j).
VReg BrgemmEmitter::partial(int s, int v, int j, const NeonPanel& panel, int cols) const {
  return VReg(kFirstAcc + static_cast<unsigned>((s * panel.vectors + v) * cols + j));
}

// k_split: the partial sums into partial 0, (0 + 1) + (2 + 3) (fp32 additions: the accumulators
// hold fp32 values, whichever instruction made them).
void BrgemmEmitter::add_partials(const NeonPanel& panel, int cols) {
  for (int v = 0; v < panel.vectors; ++v) {
    for (int j = 0; j < cols; ++j) {
      const VReg p0 = partial(0, v, j, panel, cols);
      if (plan_.k_split == 4) {
        const VReg p2 = partial(2, v, j, panel, cols);
        fadd(p2.s4(), p2.s4(), partial(3, v, j, panel, cols).s4());
        fadd(p0.s4(), p0.s4(), partial(1, v, j, panel, cols).s4());
        fadd(p0.s4(), p0.s4(), p2.s4());
      } else if (plan_.k_split == 2) {
        fadd(p0.s4(), p0.s4(), partial(1, v, j, panel, cols).s4());
      }
    }
  }
}

// bf16_mmla: accumulator (v, j) of a tile with `cols` columns (its registers hold an even count).
VReg BrgemmEmitter::acc_of(int v, int j, int cols) const { return acc(v, j, mmla_ ? (cols + 1) / 2 * 2 : cols); }

// bf16_mmla: the accumulators from columns (C's 4 rows of vector v in (v, 2c) and (v, 2c + 1)) to
// bfmmla's 2x2 blocks (rows 0, 1 of columns 2c, 2c + 1 in (v, 2c), rows 2, 3 in (v, 2c + 1)):
// zip1 / zip2 (.4s); back with uzp1 / uzp2. Bits move unchanged.
void BrgemmEmitter::mmla_layout(bool to_blocks, const NeonPanel& panel, int cols) {
  const VReg t(kMmlaTemp);
  for (int v = 0; v < panel.vectors; ++v) {
    for (int j = 0; j < cols; j += 2) {
      const VReg x = acc_of(v, j, cols), y = acc_of(v, j + 1, cols);
      if (to_blocks) {
        zip1(t.s4(), x.s4(), y.s4());
        zip2(y.s4(), x.s4(), y.s4());
      } else {
        uzp1(t.s4(), x.s4(), y.s4());
        uzp2(y.s4(), x.s4(), y.s4());
      }
      mov(x.b16(), t.b16());
    }
  }
}

// This entry's A rows of the panel (kAPtr) and B columns of the block (x19..; b_transposed: x19,
// the block's first column in B's row 0), then the next entry.
void BrgemmEmitter::entry_pointers(const NeonColumnBlock& block) {
  a64_brgemm::entry_pointers(*this, d_.batch, in_bytes_);
  if (plan_.math == NeonBrgemmMath::fma_transposed) return;
  if (mmla_) {
    // A's pair p + 1, and the first column of each column pair (2 ldb apart).
    add(kAPtr2, kAPtr, kLda);
    if (packed_) return;  // B: the packed buffer, entry after entry
    for (int j = 1; 2 * j < block.cols; ++j) add(b_column(j), b_column(j - 1), kLdb, jit::a64::lsl(1));
    return;
  }
  for (int j = 1; j < block.cols; ++j) add(b_column(j), b_column(j - 1), kLdb);
}

// One batch entry's k: a loop over groups of steps (fma: `lanes` k, one q of each B column;
// fma_transposed: 4 k; bf16: 4 pairs of k, one q of each B column), then the rest.
void BrgemmEmitter::k_loop(const NeonPanel& panel, int cols) {
  const bool bf16 = plan_.math == NeonBrgemmMath::bf16_widen || mmla_ || dot_;
  const int steps = bf16 ? d_.k / 2 : d_.k;
  const int group = plan_.math == NeonBrgemmMath::fma ? lanes_ : 4;
  auto emit_steps = [&](int count) {
    switch (plan_.math) {
      case NeonBrgemmMath::fma:
      case NeonBrgemmMath::bf16_dot: k_steps(panel, cols, count); break;
      case NeonBrgemmMath::fma_transposed: k_steps_transposed(panel, cols, count); break;
      case NeonBrgemmMath::bf16_widen: k_pairs_bf16(panel, cols, count); break;
      case NeonBrgemmMath::bf16_mmla:
        packed_ ? k_quads_packed(panel, cols, count) : k_quads_mmla(panel, cols, count);
        break;
    }
  };
  const int groups = steps / group, rest = steps % group;
  if (groups >= 2) {
    Label loop;
    mov_imm(kKLeft, static_cast<std::uint64_t>(groups));
    bind(loop);
    emit_steps(group);
    subs(kKLeft, kKLeft, 1);
    b(Cond::ne, loop);
  } else if (groups == 1) {
    emit_steps(group);
  }
  if (rest > 0) emit_steps(rest);
}

// acc += a * b[lane]; bf16_dot: acc (4 fp32 lanes) += a's row pairs . b's pair `lane` (bfdot).
void BrgemmEmitter::fma(unsigned acc_reg, unsigned a, unsigned b, int lane) {
  if (dot_) {
    bfdot(VReg(acc_reg).s4(), VReg(a).h8(), VReg(b).h2(static_cast<unsigned>(lane)));
  } else if (lanes_ == 2) {
    fmla(VReg(acc_reg).d2(), VReg(a).d2(), VReg(b).d(static_cast<unsigned>(lane)));
  } else {
    fmla(VReg(acc_reg).s4(), VReg(a).s4(), VReg(b).s(static_cast<unsigned>(lane)));
  }
}

// `steps` consecutive k (`lanes`, or the k tail's 1..lanes-1): B(k.., j) of every column in one
// register each (B is column-major: the k of a column are contiguous), then for each k the A
// column's vectors, each multiplied by the B lane of every column. The B pointers advance past these
// k; so does kAPtr, one column of A per k. bf16_dot: a step is a pair of k (4 bytes of a column, 4
// rows x 4 bytes of VNNI-2 A).
void BrgemmEmitter::k_steps(const NeonPanel& panel, int cols, int steps) {
  const int step_bytes = dot_ ? 2 * in_bytes_ : in_bytes_;
  for (int j = 0; j < cols; ++j) {
    const auto bj = static_cast<unsigned>(j);
    switch (steps * step_bytes) {
      case 16: ldr(QReg(bj), post_ptr(b_column(j), 16)); break;
      case 8: ldr(DReg(bj), post_ptr(b_column(j), 8)); break;
      case 4: ldr(SReg(bj), ptr(b_column(j))); break;  // only in the tail: no advance needed
      default:  // 12: two lanes, then the third, never reading past B's column
        ldr(DReg(bj), post_ptr(b_column(j), 8));
        ld1(VReg(bj).s(2), ptr(b_column(j)));
        break;
    }
  }
  for (int kk = 0; kk < steps; ++kk) {
    for (int v = 0; v < panel.vectors; ++v) {
      const unsigned a = kFirstA + next_a_;
      next_a_ ^= 1;  // two A registers alternated: the next load need not wait for this one's FMAs
      load_a(a, panel, v);
      // k_split (bf16_dot): step kk of a group of 4 into partial kk % k_split (4 % k_split == 0: the
      // same partial for the same pair of every group; a tail's pairs continue the pattern).
      const int s = kk % plan_.k_split;
      for (int j = 0; j < cols; ++j) fma(partial(s, v, j, panel, cols).index, a, static_cast<unsigned>(j), kk);
    }
    add(kAPtr, kAPtr, kLda);
  }
}

// b_transposed: `steps` k, each the tile's row of B (its `cols` columns are contiguous at x19: one
// register per `lanes` columns, the last one partial; two sets alternated), then the A column's
// vectors, each multiplied by the lane of every column. x19 moves to B's next row (ldb), kAPtr to
// A's next column.
void BrgemmEmitter::k_steps_transposed(const NeonPanel& panel, int cols, int steps) {
  const int row_bytes = cols * in_bytes_;
  const int registers = (row_bytes + 15) / 16;
  for (int kk = 0; kk < steps; ++kk) {
    const unsigned first_b = next_b_ * 3;
    next_b_ ^= 1;
    for (int r = 0; r < registers; ++r) {
      load_bytes(first_b + static_cast<unsigned>(r), b_column(0), 16 * r, std::min(16, row_bytes - 16 * r));
    }
    add(b_column(0), b_column(0), kLdb);
    for (int v = 0; v < panel.vectors; ++v) {
      const unsigned a = kFirstA + next_a_;
      next_a_ ^= 1;
      load_a(a, panel, v);
      for (int j = 0; j < cols; ++j) {
        fma(acc(v, j, cols).index, a, first_b + static_cast<unsigned>(j / lanes_), j % lanes_);
      }
    }
    add(kAPtr, kAPtr, kLda);
  }
}

// bf16, `pairs` pairs of k (4, or the tail's 1-3): each B column's pairs in one load, widened into
// its even k (bits << 16) and its odd k (bits & 0xffff0000); then per pair and A vector (4 rows of
// VNNI-2: each 32-bit lane a row's even k in its low half, odd k in its high half) the odd k's FMAs,
// then the even k's (brgemm_reference's order). kAPtr moves to A's next pair block.
void BrgemmEmitter::k_pairs_bf16(const NeonPanel& panel, int cols, int pairs) {
  const VReg mask(kBf16Mask);
  for (int j = 0; j < cols; ++j) {
    const VReg even(2 * static_cast<unsigned>(j)), odd(2 * static_cast<unsigned>(j) + 1);
    switch (pairs) {
      case 4: ldr(QReg(even.index), post_ptr(b_column(j), 16)); break;
      case 2: ldr(DReg(even.index), ptr(b_column(j))); break;  // only in the tail: no advance needed
      case 1: ldr(SReg(even.index), ptr(b_column(j))); break;
      default:
        ldr(DReg(even.index), ptr(b_column(j)));
        add(kT0, b_column(j), 8);
        ld1(even.s(2), ptr(kT0));
        break;
    }
    and_(odd.b16(), even.b16(), mask.b16());
    shl(even.s4(), even.s4(), 16);
  }
  for (int p = 0; p < pairs; ++p) {
    for (int v = 0; v < panel.vectors; ++v) {
      const VReg odd(kBf16FirstA + 2 * next_a_), even(kBf16FirstA + 2 * next_a_ + 1);
      next_a_ ^= 1;
      load_a(even.index, panel, v);
      and_(odd.b16(), even.b16(), mask.b16());
      shl(even.s4(), even.s4(), 16);
      for (int j = 0; j < cols; ++j) fma(acc(v, j, cols).index, odd.index, 2 * static_cast<unsigned>(j) + 1, p);
      for (int j = 0; j < cols; ++j) fma(acc(v, j, cols).index, even.index, 2 * static_cast<unsigned>(j), p);
    }
    add(kAPtr, kAPtr, kLda);
  }
}

// bf16_mmla: A vector v's (4 rows) pairs p (kAPtr) and p + 1 (kAPtr2; zero when `single`, the
// entry's last pair alone) zipped into bfmmla's operands, rows (0, 1) in v7 and (2, 3) in v6.
// Returns whether there are rows 2, 3: a vector of 1 or 2 rows (m's tail) has none, and their
// blocks are never stored.
bool BrgemmEmitter::mmla_a_operands(const NeonPanel& panel, int v, bool single) {
  const VReg a0(kMmlaA0), a1(kMmlaA1), z(kMmlaZip);
  const int bytes = rows_of(panel, v) * a_row_bytes_;
  load_bytes(a0.index, kAPtr, v * 16, bytes);
  if (single) {
    movi(a1.d2(), 0);
  } else {
    load_bytes(a1.index, kAPtr2, v * 16, bytes);
  }
  const bool upper = rows_of(panel, v) > 2;
  zip1(z.s4(), a0.s4(), a1.s4());
  if (upper) zip2(a1.s4(), a0.s4(), a1.s4());
  return upper;
}

// bf16_mmla, `pairs` pairs of k (4, or the tail's 1-3), two at a time (4 k: a bfmmla step; a last
// single pair with zero k + 2, k + 3): per column pair its 4 k (two d loads, zip1 .2d; a lone last
// column: one d load, its neighbour zero), then per A vector (4 rows) the pairs p and p + 1 (q loads
// at kAPtr and kAPtr2), zip1 / zip2 into rows (0, 1) and (2, 3), and one bfmmla per block.
// kAPtr, kAPtr2 and the B pointers move past the 4 k (the single pair is the entry's last).
void BrgemmEmitter::k_quads_mmla(const NeonPanel& panel, int cols, int pairs) {
  const VReg t(kMmlaTemp), a1(kMmlaA1), z(kMmlaZip);
  for (int q = 0; 2 * q < pairs; ++q) {
    const bool single = 2 * q + 1 == pairs;
    for (int c = 0; 2 * c < cols; ++c) {
      const VReg bc(kMmlaFirstB + static_cast<unsigned>(c));
      const bool two = 2 * c + 1 < cols;
      if (single) {
        if (two) ldr(SReg(t.index), ptr(b_column(c), kLdb));
        ldr(SReg(bc.index), ptr(b_column(c)));
      } else {
        if (two) ldr(DReg(t.index), ptr(b_column(c), kLdb));
        ldr(DReg(bc.index), post_ptr(b_column(c), 8));
      }
      if (two) zip1(bc.d2(), bc.d2(), t.d2());
    }
    for (int v = 0; v < panel.vectors; ++v) {
      const bool upper = mmla_a_operands(panel, v, single);
      for (int c = 0; 2 * c < cols; ++c) {
        const VReg bc(kMmlaFirstB + static_cast<unsigned>(c));
        bfmmla(acc_of(v, 2 * c, cols).s4(), z.h8(), bc.h8());
        if (upper) bfmmla(acc_of(v, 2 * c + 1, cols).s4(), a1.h8(), bc.h8());
      }
    }
    if (!single) {
      add(kAPtr, kAPtr, kLda, jit::a64::lsl(1));
      add(kAPtr2, kAPtr2, kLda, jit::a64::lsl(1));
    }
  }
}

// bf16_mmla packed_b, `pairs` pairs of k as k_quads_mmla, one vector (4 rows) of A: its pairs p and
// p + 1 zipped into rows (0, 1) and (2, 3), then per column pair its operand from the packed buffer
// (a q load at an offset from kPacked, which moves past them at the end: post-indexed loads would
// chain on the pointer, one a cycle; four registers in turn) and its two bfmmla.
void BrgemmEmitter::k_quads_packed(const NeonPanel& panel, int cols, int pairs) {
  const VReg a1(kMmlaA1), z(kMmlaZip);
  const int pairs_of_cols = (cols + 1) / 2;
  for (int q = 0; 2 * q < pairs; ++q) {
    const bool single = 2 * q + 1 == pairs;
    for (int v = 0; v < panel.vectors; ++v) {  // one (plan: panel_vectors 1)
      const bool upper = mmla_a_operands(panel, v, single);
      for (int c = 0; 2 * c < cols; ++c) {
        const VReg bc(kMmlaFirstB + static_cast<unsigned>(c % 4));
        ldr(QReg(bc.index), ptr(kPacked, (q * pairs_of_cols + c) * 16));
        bfmmla(acc_of(v, 2 * c, cols).s4(), z.h8(), bc.h8());
        if (upper) bfmmla(acc_of(v, 2 * c + 1, cols).s4(), a1.h8(), bc.h8());
      }
    }
    if (!single) {
      add(kAPtr, kAPtr, kLda, jit::a64::lsl(1));
      add(kAPtr2, kAPtr2, kLda, jit::a64::lsl(1));
    }
  }
  add(kPacked, kPacked, (pairs + 1) / 2 * pairs_of_cols * 16);
}

// `bytes` (4, 8, 12 or 16) at [base + offset] into v<reg>'s low bytes, never reading past them.
void BrgemmEmitter::load_bytes(unsigned reg, XReg base, std::int64_t offset, int bytes) {
  switch (bytes) {
    case 16: ldr(QReg(reg), ptr(base, offset)); break;
    case 8: ldr(DReg(reg), ptr(base, offset)); break;
    case 4: ldr(SReg(reg), ptr(base, offset)); break;
    default:
      ldr(DReg(reg), ptr(base, offset));
      add(kT0, base, offset + 8);
      ld1(VReg(reg).s(2), ptr(kT0));
      break;
  }
}

// A(rows of vector v, k step) into v<reg>: a q load, or for the panel's partial vector its rows only
// (the rows past m may be past the end of A).
void BrgemmEmitter::load_a(unsigned reg, const NeonPanel& panel, int v) {
  load_bytes(reg, kAPtr, v * 16, rows_of(panel, v) * a_row_bytes_);
}

// BrgemmPrefetch::next_c (brgemm.hpp): the C of the next column block, `cols` columns from the
// tile's column col0 + cols on (past the last block: past C, where the caller's next C is), this
// panel's rows. c_access left kCCol at the tile's last column. The column's alignment is unknown,
// so besides its first byte its last one gets a prefetch (the line a misaligned column spills
// into); the panel's rows span at most 64 bytes. prfm never faults, whatever the address.
void BrgemmEmitter::prefetch_next_c(const NeonPanel& panel, const NeonColumnBlock& block) {
  const int bytes = panel.rows(lanes_) * out_bytes_;
  for (int j = 0; j < block.cols; ++j) {
    add(kCCol, kCCol, kLdc);
    prfm(Prefetch::pldl1keep, ptr(kCCol));
    if (bytes > 4) prfum(Prefetch::pldl1keep, ptr(kCCol, bytes - 1));
  }
}

// Bias and activation on the accumulators, before the store (brgemm_reference's order: the sum,
// + bias, then the activation), one accumulator after the other with v0..v7 as scratch.
void BrgemmEmitter::tile_epilogue(const NeonPanel& panel, const NeonColumnBlock& block) {
  const int cols = block.cols;
  const bool f64 = lanes_ == 2;
  const VReg bias(kBiasScratch);
  auto add_bias = [&](VReg x) { f64 ? fadd(x.d2(), x.d2(), bias.d2()) : fadd(x.s4(), x.s4(), bias.s4()); };
  if (d_.bias == BrgemmBias::per_row) {
    ldr(kT1, ptr(kArgs, offsetof(BrgemmArgs, bias)));
    // A's row bytes are the bias's (f32, f64; bf16 inputs with an f32 C: 4), or twice (bf16 C).
    if (io_) {
      add(kT1, kT1, kRowOff, jit::a64::lsr(1));
    } else {
      add(kT1, kT1, kRowOff);
    }
    for (int v = 0; v < panel.vectors; ++v) {
      if (io_) {
        io_->load(bias, kT1, v * 8, rows_of(panel, v));
      } else {
        load_bytes(bias.index, kT1, v * 16, rows_of(panel, v) * out_bytes_);
      }
      for (int j = 0; j < cols; ++j) add_bias(acc_of(v, j, cols));
    }
  } else if (d_.bias == BrgemmBias::per_col) {
    ldr(kT1, ptr(kArgs, offsetof(BrgemmArgs, bias)));
    mov_imm(kT0, static_cast<std::uint64_t>(block.col0 * out_bytes_));
    add(kT1, kT1, kT0);
    for (int j = 0; j < cols; ++j) {
      if (io_) {
        io_->load(bias, kT1, j * 2, 1);
        dup(bias.s4(), bias.s(0));
      } else {
        f64 ? ld1r(bias.d2(), post_ptr(kT1, 8)) : ld1r(bias.s4(), post_ptr(kT1, 4));
      }
      for (int v = 0; v < panel.vectors; ++v) add_bias(acc_of(v, j, cols));
    }
  }
  if (d_.activation == BrgemmActivation::relu) {
    // x <= 0 (-0 included; false for NaN) clears x to +0: exactly relu's select.
    const VReg mask(kReluScratch);
    for (int j = 0; j < cols; ++j) {
      for (int v = 0; v < panel.vectors; ++v) {
        const VReg x = acc_of(v, j, cols);
        f64 ? fcmle(mask.d2(), x.d2(), 0.0) : fcmle(mask.s4(), x.s4(), 0.0);
        bic(x.b16(), x.b16(), mask.b16());
      }
    }
  } else if (d_.activation == BrgemmActivation::unary) {
    // The unary TPPs' own sequence (activation_emit.hpp), so that a fused epilogue and a separate
    // unary kernel give the same bits: the subroutine after the kernel, on v7.
    const VReg value(kActivationValue);
    for (int j = 0; j < cols; ++j) {
      for (int v = 0; v < panel.vectors; ++v) {
        mov(value.b16(), acc_of(v, j, cols).b16());
        bl(activation_);
        mov(acc_of(v, j, cols).b16(), value.b16());
      }
    }
  }
}

// The tile's C into (load) or from (store) the accumulators, column by column; the panel's partial
// vector moves only its rows (C's rows past m may be past its end, or another tile's).
void BrgemmEmitter::c_access(bool load, const NeonPanel& panel, const NeonColumnBlock& block) {
  if (io_) {
    c_access_bf16(load, panel, block);
    return;
  }
  const int cols = block.cols;
  mov(kCCol, kCTile);
  for (int j = 0; j < cols; ++j) {
    for (int v = 0; v < panel.vectors; ++v) {
      const unsigned r = acc_of(v, j, cols).index;
      const std::int64_t offset = v * 16;
      switch (rows_of(panel, v) * out_bytes_) {
        case 16: load ? ldr(QReg(r), ptr(kCCol, offset)) : str(QReg(r), ptr(kCCol, offset)); break;
        case 8: load ? ldr(DReg(r), ptr(kCCol, offset)) : str(DReg(r), ptr(kCCol, offset)); break;
        case 4: load ? ldr(SReg(r), ptr(kCCol, offset)) : str(SReg(r), ptr(kCCol, offset)); break;
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

namespace weft::tpp::neon {

// A bf16 C through ElementIo: loads widened to f32, stores rounded as jit::to_bfloat16.
void BrgemmEmitter::c_access_bf16(bool load, const NeonPanel& panel, const NeonColumnBlock& block) {
  const int cols = block.cols;
  mov(kCCol, kCTile);
  for (int j = 0; j < cols; ++j) {
    for (int v = 0; v < panel.vectors; ++v) {
      const VReg r = acc_of(v, j, cols);
      if (load) {
        io_->load(r, kCCol, v * 8, rows_of(panel, v));
      } else {
        io_->store(kCCol, v * 8, r, rows_of(panel, v));
      }
    }
    if (j + 1 < cols) add(kCCol, kCCol, kLdc);
  }
}

}  // namespace weft::tpp::neon
