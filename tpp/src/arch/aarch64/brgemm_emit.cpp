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

VReg acc(int v, int j, int cols) { return VReg(kFirstAcc + static_cast<unsigned>(v * cols + j)); }

}  // namespace

void check_neon_brgemm_scope(const BrgemmDesc& d) { validate(d); }

BrgemmEmitter::BrgemmEmitter(const BrgemmDesc& d) : d_(d) {
  check_neon_brgemm_scope(d);
  plan_ = plan_neon_brgemm(d);
  lanes_ = plan_.lanes;
  in_bytes_ = static_cast<int>(jit::size_of(d.types.in));
  out_bytes_ = static_cast<int>(jit::size_of(d.types.out));
  a_row_bytes_ = plan_.math == NeonBrgemmMath::bf16_widen ? 2 * in_bytes_ : in_bytes_;
  if (d.types.out == DataType::bf16) {
    io_ = std::make_unique<ElementIo>(*this, DataType::bf16, DataType::f32, kT0, kIoConstants, kIoScratch);
  }
  for (const NeonColumnBlock& block : plan_.blocks) {
    for (const NeonPanel& panel : plan_.panels) {
      if (tile_registers(plan_.math, lanes_, panel.vectors, block.cols) > kVectorRegisters) {
        throw Error("neon brgemm: a tile of " + std::to_string(panel.vectors) + " x " + std::to_string(block.cols) +
                    " needs more than 32 vector registers");
      }
    }
  }
  prologue();
  // Column blocks outside, row panels inside: the panels of one block read the same B columns,
  // which stay in L1 from one panel to the next. Equal consecutive panels (the full ones) are one
  // loop, so that the code grows with the column blocks only (64x64x64: 11 blocks, not 44 tiles).
  const std::int64_t b_col_bytes = plan_.math == NeonBrgemmMath::fma_transposed ? in_bytes_ : d_.ldb * in_bytes_;
  for (const NeonColumnBlock& block : plan_.blocks) {
    mov_imm(kColOff, static_cast<std::uint64_t>(block.col0 * b_col_bytes));
    mov_imm(kT0, static_cast<std::uint64_t>(static_cast<std::int64_t>(block.col0) * d_.ldc * out_bytes_));
    add(kCTile, kC, kT0);
    mov_imm(kRowOff, 0);
    for (std::size_t p = 0; p < plan_.panels.size();) {
      const NeonPanel& panel = plan_.panels[p];
      std::size_t run = 1;
      while (p + run < plan_.panels.size() && plan_.panels[p + run].vectors == panel.vectors &&
             plan_.panels[p + run].tail == panel.tail)
        ++run;
      const bool last = p + run == plan_.panels.size();
      // At most 16 rows of 8 bytes: add immediates.
      const int a_panel_bytes = panel.rows(lanes_) * a_row_bytes_, c_panel_bytes = panel.rows(lanes_) * out_bytes_;
      if (run == 1) {
        tile(panel, block);
        if (!last) {
          add(kRowOff, kRowOff, a_panel_bytes);
          add(kCTile, kCTile, c_panel_bytes);
        }
      } else {
        Label panels;
        mov_imm(kPanelsLeft, run);
        bind(panels);
        tile(panel, block);
        add(kRowOff, kRowOff, a_panel_bytes);
        add(kCTile, kCTile, c_panel_bytes);
        subs(kPanelsLeft, kPanelsLeft, 1);
        b(Cond::ne, panels);
      }
      p += run;
    }
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

void BrgemmEmitter::prologue() {
  // The unary epilogue calls its subroutine: the link register is saved (with x29, for 16 bytes).
  save_registers(*this, d_.activation == BrgemmActivation::unary);
  load_args(*this, d_.batch, in_bytes_);
  // A k step of A is a column (lda elements); in VNNI-2 a pair of k is one block of 2 lda.
  const std::int64_t a_step = plan_.math == NeonBrgemmMath::bf16_widen ? 2 * d_.lda : d_.lda;
  mov_imm(kLda, static_cast<std::uint64_t>(a_step * in_bytes_));
  mov_imm(kLdb, static_cast<std::uint64_t>(d_.ldb * in_bytes_));
  mov_imm(kLdc, static_cast<std::uint64_t>(d_.ldc * out_bytes_));
  if (io_) io_->setup();
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
  if (d_.beta == 0) {
    for (int v = 0; v < panel.vectors; ++v)
      for (int j = 0; j < cols; ++j) movi(acc(v, j, cols).d2(), 0);
  } else {
    c_access(true, panel, block);
    if (d_.prefetch == BrgemmPrefetch::next_c) prefetch_next_c(panel, block);
  }
  if (plan_.math == NeonBrgemmMath::bf16_widen) movi(VReg(kBf16Mask).d2(), 0xffff0000ffff0000u);
  Label store, batch;
  begin_batch(*this, d_.batch, store);
  bind(batch);
  entry_pointers(block);
  k_loop(panel, cols);
  subs(kLeft, kLeft, 1);
  b(Cond::ne, batch);
  bind(store);
  tile_epilogue(panel, block);
  c_access(false, panel, block);
}

// This entry's A rows of the panel (kAPtr) and B columns of the block (x19..; b_transposed: x19,
// the block's first column in B's row 0), then the next entry.
void BrgemmEmitter::entry_pointers(const NeonColumnBlock& block) {
  a64_brgemm::entry_pointers(*this, d_.batch, in_bytes_);
  if (plan_.math == NeonBrgemmMath::fma_transposed) return;
  for (int j = 1; j < block.cols; ++j) add(b_column(j), b_column(j - 1), kLdb);
}

// One batch entry's k: a loop over groups of steps (fma: `lanes` k, one q of each B column;
// fma_transposed: 4 k; bf16: 4 pairs of k, one q of each B column), then the rest.
void BrgemmEmitter::k_loop(const NeonPanel& panel, int cols) {
  const bool bf16 = plan_.math == NeonBrgemmMath::bf16_widen;
  const int steps = bf16 ? d_.k / 2 : d_.k;
  const int group = plan_.math == NeonBrgemmMath::fma ? lanes_ : 4;
  auto emit_steps = [&](int count) {
    switch (plan_.math) {
      case NeonBrgemmMath::fma: k_steps(panel, cols, count); break;
      case NeonBrgemmMath::fma_transposed: k_steps_transposed(panel, cols, count); break;
      case NeonBrgemmMath::bf16_widen: k_pairs_bf16(panel, cols, count); break;
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

void BrgemmEmitter::fma(unsigned acc_reg, unsigned a, unsigned b, int lane) {
  if (lanes_ == 2) {
    fmla(VReg(acc_reg).d2(), VReg(a).d2(), VReg(b).d(static_cast<unsigned>(lane)));
  } else {
    fmla(VReg(acc_reg).s4(), VReg(a).s4(), VReg(b).s(static_cast<unsigned>(lane)));
  }
}

// `steps` consecutive k (`lanes`, or the k tail's 1..lanes-1): B(k.., j) of every column in one
// register each (B is column-major: the k of a column are contiguous), then for each k the A
// column's vectors, each multiplied by the B lane of every column. The B pointers advance past these
// k; so does kAPtr, one column of A per k.
void BrgemmEmitter::k_steps(const NeonPanel& panel, int cols, int steps) {
  for (int j = 0; j < cols; ++j) {
    const auto bj = static_cast<unsigned>(j);
    switch (steps * in_bytes_) {
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
      for (int j = 0; j < cols; ++j) fma(acc(v, j, cols).index, a, static_cast<unsigned>(j), kk);
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
      for (int j = 0; j < cols; ++j) add_bias(acc(v, j, cols));
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
      for (int v = 0; v < panel.vectors; ++v) add_bias(acc(v, j, cols));
    }
  }
  if (d_.activation == BrgemmActivation::relu) {
    // x <= 0 (-0 included; false for NaN) clears x to +0: exactly relu's select.
    const VReg mask(kReluScratch);
    for (int j = 0; j < cols; ++j) {
      for (int v = 0; v < panel.vectors; ++v) {
        const VReg x = acc(v, j, cols);
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
        mov(value.b16(), acc(v, j, cols).b16());
        bl(activation_);
        mov(acc(v, j, cols).b16(), value.b16());
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
      const unsigned r = acc(v, j, cols).index;
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
      const VReg r = acc(v, j, cols);
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
