#include "sve_brgemm_emit.hpp"

#include <cstddef>
#include <cstdint>

#include "weft/jit/data_type.hpp"
#include "weft/jit/error.hpp"

namespace weft::tpp::sve {
namespace {

using namespace jit::a64;
using namespace a64_brgemm;  // the general registers (brgemm_frame.hpp)

// Vector registers: z8.. the accumulators, vector-major (accumulator (v, j) of a tile with `cols`
// columns is z8 + v * cols + j; the low 64 bits of z8-z15 are callee-saved: the prologue saves
// d8-d15). Indexed (B column-major): z0..z(cols-1) B's columns (128 bits of k each), two A registers
// in turn, z6/z7 (up to 6 columns) or z30/z31 (7-8 columns). Broadcast (B transposed): z0..z3 the A
// vectors of a k step, z4..z7 B's broadcasts in rotation. The epilogue uses z4 (the bias) and z5
// (+0 for relu), and v0..v5, v7 for the unary op. Predicates: p0 all lanes, p1 m's tail (the last
// vector of the last panel), p2 relu's mask, p3 the unary pass's last rows, p4 the k rest's B
// elements (indexed).
constexpr unsigned kFirstAcc = 8, kFirstB = 4, kBRegisters = 4;
constexpr ZReg kBias = z4, kZero = z5;
constexpr PReg kAll = p0, kTail = p1, kMask = p2, kUnaryTail = p3, kKRest = p4;
// The unary epilogue's subroutine: v7 = op(v7), v0..v5 its scratch, x17 its pool base.
constexpr unsigned kActivationValue = 7;
constexpr VReg kActivationScratch[] = {v0, v1, v2, v3, v4, v5};

// B's column j of the tile (column-major B): x19..x24, then (a kernel of one m panel of 1-3
// vectors, sve_brgemm_plan.hpp: up to 8 columns) kCCol and kPanelsLeft, free in its k loop (used
// outside the batch loop, or not at all with one panel).
constexpr XReg kBColumns[kMaxIndexedCols] = {x19, x20, x21, x22, x23, x24, kCCol, kPanelsLeft};
static_assert(kBColumns[0].index == kFirstBColumn, "entry_pointers sets x19");
XReg b_col(int j) { return kBColumns[j]; }

ZReg acc(int v, int j, int cols) { return ZReg(kFirstAcc + static_cast<unsigned>(v * cols + j)); }
ZReg a_vector(int v) { return ZReg(static_cast<unsigned>(v)); }

}  // namespace

BrgemmEmitter::BrgemmEmitter(const BrgemmDesc& d, int vector_bytes) : d_(d) {
  plan_ = plan_sve_brgemm(d, vector_bytes);
  // Columns past x24 take registers that a loop over several panels would need.
  if (plan_.indexed && plan_.max_cols > kPanelCols && plan_.panels.size() != 1) {
    throw Error("sve brgemm: wide blocks need one panel");
  }
  saves_link_ = d.activation == BrgemmActivation::unary;
  f64_ = d.types.compute == jit::DataType::f64;
  bytes_ = f64_ ? 8 : 4;
  prologue();
  // Column blocks outside, row panels inside (the panels of one block read the same B columns);
  // equal consecutive panels (the full ones) are one loop, as in the Neon emitter.
  const std::int64_t b_col_bytes = d_.b_transposed ? bytes_ : d_.ldb * bytes_;
  const int lanes = plan_.lanes;
  for (const SveColumnBlock& block : plan_.blocks) {
    mov_imm(kColOff, static_cast<std::uint64_t>(block.col0 * b_col_bytes));
    mov_imm(kT0, static_cast<std::uint64_t>(static_cast<std::int64_t>(block.col0) * d_.ldc * bytes_));
    add(kCTile, kC, kT0);
    mov_imm(kRowOff, 0);
    // At most 4 vectors x 64 bytes per panel: add immediates.
    auto panel_bytes = [&](const SvePanel& panel) { return panel.rows(lanes) * bytes_; };
    row_panels(*this, plan_.panels, [&](const SvePanel& panel) { tile(panel, block); }, panel_bytes, panel_bytes);
  }
  restore_registers(*this, saves_link_);
  ret();
  if (d_.activation == BrgemmActivation::unary) {
    // v7 = op(v7), clobbering v0..v5 and x17 (the pool's address: adr reaches the pool right
    // after this subroutine whatever the kernel's size).
    bind(activation_);
    pool_.load_base(*this, kT1);
    neon::ActivationEmitter(*this, pool_, kT1)
        .emit(d_.unary, d_.unary_alpha, VReg(kActivationValue), kActivationScratch, d_.types.compute);
    ret();
  }
  pool_.emit(*this);  // the unary epilogue's constants (nothing when there are none)
}

void BrgemmEmitter::prologue() {
  save_registers(*this, saves_link_);
  load_args(*this, d_.batch, bytes_);
  mov_imm(kLda, static_cast<std::uint64_t>(d_.lda * bytes_));
  mov_imm(kLdb, static_cast<std::uint64_t>(d_.ldb * bytes_));
  mov_imm(kLdc, static_cast<std::uint64_t>(d_.ldc * bytes_));
  // The predicates, once for the whole kernel: every panel's full vectors take p0, the last
  // panel's partial one p1 (its first `tail` lanes).
  f64_ ? ptrue(kAll.d()) : ptrue(kAll.s());
  if (plan_.tail != 0) {
    mov_imm(kT0, static_cast<std::uint64_t>(plan_.tail));
    f64_ ? whilelt(kTail.d(), xzr, kT0) : whilelt(kTail.s(), xzr, kT0);
  }
  // Indexed: the k rest's B elements (the first k % k_group of a column's 128 bits) under p4.
  if (plan_.indexed && d_.k % plan_.k_group != 0) {
    mov_imm(kT0, static_cast<std::uint64_t>(d_.k % plan_.k_group));
    f64_ ? whilelt(kKRest.d(), xzr, kT0) : whilelt(kKRest.s(), xzr, kT0);
  }
  // The unary pass moves C 4 rows at a time (f32); the last panel's last rows%4 under p3.
  if (d_.activation == BrgemmActivation::unary && plan_.tail % 4 != 0) {
    mov_imm(kT0, static_cast<std::uint64_t>(plan_.tail % 4));
    whilelt(kUnaryTail.s(), xzr, kT0);
  }
}

PReg BrgemmEmitter::predicate(const SvePanel& panel, int v) const {
  return (panel.tail != 0 && v == panel.vectors - 1) ? kTail : kAll;
}

void BrgemmEmitter::load(ZReg t, PReg g, XReg base, int vl_index) {
  f64_ ? ld1d(t.d(), g.z(), ptr_vl(base, vl_index)) : ld1w(t.s(), g.z(), ptr_vl(base, vl_index));
}

void BrgemmEmitter::store(ZReg t, PReg g, XReg base, int vl_index) {
  f64_ ? st1d(t.d(), g, ptr_vl(base, vl_index)) : st1w(t.s(), g, ptr_vl(base, vl_index));
}

void BrgemmEmitter::broadcast(ZReg t, XReg base, int offset_bytes) {
  f64_ ? ld1rd(t.d(), kAll.z(), ptr(base, offset_bytes)) : ld1rw(t.s(), kAll.z(), ptr(base, offset_bytes));
}

void BrgemmEmitter::fma(ZReg acc_reg, ZReg a, ZReg b) {
  f64_ ? fmla(acc_reg.d(), kAll.m(), a.d(), b.d()) : fmla(acc_reg.s(), kAll.m(), a.s(), b.s());
}

void BrgemmEmitter::add(ZReg d, ZReg n, ZReg m) { f64_ ? fadd(d.d(), n.d(), m.d()) : fadd(d.s(), n.s(), m.s()); }

void BrgemmEmitter::tile(const SvePanel& panel, const SveColumnBlock& block) {
  const int cols = block.cols;
  // The accumulators keep the tile's C across the whole batch: C (beta 1) or 0 first, then every
  // entry's terms, k ascending (brgemm_reference's order).
  if (d_.beta == 0) {
    for (int v = 0; v < panel.vectors; ++v)
      for (int j = 0; j < cols; ++j) dup(acc(v, j, cols).s(), 0);
  } else {
    c_access(true, panel, block);
    if (d_.prefetch == BrgemmPrefetch::next_c) prefetch_next_c(panel, block);
  }
  Label store, batch;
  begin_batch(*this, d_.batch, store);
  bind(batch);
  entry_pointers(*this, d_.batch, bytes_);
  if (!d_.b_transposed) {
    for (int j = 1; j < cols; ++j) add(b_col(j), b_col(j - 1), kLdb);
  }
  k_loop(panel, cols);
  subs(kLeft, kLeft, 1);
  b(Cond::ne, batch);
  bind(store);
  tile_epilogue(panel, block);
  c_access(false, panel, block);
  if (d_.activation == BrgemmActivation::unary) unary_pass(panel, block);
}

// The unary epilogue on the tile's stored C (the sum + bias): 4 rows at a time through v7 and the
// op's subroutine (the Neon ActivationEmitter's sequence, so the unary TPPs' bits at any vector
// length), ldr q / str q, the panel's last rows % 4 with ld1w / st1w under p3. C's rows stay in L1
// between the store and this pass; the calls are as many as the Neon kernel's (one per 4 rows).
void BrgemmEmitter::unary_pass(const SvePanel& panel, const SveColumnBlock& block) {
  const int rows = panel.rows(plan_.lanes);
  const int full = rows / 4, rest = rows % 4;
  const VReg value(kActivationValue);
  mov(kCCol, kCTile);
  for (int j = 0; j < block.cols; ++j) {
    for (int c = 0; c < full; ++c) {
      ldr(QReg(value.index), ptr(kCCol, 16 * c));
      bl(activation_);
      str(QReg(value.index), ptr(kCCol, 16 * c));
    }
    if (rest != 0) {
      add(kT0, kCCol, 16 * full);
      ld1w(ZReg(value.index).s(), kUnaryTail.z(), ptr_vl(kT0, 0));
      bl(activation_);
      st1w(ZReg(value.index).s(), kUnaryTail, ptr_vl(kT0, 0));
    }
    if (j + 1 < block.cols) add(kCCol, kCCol, kLdc);
  }
}

// One batch entry's k: a loop of k_group k per iteration, then the rest.
void BrgemmEmitter::k_loop(const SvePanel& panel, int cols) {
  const int group = plan_.k_group;
  const int groups = d_.k / group, rest = d_.k % group;
  auto steps = [&](int count, bool advance) {
    plan_.indexed ? k_steps_indexed(panel, cols, count, advance) : k_steps_transposed(panel, cols, count);
  };
  if (groups >= 2) {
    Label loop;
    mov_imm(kKLeft, static_cast<std::uint64_t>(groups));
    bind(loop);
    steps(group, true);
    subs(kKLeft, kKLeft, 1);
    b(Cond::ne, loop);
  } else if (groups == 1) {
    steps(group, rest > 0);
  }
  if (rest > 0) steps(rest, false);
}

// Indexed, `steps` k (k_group, or the rest under p4): each column's 128 bits of these k replicated
// into every segment of z<j> (ld1rqw / ld1rqd; the rest's elements past k are not read), then per
// k and A vector (two A registers in turn: the next load need not wait for this one's FMAs) one
// fmla by element per column. The column pointers move past the group when `advance`.
void BrgemmEmitter::k_steps_indexed(const SvePanel& panel, int cols, int steps, bool advance) {
  const PReg b_predicate = steps == plan_.k_group ? kAll : kKRest;
  for (int j = 0; j < cols; ++j) {
    const ZReg b(static_cast<unsigned>(j));
    f64_ ? ld1rqd(b.d(), b_predicate.z(), ptr(b_col(j))) : ld1rqw(b.s(), b_predicate.z(), ptr(b_col(j)));
    if (advance) add(b_col(j), b_col(j), 16);
  }
  const unsigned first_a = cols > kPanelCols ? 30 : 6;
  for (int kk = 0; kk < steps; ++kk) {
    for (int v = 0; v < panel.vectors; ++v) {
      const ZReg a(first_a + next_a_);
      next_a_ ^= 1;
      load(a, predicate(panel, v), kAPtr, v);
      for (int j = 0; j < cols; ++j) {
        const ZReg b(static_cast<unsigned>(j));
        const ZReg c = acc(v, j, cols);
        const auto lane = static_cast<unsigned>(kk);
        f64_ ? fmla(c.d(), a.d(), b.d(lane)) : fmla(c.s(), a.s(), b.s(lane));
      }
    }
    add(kAPtr, kAPtr, kLda);
  }
}

// B transposed, `steps` consecutive k: per k the panel's A vectors (z0..z3), then per column B(k, j)
// broadcast from B's row pointer x19 + j elements (B's columns are contiguous in a row: one pointer,
// the ld1r immediate) and one FMA per A vector; x19 moves to the next row per k.
void BrgemmEmitter::k_steps_transposed(const SvePanel& panel, int cols, int steps) {
  for (int kk = 0; kk < steps; ++kk) {
    for (int v = 0; v < panel.vectors; ++v) load(a_vector(v), predicate(panel, v), kAPtr, v);
    add(kAPtr, kAPtr, kLda);
    for (int j = 0; j < cols; ++j) {
      const ZReg b(kFirstB + next_b_);
      next_b_ = (next_b_ + 1) % kBRegisters;
      broadcast(b, b_col(0), j * bytes_);
      for (int v = 0; v < panel.vectors; ++v) fma(acc(v, j, cols), a_vector(v), b);
    }
    add(b_col(0), b_col(0), kLdb);
  }
}

// BrgemmPrefetch::next_c (brgemm.hpp): the C of the next column block, `cols` columns from the
// tile's column col0 + cols on, this panel's rows (up to 4 vectors: every 64-byte line of the
// column's rows and its last byte, the column's alignment being unknown). c_access left kCCol at
// the tile's last column. prfm never faults.
void BrgemmEmitter::prefetch_next_c(const SvePanel& panel, const SveColumnBlock& block) {
  const int bytes = panel.rows(plan_.lanes) * bytes_;
  for (int j = 0; j < block.cols; ++j) {
    add(kCCol, kCCol, kLdc);
    for (int offset = 0; offset < bytes; offset += 64) prfm(Prefetch::pldl1keep, ptr(kCCol, offset));
    if (bytes > 4) prfum(Prefetch::pldl1keep, ptr(kCCol, bytes - 1));
  }
}

// Bias and relu on the accumulators, before the store (brgemm_reference's order: the sum, + bias,
// then the activation).
void BrgemmEmitter::tile_epilogue(const SvePanel& panel, const SveColumnBlock& block) {
  const int cols = block.cols;
  if (d_.bias == BrgemmBias::per_row) {
    ldr(kT1, ptr(kArgs, offsetof(BrgemmArgs, bias)));
    add(kT1, kT1, kRowOff);  // A's row bytes are the bias's
    for (int v = 0; v < panel.vectors; ++v) {
      load(kBias, predicate(panel, v), kT1, v);
      for (int j = 0; j < cols; ++j) add(acc(v, j, cols), acc(v, j, cols), kBias);
    }
  } else if (d_.bias == BrgemmBias::per_col) {
    ldr(kT1, ptr(kArgs, offsetof(BrgemmArgs, bias)));
    mov_imm(kT0, static_cast<std::uint64_t>(block.col0 * bytes_));
    add(kT1, kT1, kT0);
    for (int j = 0; j < cols; ++j) {
      broadcast(kBias, kT1, j * bytes_);
      for (int v = 0; v < panel.vectors; ++v) add(acc(v, j, cols), acc(v, j, cols), kBias);
    }
  }
  if (d_.activation == BrgemmActivation::relu) {
    // x <= 0 (-0 included; false for NaN) becomes +0: exactly relu's select.
    dup(kZero.s(), 0);
    for (int j = 0; j < cols; ++j) {
      for (int v = 0; v < panel.vectors; ++v) {
        const ZReg x = acc(v, j, cols);
        if (f64_) {
          fcmle(kMask.d(), kAll.z(), x.d(), 0.0);
          sel(x.d(), kMask, kZero.d(), x.d());
        } else {
          fcmle(kMask.s(), kAll.z(), x.s(), 0.0);
          sel(x.s(), kMask, kZero.s(), x.s());
        }
      }
    }
  }
}

// The tile's C into (load) or from (store) the accumulators, column by column; the partial vector
// under p1 (C's rows past m are never touched).
void BrgemmEmitter::c_access(bool load_c, const SvePanel& panel, const SveColumnBlock& block) {
  const int cols = block.cols;
  mov(kCCol, kCTile);
  for (int j = 0; j < cols; ++j) {
    for (int v = 0; v < panel.vectors; ++v) {
      load_c ? load(acc(v, j, cols), predicate(panel, v), kCCol, v)
             : store(acc(v, j, cols), predicate(panel, v), kCCol, v);
    }
    if (j + 1 < cols) add(kCCol, kCCol, kLdc);
  }
}

}  // namespace weft::tpp::sve
