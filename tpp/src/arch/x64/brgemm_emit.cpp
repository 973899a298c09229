// The BRGEMM emitter: follows a BrgemmPlan, one template over the vector register type (Ymm for
// AVX2, Zmm for AVX-512). The accumulators of a register tile stay in registers across the whole
// batch reduce; C is read (beta = 1) once before and written once after it.
//
// Layout of the generated function void(const BrgemmArgs*):
//   for each row panel (loop over its count)
//     for each column block run (loop over its count)
//       tile: acc = beta ? C : 0; for i < count { A_i, B_i; for k: acc += A_i(:, k) * B_i(k, :) }
//             acc = epilogue(acc); C = acc
// With k_split > 1 each accumulator has that many partial sums, added after the batch; dot tiles
// (m = 1) run vectors along k instead of m (see the section below). bf16_staged_b with
// shared_staged_entries swaps the two outer loops, so that the panels of a column block can share
// its widened B columns. bf16_staged_ab keeps the order; per batch entry a tile widens its B
// columns into a stack slot and (the first tile of a row panel) the panel's A rows into the entry's
// A slot, and its k steps are fp32 FMAs on those floats. It has two bodies: calls with more
// entries than A's slots (BrgemmPlan::staged_a_entries) run the bf16_staged_b plan's instead.
//
// Data types: the accumulators are f32 (f32 and bf16 inputs) or f64, `lanes` of them per register.
// A k step is one k, or in bf16 a pair of k: A's vector then holds `lanes` rows of VNNI-2 pairs (as
// many bytes as an f32 vector of those rows), B's pair is one 32-bit broadcast. bf16_dot multiplies
// the pair with one vdpbf16ps; bf16_widen splits both into fp32 (the odd k: the high halves, masked;
// the even k: shifted up) and issues two FMAs, the odd k first, as vdpbf16ps adds them. General-
// purpose registers hold row and column offsets in elements (scaled in the address).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "brgemm_emit.hpp"
#include "activation_emit.hpp"
#include "bf16_emit.hpp"
#include "kernel_frame.hpp"
#include "vec_traits.hpp"
#include "weft/jit/x64/code_buffer.hpp"
#include "weft/jit/data_type.hpp"
#include "weft/jit/error.hpp"
#include "weft/jit/isa_traits.hpp"
#include "weft/tpp/brgemm.hpp"

namespace weft::tpp {

namespace {

using namespace Xbyak;

template <class Vec>
class BrgemmEmitter : public detail::KernelFrame {
  static constexpr bool kZmm = detail::VecTraits<Vec>::is_zmm;
  static constexpr int kVectorBytes = detail::VecTraits<Vec>::bytes;
  using DataType = jit::DataType;

 public:
  BrgemmEmitter(const BrgemmDesc& d, const BrgemmPlan& plan)
      : detail::KernelFrame(kVectorBytes, code_size(d, plan)),
        d_(d),
        plan_(plan),
        fallback_(fallback_plan(d, plan)),
        lanes_(plan.lanes),
        f64_(d.types.compute == DataType::f64),
        bf16_in_(d.types.in == DataType::bf16),
        in_bytes_(static_cast<int>(jit::size_of(d.types.in))),
        out_bytes_(static_cast<int>(jit::size_of(d.types.out))),
        row_bytes_(kVectorBytes / plan.lanes),
        bf16_(*this, consts_, jit::isa_traits(plan.isa).bf16_dot) {
    if (plan.lanes != detail::VecTraits<Vec>::bytes / static_cast<int>(jit::size_of(d.types.compute)))
      throw Error("brgemm plan '" + to_string(plan) + "': lanes do not match the accumulator type");
    emit_function({rbx, rbp, r12, r13, r14, r15}, [&] { emit(); });
  }

 private:
  // bf16_staged_ab: the plan of the body that runs calls with more entries than A's slots.
  static BrgemmPlan fallback_plan(const BrgemmDesc& d, const BrgemmPlan& plan) {
    if (plan.math != BrgemmMath::bf16_staged_ab) return {};
    BrgemmPlanOptions without;
    without.staged_ab = -1;
    return plan_brgemm(d, plan.isa, without);
  }

  // Generous upper bound on the code: the tiles are emitted once per (panel, column block) run
  // (and bf16_staged_ab has a second body, its fallback plan's).
  static std::size_t code_size(const BrgemmDesc& d, const BrgemmPlan& plan) {
    std::size_t bytes = 4096;
    if (plan.math == BrgemmMath::bf16_staged_ab) bytes += code_size(d, fallback_plan(d, plan));
    const int unrolled = plan.k_unroll + (d.k % plan.k_unroll);
    for (const BrgemmPanel& p : plan.panels)
      for (const BrgemmColumnBlock& c : p.columns) {
        // Widening: a shift and a mask per operand and two FMAs per accumulator.
        const bool widens = plan.math == BrgemmMath::bf16_widen || plan.math == BrgemmMath::bf16_staged_b;
        const bool pair = widens || plan.math == BrgemmMath::bf16_staged_ab;  // two fp32 steps per pair
        const std::size_t step =
            static_cast<std::size_t>(p.vectors + c.cols + p.vectors * c.cols) * 12 * (widens ? 3 : pair ? 2 : 1);
        // bf16_staged_b: per column, 3 instructions per 8 k and up to 3 pairs of the k tail.
        if (plan.math == BrgemmMath::bf16_staged_b || plan.math == BrgemmMath::bf16_staged_ab)
          bytes += static_cast<std::size_t>(c.cols) * static_cast<std::size_t>(d.k / 8 * 3 + 3 * 4 + 2) * 12;
        // bf16_staged_ab: a second k loop, which stages A (5 instructions per vector and pair, up to
        // 12 with a piecewise load), and the entry's bookkeeping.
        if (plan.math == BrgemmMath::bf16_staged_ab)
          bytes += step * static_cast<std::size_t>(unrolled) +
                   static_cast<std::size_t>(p.vectors) * static_cast<std::size_t>(unrolled + 8) * 12 * 8 + 256;
        bytes += step * static_cast<std::size_t>(unrolled) +
                 static_cast<std::size_t>(p.vectors * c.cols) * (d.activation == BrgemmActivation::unary ? 600 : 100) +
                 static_cast<std::size_t>(p.vectors * c.cols * plan.k_split) * 16 + 512;
        // prefetch_next_c: per column one prefetcht0 (8 bytes) per 64 bytes of rows, plus one.
        if (plan.prefetch_next_c)
          bytes += static_cast<std::size_t>(c.cols) * static_cast<std::size_t>(p.vectors * kVectorBytes / 64 + 2) * 8;
      }
    return (bytes + 4095) / 4096 * 4096;
  }

  // General-purpose registers.
  const Reg64 r_args = rdi;
  const Reg64 r_a = rsi, r_b = rdx;    // A_i, B_i of the current batch entry, advanced along k
  const Reg64 r_c = rcx;               // C of the current tile
  const Reg64 r_ai = r8, r_bi = r9;    // batch cursors: next A_i / B_i, or the next array entry
  const Reg64 r_count = r10;           // batch entries left
  const Reg64 r_k = r11;               // k loop counter
  const Reg64 r_row = rax;             // the current row panel's first row, m0
  const Reg64 r_col = rbx;             // the current column block's first column, n0
  const Reg64 r_tmp = rbp;
  const Reg64 r_stride_a = r12, r_stride_b = r13;  // strided: bytes between batch entries
  const Reg64 r_panel_loop = r14, r_col_loop = r15;

  // A piecewise partial vector needs one more register for its upper half.
  Vec scratch() const { return Vec(plan_.vector_registers - 1); }
  Vec vec(int i) const { return Vec(i); }
  // Accumulator of row vector i, column j, partial sum s (0: the one C is loaded into and stored from).
  Vec acc(int i, int j, int vectors, int s = 0) const { return Vec((s * cols_ + j) * vectors + i); }

  template <class T>
  static int field(T BrgemmArgs::*member) {
    // offsetof on a member pointer, without offsetof's restrictions on non-constant arguments.
    const BrgemmArgs probe{};
    return static_cast<int>(reinterpret_cast<const char*>(&(probe.*member)) -
                            reinterpret_cast<const char*>(&probe));
  }

  void emit() {
    if (d_.batch == BrgemmBatch::strided) {
      mov(r_stride_a, ptr[r_args + field(&BrgemmArgs::stride_a)]);
      shl(r_stride_a, in_shift());
      mov(r_stride_b, ptr[r_args + field(&BrgemmArgs::stride_b)]);
      shl(r_stride_b, in_shift());
    }
    // Every partial vector has the m tail's lanes: an opmask is set once for the whole kernel.
    const int tail = d_.m % lanes_;
    if (tail != 0) detail::set_tail_mask<Vec>(*this, tail, r_tmp.cvt32());

    if (plan_.math == BrgemmMath::bf16_staged_ab) {
      // Calls with more entries than A's slots run the fallback plan's body.
      Label fallback, end;
      cmp(qword[r_args + field(&BrgemmArgs::count)], plan_.staged_a_entries);
      jg(fallback, T_NEAR);
      emit_body();
      jmp(end, T_NEAR);
      L(fallback);
      std::swap(plan_, fallback_);
      emit_body();
      std::swap(plan_, fallback_);
      L(end);
      return;
    }
    emit_body();
  }

  // The kernel after the set-up: the stack buffer of the staged paths around the tiles.
  void emit_body() {
    if (staged_bytes() > 0) {
      // A 64-byte aligned buffer below the stack pointer, the caller's rsp and the staging
      // variables above it. The stack pointer goes down in steps of less than a page (the
      // alignment included), each touching its new top, so that a buffer larger than a page
      // cannot step over a thread stack's guard page (the caller touched [rsp] with its call).
      constexpr int kProbeStep = 4096 - 64;
      mov(r_tmp, rsp);
      and_(rsp, -64);
      int left = staged_bytes() + 64;
      for (; left > kProbeStep; left -= kProbeStep) {
        sub(rsp, kProbeStep);
        or_(qword[rsp], 0);
      }
      sub(rsp, left);
      or_(qword[rsp], 0);
      mov(ptr[rsp + staged_var(kSavedRsp)], r_tmp);
      if (plan_.shared_staged_entries > 0) {
        // Entries staged side by side when the call's count fits, else all in the first slot.
        Label fits;
        mov(qword[rsp + staged_var(kSlotStep)], staged_slot_bytes());
        cmp(qword[r_args + field(&BrgemmArgs::count)], plan_.shared_staged_entries);
        jle(fits);
        mov(qword[rsp + staged_var(kSlotStep)], 0);
        L(fits);
        emit_shared_staging_tiles();
      } else if (plan_.math == BrgemmMath::bf16_staged_ab) {
        emit_panels(/*stage_a=*/true);
      } else {
        emit_panels();
      }
      mov(rsp, ptr[rsp + staged_var(kSavedRsp)]);
      return;
    }
    emit_panels();
  }

  // bf16_staged_b: one batch entry's widened B columns for the widest tile (k floats each).
  int staged_slot_bytes() const { return brgemm_staged_entry_bytes(plan_, d_.k); }
  // bf16_staged_ab: one batch entry's widened A rows of the tallest panel (k floats per row).
  int staged_a_slot_bytes() const { return brgemm_staged_a_entry_bytes(plan_, d_.k); }
  // bf16_staged_ab: where the B columns start in the buffer (A's slots come first).
  int staged_b_offset() const { return staged_a_slot_bytes() * plan_.staged_a_entries; }

  // Bytes of the stack buffer: one slot, or one per shared entry; bf16_staged_ab: A's slots and
  // one slot of B.
  int staged_bytes() const {
    if (plan_.math == BrgemmMath::bf16_staged_ab) return staged_b_offset() + staged_slot_bytes();
    if (plan_.math != BrgemmMath::bf16_staged_b) return 0;
    return staged_slot_bytes() * std::max(1, plan_.shared_staged_entries);
  }

  // The 8-byte variables above the staging buffer: the caller's rsp; the bytes from one entry's
  // slot to the next (0 when the call's entries do not fit); the current entry's slot; whether
  // this tile widens its B columns (1) or reads what the first panel's tile left (0) --
  // bf16_staged_ab: whether this tile widens A's rows (the first tile of a row panel) or reads them.
  enum StagedVar { kSavedRsp, kSlotStep, kSlot, kStageB, kStageA = kStageB };
  int staged_var(StagedVar v) const { return staged_bytes() + 8 * static_cast<int>(v); }

  // Emits body once, run `count` times in a loop on `counter` when count > 1.
  template <class Body>
  void repeated(const Reg64& counter, int count, Body body) {
    Label top;
    if (count > 1) {
      mov(counter, count);
      L(top);
    }
    body();
    if (count > 1) {
      dec(counter);
      jnz(top, T_NEAR);
    }
  }

  // bf16_staged_b with shared_staged_entries: the column blocks outside, every panel's tile of a
  // block inside; the first widens each entry's B columns into its own slot, the others read them.
  void emit_shared_staging_tiles() {
    xor_(r_col, r_col);
    for (const BrgemmColumnBlock& block : plan_.panels.front().columns) {
      repeated(r_col_loop, block.count, [&] {
        xor_(r_row, r_row);
        mov(qword[rsp + staged_var(kStageB)], 1);
        for (const BrgemmPanel& panel : plan_.panels) {
          repeated(r_panel_loop, panel.count, [&] {
            tile(panel, block.cols);
            // The next tiles widen again only when the entries did not fit side by side.
            cmp(qword[rsp + staged_var(kSlotStep)], 0);
            sete(byte[rsp + staged_var(kStageB)]);
            add(r_row, panel.rows(lanes_));
          });
        }
        add(r_col, block.cols);
      });
    }
  }

  // The row panels outside, each panel's column tiles inside. With `stage_a` (bf16_staged_ab) the
  // first tile of each row panel widens A's rows of each entry into the entry's slot and the
  // panel's other tiles read them.
  void emit_panels(bool stage_a = false) {
    xor_(r_row, r_row);
    for (const BrgemmPanel& panel : plan_.panels) {
      repeated(r_panel_loop, panel.count, [&] {
        xor_(r_col, r_col);
        if (stage_a) mov(byte[rsp + staged_var(kStageA)], 1);
        for (const BrgemmColumnBlock& block : panel.columns) {
          repeated(r_col_loop, block.count, [&] {
            tile(panel, block.cols);
            if (stage_a) mov(byte[rsp + staged_var(kStageA)], 0);
            add(r_col, block.cols);
          });
        }
        add(r_row, panel.rows(lanes_));
      });
    }
  }

  int in_shift() const { return in_bytes_ == 2 ? 1 : in_bytes_ == 4 ? 2 : 3; }

  // A vector of A (f32, f64, or the VNNI-2 pairs of a bf16 pair step: 32-bit units) from memory;
  // with `partial`, only the first m % lanes rows are read and the other lanes are zero (the tail
  // policy of vec_traits.hpp).
  void load(const Vec& v, const Reg64& base, int disp, bool partial) {
    if (!partial) {
      vmovups(v, ptr[base + disp]);
    } else if (f64_) {
      detail::load_partial_f64(*this, v, base + disp, d_.m % lanes_, scratch());
    } else {
      detail::load_partial(*this, v, base + disp, d_.m % lanes_, scratch());
    }
  }

  // `rows` elements of C's type (types.out: C, the bias) as accumulator lanes, the others zero.
  void load_out(const Vec& v, const Reg64& base, int disp, int rows) {
    if (d_.types.out == DataType::bf16) {
      bf16_.load(v, base + disp, rows, scratch());
    } else {
      load(v, base, disp, rows != lanes_);
    }
  }

  // Stores the first `rows` lanes of v in C's type (the tail policy of vec_traits.hpp, bf16 rounded
  // to nearest even); v and `spare` (two registers for bf16) are clobbered.
  void store(const Reg64& base, int disp, const Vec& v, int rows, const std::vector<Vec>& spare) {
    if (d_.types.out == DataType::bf16) {
      bf16_.store(base + disp, v, rows, spare);
    } else if (rows == lanes_) {
      vmovups(ptr[base + disp], v);
    } else if (f64_) {
      detail::store_partial_f64(*this, base + disp, v, rows, spare.at(0));
    } else {
      detail::store_partial(*this, base + disp, v, rows, spare.at(0));
    }
  }

  void add_vectors(const Vec& to, const Vec& a, const Vec& b) {
    if (f64_) {
      vaddpd(to, a, b);
    } else {
      vaddps(to, a, b);
    }
  }

  void fma(const Vec& acc, const Vec& a, const Operand& b) {
    if (f64_) {
      vfmadd231pd(acc, a, b);
    } else {
      vfmadd231ps(acc, a, b);
    }
  }

  // One element of C's type at `at` in every lane.
  void broadcast_out(const Vec& v, const Address& at) {
    switch (d_.types.out) {
      case DataType::f32: vbroadcastss(v, at); return;
      case DataType::f64: vbroadcastsd(v, at); return;
      case DataType::bf16:
        vpbroadcastw(v, at);
        vpslld(v, v, 16);  // (b << 16 | b) << 16: b's bits in the top half, zeros below
        return;
    }
  }

  void zero(const Vec& v) {
    if constexpr (kZmm) {
      vpxord(v, v, v);
    } else {
      vxorps(v, v, v);
    }
  }

  void tile(const BrgemmPanel& panel, int cols) {
    if (panel.dot) {
      dot_tile(panel, cols);
      return;
    }
    const int mv = panel.vectors;
    const int last_rows = panel.tail == 0 ? lanes_ : panel.tail;
    auto rows_of = [&](int i) { return i == mv - 1 ? last_rows : lanes_; };
    const std::int64_t ldc_bytes = d_.ldc * out_bytes_;
    const int c_vector_bytes = lanes_ * out_bytes_;
    cols_ = cols;

    // C of this tile: c + (m0 + n0 * ldc) elements.
    mov(r_c, ptr[r_args + field(&BrgemmArgs::c)]);
    lea(r_c, ptr[r_c + r_row * out_bytes_]);
    imul(r_tmp, r_col, static_cast<int>(ldc_bytes));
    add(r_c, r_tmp);

    for (int j = 0; j < cols; ++j)
      for (int i = 0; i < mv; ++i) {
        const Vec a = acc(i, j, mv);
        if (d_.beta == 0) {
          zero(a);
        } else {
          load_out(a, r_c, static_cast<int>(j * ldc_bytes) + i * c_vector_bytes, rows_of(i));
        }
        for (int s = 1; s < plan_.k_split; ++s) zero(acc(i, j, mv, s));
      }

    if (plan_.prefetch_next_c) prefetch_next_tile_c(panel, cols);
    batch_loop(panel, cols);
    fold_partials(panel, cols);
    epilogue(panel, cols);

    // The registers above the tile are free (the epilogue plan counted two for bf16 rounding).
    const std::vector<Vec> free_registers{vec(mv * cols), vec(std::min(mv * cols + 1, plan_.vector_registers - 1))};
    for (int j = 0; j < cols; ++j)
      for (int i = 0; i < mv; ++i)
        store(r_c, static_cast<int>(j * ldc_bytes) + i * c_vector_bytes, acc(i, j, mv), rows_of(i), free_registers);
  }

  // The C columns of the tile after this one (BrgemmPlan::prefetch_next_c): `cols` columns from
  // column n0 + cols, this panel's rows. The column's alignment is unknown here, so besides one
  // prefetch every 64 bytes its last byte gets one (the line a misaligned column spills into).
  void prefetch_next_tile_c(const BrgemmPanel& panel, int cols) {
    const std::int64_t ldc_bytes = d_.ldc * out_bytes_;
    const int bytes = panel.rows(lanes_) * out_bytes_;
    for (int j = 0; j < cols; ++j) {
      // validate() keeps C itself within 2 GiB; a column past it may not be addressable: skip it.
      const std::int64_t column = (cols + j) * ldc_bytes;
      if (column + bytes > std::numeric_limits<std::int32_t>::max()) break;
      const int at = static_cast<int>(column);
      for (int offset = 0; offset < bytes; offset += 64) prefetcht0(ptr[r_c + at + offset]);
      if (bytes > 4) prefetcht0(ptr[r_c + at + bytes - 1]);
    }
  }

  void batch_loop(const BrgemmPanel& panel, int cols) {
    if (plan_.math == BrgemmMath::bf16_staged_ab) {
      staged_ab_batch(panel, cols);
      return;
    }
    Label top, done;
    mov(r_count, ptr[r_args + field(&BrgemmArgs::count)]);
    test(r_count, r_count);
    jle(done, T_NEAR);
    if (plan_.shared_staged_entries > 0) mov(ptr[rsp + staged_var(kSlot)], rsp);  // entry 0's slot
    start_entries();
    L(top);
    next_entry();
    if (plan_.math == BrgemmMath::bf16_staged_b) {
      if (plan_.shared_staged_entries > 0) {
        Label staged;
        mov(r_tmp, ptr[rsp + staged_var(kSlot)]);
        cmp(byte[rsp + staged_var(kStageB)], 0);
        je(staged, T_NEAR);
        stage_b(panel, cols, r_tmp);
        L(staged);
        mov(r_b, r_tmp);
        add(r_tmp, ptr[rsp + staged_var(kSlotStep)]);
        mov(ptr[rsp + staged_var(kSlot)], r_tmp);
      } else {
        stage_b(panel, cols, rsp);
        mov(r_b, rsp);
      }
    }
    k_loop(panel, cols);
    dec(r_count);
    jnz(top, T_NEAR);
    L(done);
  }

  // The batch cursors r_ai, r_bi at the first entry.
  void start_entries() {
    switch (d_.batch) {
      case BrgemmBatch::strided:
        mov(r_ai, ptr[r_args + field(&BrgemmArgs::a)]);
        lea(r_ai, ptr[r_ai + r_row * row_bytes_]);
        b_column_offset(r_bi);
        add(r_bi, ptr[r_args + field(&BrgemmArgs::b)]);
        break;
      case BrgemmBatch::offsets:
        mov(r_ai, ptr[r_args + field(&BrgemmArgs::offsets_a)]);
        mov(r_bi, ptr[r_args + field(&BrgemmArgs::offsets_b)]);
        break;
      case BrgemmBatch::addresses:
        mov(r_ai, ptr[r_args + field(&BrgemmArgs::addresses_a)]);
        mov(r_bi, ptr[r_args + field(&BrgemmArgs::addresses_b)]);
        break;
    }
  }

  // r_a, r_b: the current entry's A at row m0 and B at column n0; the cursors move to the next.
  void next_entry() {
    switch (d_.batch) {
      case BrgemmBatch::strided:
        mov(r_a, r_ai);
        mov(r_b, r_bi);
        add(r_ai, r_stride_a);
        add(r_bi, r_stride_b);
        break;
      case BrgemmBatch::offsets:
        mov(r_a, ptr[r_ai]);
        shl(r_a, in_shift());
        add(r_a, ptr[r_args + field(&BrgemmArgs::a)]);
        lea(r_a, ptr[r_a + r_row * row_bytes_]);
        mov(r_b, ptr[r_bi]);
        shl(r_b, in_shift());
        add(r_b, ptr[r_args + field(&BrgemmArgs::b)]);
        add_b_column_offset();
        add(r_ai, 8);
        add(r_bi, 8);
        break;
      case BrgemmBatch::addresses:
        mov(r_a, ptr[r_ai]);
        lea(r_a, ptr[r_a + r_row * row_bytes_]);
        mov(r_b, ptr[r_bi]);
        add_b_column_offset();
        add(r_ai, 8);
        add(r_bi, 8);
        break;
    }
  }

  // bf16_staged_ab: for each entry, its B columns of the tile into the B slot, then its k steps over
  // the slots, fp32 only; the first tile of a row panel widens the entry's A rows into the entry's A
  // slot as its k loop goes (k_loop_staging_a), the panel's other tiles read them. (Staging every
  // entry of the tile first, or the next entry's into a second B slot before this one's k steps,
  // ran slower: 32^3 batch 8 at 0.84 and 0.91 of fp32 against 0.93, before A's staging moved into
  // the k loop.)
  void staged_ab_batch(const BrgemmPanel& panel, int cols) {
    Label top, a_staged, done;
    mov(r_count, ptr[r_args + field(&BrgemmArgs::count)]);
    test(r_count, r_count);
    jle(done, T_NEAR);
    mov(ptr[rsp + staged_var(kSlot)], rsp);  // entry 0's A slot
    start_entries();
    L(top);
    next_entry();
    lea(r_tmp, ptr[rsp + staged_b_offset()]);
    stage_b_halves(panel, cols, r_tmp);
    Label next;
    lea(r_b, ptr[rsp + staged_b_offset()]);
    // r_a: A_i at row m0; k_loop_staging_a takes it in r_tmp.
    cmp(byte[rsp + staged_var(kStageA)], 0);
    je(a_staged, T_NEAR);
    mov(r_tmp, r_a);
    mov(r_a, ptr[rsp + staged_var(kSlot)]);
    add(qword[rsp + staged_var(kSlot)], staged_a_slot_bytes());
    k_loop_staging_a(panel, cols);
    jmp(next, T_NEAR);
    L(a_staged);
    mov(r_a, ptr[rsp + staged_var(kSlot)]);
    add(qword[rsp + staged_var(kSlot)], staged_a_slot_bytes());
    k_loop(panel, cols);
    L(next);
    dec(r_count);
    jnz(top, T_NEAR);
    L(done);
  }

  // bf16_staged_b: this entry's B columns of the tile (k bf16 each, from r_b) widened into the
  // stack buffer at `slot` (column j at j * k floats, exact: a bf16 is a float's top half). The
  // operand registers are free between entries.
  void stage_b(const BrgemmPanel& panel, int cols, const Reg64& slot) {
    if constexpr (kZmm) {
      throw Error("brgemm: bf16_staged_b is emitted for AVX2 only");
    } else {
      const Ymm v = vec(panel.vectors * cols * plan_.k_split);
      const Xmm x(v.getIdx());
      const int whole = d_.k / 8;
      for (int j = 0; j < cols; ++j) {
        const std::int64_t from = j * d_.ldb * in_bytes_;
        const int to = j * d_.k * 4;
        // (Unpacking 16 words above zeros and storing the halves in order ran 3 % slower at 32^3.)
        for (int c = 0; c < whole; ++c) {
          vpmovzxwd(v, ptr[r_b + static_cast<int>(from + c * 16)]);
          vpslld(v, v, 16);
          vmovups(ptr[slot + to + c * 32], v);
        }
        for (int e = whole * 8; e < d_.k; e += 2) {  // k is even: pairs of the tail
          vmovd(x, ptr[r_b + static_cast<int>(from + e * 2)]);
          vpmovzxwd(x, x);
          vpslld(x, x, 16);
          vmovq(ptr[slot + to + e * 4], x);
        }
      }
    }
  }

  // bf16_staged_ab, the first tile of a row panel: the k loop with A's staging interleaved, each
  // iteration widening its own pairs of A (from r_tmp, A_i at row m0) into the slot (r_a) before
  // its k steps read them. (Staging the entry's whole A first put up to 256 stores in a row ahead
  // of the FMAs, more than the store buffer holds: 32 x 8 x 64 batch 4 ran at 0.62 of fp32, 0.79
  // with staged B.) Clobbers r_tmp, r_k.
  void k_loop_staging_a(const BrgemmPanel& panel, int cols) {
    const int pairs = steps();
    const int unroll = std::min(plan_.k_unroll, pairs);
    int peeled = 0;
    if (panel.tail != 0) {
      const std::int64_t over = lanes_ - panel.tail;
      peeled = static_cast<int>(std::min<std::int64_t>(pairs, (over + d_.lda - 1) / d_.lda));
    }
    const int main = pairs - peeled;  // pairs whose vectors are all loaded whole
    const int iterations = main / unroll;
    if (iterations > 1 && unroll % plan_.k_split != 0) throw Error("brgemm plan: k_unroll is not a multiple of k_split");
    const std::int64_t pair_bytes = d_.lda * row_bytes_;
    if (iterations > 0) {
      Label top;
      if (iterations > 1) {
        mov(r_k, iterations);
        L(top);
      }
      for (int p = 0; p < unroll; ++p) stage_a_pair(panel, cols, r_tmp, r_a, p, false);
      k_steps(panel, cols, 0, unroll, false);
      add(r_a, static_cast<int>(unroll * a_k_bytes(panel)));
      add(r_b, static_cast<int>(unroll * b_k_bytes()));
      add(r_tmp, static_cast<int>(unroll * pair_bytes));
      if (iterations > 1) {
        dec(r_k);
        jnz(top, T_NEAR);
      }
    }
    const int after = iterations * unroll;
    const int rest = pairs - after;
    for (int p = 0; p < rest; ++p) stage_a_pair(panel, cols, r_tmp, r_a, p, after + p >= main);
    if (rest > 0) k_steps(panel, cols, 0, rest, false, after);
  }

  // bf16_staged_ab: pair p (from `from`, A_i's pairs at row m0) of the panel's A rows widened into
  // the slot at `to` (its even k, then its odd k, vectors of rows); `partial`: the tail vector is
  // loaded piecewise. Uses the two registers above the accumulators.
  void stage_a_pair(const BrgemmPanel& panel, int cols, const Reg64& from, const Reg64& to, int p, bool partial) {
    const int mv = panel.vectors;
    const int first = mv * cols * plan_.k_split;
    const Vec v = vec(first), even = vec(first + 1);
    const int k_bytes = mv * kVectorBytes;
    const std::int64_t pair_bytes = d_.lda * row_bytes_;
    for (int i = 0; i < mv; ++i) {
      const int at = static_cast<int>(p * pair_bytes) + i * kVectorBytes;
      if (partial && i == mv - 1) {
        detail::load_partial(*this, v, from + at, panel.tail, even);
      } else {
        vmovups(v, ptr[from + at]);
      }
      widen_pair(even, v);
      vmovaps(ptr[to + 2 * p * k_bytes + i * kVectorBytes], even);
      vmovaps(ptr[to + (2 * p + 1) * k_bytes + i * kVectorBytes], v);
    }
  }

  // bf16_staged_ab: this entry's B columns of the tile (k bf16 each, from r_b) widened into the
  // stack buffer at `slot`: column j at j * b_column_bytes(), its even k (shifted up) in the first
  // half (staged_b_half() bytes), its odd k (masked) in the second, 8 pairs at a time (a shift and
  // a mask per 16 bf16, against vpmovzxwd and a shift per 8 in stage_b). The last pairs of a column
  // are loaded piecewise: nothing past it is read. Clobbers the two registers above the accumulators.
  void stage_b_halves(const BrgemmPanel& panel, int cols, const Reg64& slot) {
    const int first = panel.vectors * cols * plan_.k_split;
    const Vec v = vec(first), even = vec(first + 1);
    const int pairs = steps(), whole = pairs / 8, rest = pairs % 8;
    const int column = static_cast<int>(b_column_bytes()), half = staged_b_half();
    for (int j = 0; j < cols; ++j) {
      const std::int64_t from = j * d_.ldb * in_bytes_;
      const int to = j * column;
      for (int c = 0; c <= whole; ++c) {
        if (c == whole && rest == 0) break;
        const int src = static_cast<int>(from + c * 32);
        if (c < whole) {
          vmovups(v, ptr[r_b + src]);
        } else {
          detail::load_partial(*this, v, r_b + src, rest, even);
        }
        widen_pair(even, v);
        vmovaps(ptr[slot + to + c * kVectorBytes], even);
        vmovaps(ptr[slot + to + half + c * kVectorBytes], v);
      }
    }
  }

  // bf16_staged_ab: bytes of one half (the even or the odd k) of a staged B column.
  int staged_b_half() const { return (d_.k + 15) / 16 * 32; }

  // Where B's column n0 starts in B_i, in bytes, from r_col = n0: n0 * ldb elements, or with B
  // transposed n0 (the k steps are then ldb apart instead: b_k_bytes()).
  void b_column_offset(const Reg64& to) {
    if (d_.b_transposed) {
      lea(to, ptr[r_col * in_bytes_]);
    } else {
      imul(to, r_col, static_cast<int>(d_.ldb * in_bytes_));
    }
  }

  void add_b_column_offset() {
    if (d_.b_transposed) {
      lea(r_b, ptr[r_b + r_col * in_bytes_]);
    } else {
      b_column_offset(r_tmp);
      add(r_b, r_tmp);
    }
  }

  // bf16_staged_b reads B from the stack buffer: columns of k floats; bf16_staged_ab: of two halves.
  std::int64_t b_column_bytes() const {
    if (plan_.math == BrgemmMath::bf16_staged_ab) return 2 * staged_b_half();
    if (plan_.math == BrgemmMath::bf16_staged_b) return d_.k * 4;
    return d_.b_transposed ? in_bytes_ : d_.ldb * in_bytes_;
  }
  // Bytes between steps: one k (ldb apart when transposed), or a pair of k in bf16 (two floats when
  // staged).
  std::int64_t b_k_bytes() const {
    if (plan_.math == BrgemmMath::bf16_staged_b) return 8;
    if (plan_.math == BrgemmMath::bf16_staged_ab) return 4;  // one float in each half
    return d_.b_transposed ? d_.ldb * in_bytes_ : (bf16_in_ ? 2 : 1) * in_bytes_;
  }
  // Bytes between A's steps: lda rows of one k, or of a VNNI-2 pair in bf16; bf16_staged_ab: the
  // panel's rows of two k in the slot.
  std::int64_t a_k_bytes(const BrgemmPanel& panel) const {
    if (plan_.math == BrgemmMath::bf16_staged_ab) return 2 * panel.vectors * kVectorBytes;
    return d_.lda * row_bytes_;
  }

  // Adds the partial sums pairwise into partial 0: (0 + 1) + (2 + 3), ...
  void fold_partials(const BrgemmPanel& panel, int cols) {
    const int mv = panel.vectors;
    for (int step = 1; step < plan_.k_split; step *= 2)
      for (int s = 0; s + step < plan_.k_split; s += 2 * step)
        for (int j = 0; j < cols; ++j)
          for (int i = 0; i < mv; ++i) add_vectors(acc(i, j, mv, s), acc(i, j, mv, s), acc(i, j, mv, s + step));
  }

  // The k steps of one batch entry. A full vector load of the tail rows reads past row m but stays
  // inside A_i as long as a later column follows within reach, so only the last few k steps (one
  // when lda >= lanes - tail) load the tail vector piecewise. With k_split > 1, k step p goes to
  // partial p % k_split.
  void k_loop(const BrgemmPanel& panel, int cols) {
    if (panel.dot) {
      dot_k_loop(cols);
      return;
    }
    int peeled = 0;
    if (panel.tail != 0 && !kZmm && plan_.math != BrgemmMath::bf16_staged_ab) {
      const std::int64_t over = lanes_ - panel.tail;
      peeled = static_cast<int>(std::min<std::int64_t>(steps(), (over + d_.lda - 1) / d_.lda));
    }
    const int main_steps = steps() - peeled;
    const int unroll = std::min(plan_.k_unroll, std::max(main_steps, 1));
    const int iterations = main_steps / unroll;
    const int rest = main_steps % unroll;
    const int a_step = static_cast<int>(unroll * a_k_bytes(panel));
    const int b_step = static_cast<int>(unroll * b_k_bytes());
    const bool more = rest > 0 || peeled > 0;
    // The loop body starts at a multiple of k_split.
    if (iterations > 1 && unroll % plan_.k_split != 0) throw Error("brgemm plan: k_unroll is not a multiple of k_split");
    const int after = iterations * unroll;  // the step the rest starts at
    if (iterations > 1) {
      Label top;
      mov(r_k, iterations);
      L(top);
      k_steps(panel, cols, 0, unroll, false);
      add(r_a, a_step);
      add(r_b, b_step);
      dec(r_k);
      jnz(top, T_NEAR);
    } else if (iterations == 1) {
      k_steps(panel, cols, 0, unroll, false);
      if (more) {
        add(r_a, a_step);
        add(r_b, b_step);
      }
    }
    if (rest > 0) k_steps(panel, cols, 0, rest, false, after);
    if (peeled > 0) k_steps(panel, cols, rest, peeled, true, after);
  }

  // k steps first .. first + steps - 1 from r_a / r_b, fully unrolled; `partial`: the tail vector
  // is loaded piecewise.
  // `base`: the k step r_a / r_b point at, for the choice of partial sums.
  void k_steps(const BrgemmPanel& panel, int cols, int first, int steps, bool partial, int base = 0) {
    const int mv = panel.vectors;
    const std::int64_t lda_bytes = a_k_bytes(panel), b_column = b_column_bytes(), b_k = b_k_bytes();
    const int operands = mv * cols * plan_.k_split;  // first register after the accumulators
    const bool masked = panel.tail != 0 && (kZmm || partial);
    for (int kk = first; kk < first + steps; ++kk) {
      const int s = (base + kk) % plan_.k_split;
      auto a_disp = [&](int i) { return static_cast<int>(kk * lda_bytes) + i * kVectorBytes; };
      auto b_addr = [&](int j) { return ptr[r_b + static_cast<int>(j * b_column + kk * b_k)]; };
      if (plan_.math == BrgemmMath::bf16_widen) {
        widened_step(panel, cols, s, operands, masked, a_disp, b_addr);
        continue;
      }
      if (plan_.math == BrgemmMath::bf16_staged_b) {
        staged_step(panel, cols, s, operands, masked, a_disp, [&](int j) { return j * b_column + kk * b_k; });
        continue;
      }
      if (plan_.math == BrgemmMath::bf16_staged_ab) {
        // The pair as two fp32 steps over the staged floats, the odd k first (as vdpbf16ps adds
        // them): A's k 2kk + q at (2kk + q) * rows of the slot; B's in column j's half q, float kk.
        const int k_bytes = panel.vectors * kVectorBytes;
        for (int q : {1, 0}) {
          const int at = 2 * kk + q;
          fp32_step(panel, cols, s, operands, false, [&](int i) { return at * k_bytes + i * kVectorBytes; },
                    [&](int j) { return ptr[r_b + static_cast<int>(j * b_column + q * staged_b_half() + kk * b_k)]; });
        }
        continue;
      }
      fp32_step(panel, cols, s, operands, masked, a_disp, b_addr);
    }
  }

  // One k step of an fp32-style tile (f32, f64, bf16_dot's pairs, bf16_staged_ab's staged floats):
  // A's vectors in registers and B broadcast column by column, or B's broadcasts in registers and A
  // loaded vector by vector.
  template <class ADisp, class BAddr>
  void fp32_step(const BrgemmPanel& panel, int cols, int s, int operands, bool masked, ADisp a_disp, BAddr b_addr) {
    const int mv = panel.vectors;
    if (!panel.b_in_registers) {
      for (int i = 0; i < mv; ++i) load(vec(operands + i), r_a, a_disp(i), masked && i == mv - 1);
      const Vec bcast = vec(operands + mv);
      for (int j = 0; j < cols; ++j) {
        broadcast_in(bcast, b_addr(j));
        for (int i = 0; i < mv; ++i) multiply_add(acc(i, j, mv, s), vec(operands + i), bcast);
      }
    } else {
      for (int j = 0; j < cols; ++j) broadcast_in(vec(operands + j), b_addr(j));
      const Vec a = vec(operands + cols);
      for (int i = 0; i < mv; ++i) {
        const bool piecewise = masked && i == mv - 1;
        if (cols == 1 && !piecewise) {
          // One use: the load is the FMA's memory operand.
          multiply_add(acc(i, 0, mv, s), vec(operands), ptr[r_a + a_disp(i)]);
          continue;
        }
        load(a, r_a, a_disp(i), piecewise);
        for (int j = 0; j < cols; ++j) multiply_add(acc(i, j, mv, s), a, vec(operands + j));
      }
    }
  }

  // One step's B operand in every lane: an f32 or f64 element, or a bf16 pair (32 bits), or a
  // staged float (bf16_staged_ab).
  void broadcast_in(const Vec& v, const Address& at) {
    if (f64_) {
      vbroadcastsd(v, at);
    } else if (bf16_in_ && plan_.math != BrgemmMath::bf16_staged_ab) {
      vpbroadcastd(v, at);
    } else {
      vbroadcastss(v, at);
    }
  }

  // acc += a * b for one step: an FMA, or vdpbf16ps on a pair (bf16_dot).
  void multiply_add(const Vec& acc, const Vec& a, const Operand& b) {
    if (plan_.math == BrgemmMath::bf16_dot) {
      if constexpr (kZmm) {
        vdpbf16ps(acc, a, b);
      } else {
        throw Error("brgemm: vdpbf16ps is emitted for AVX-512 only");
      }
    } else {
      fma(acc, a, b);
    }
  }

  // The odd k of a pair (the high halves of 32-bit units) as fp32: the low halves masked off; the
  // even k: shifted up. `odd` holds the pair on entry.
  void widen_pair(const Vec& even, const Vec& odd) {
    vpslld(even, odd, 16);
    if constexpr (kZmm) {
      vpandd(odd, odd, consts_.splat_bits(0xffff0000u));
    } else {
      vpand(odd, odd, consts_.splat_bits(0xffff0000u));
    }
  }

  // The mv vectors of A's pairs at this step, widened: the even k into operand register 2i, the odd
  // k into 2i + 1 (the tail vector loaded piecewise when `masked`).
  template <class ADisp>
  void widen_a(int mv, int operands, bool masked, ADisp a_disp) {
    for (int i = 0; i < mv; ++i) {
      const Vec even = vec(operands + 2 * i), odd = vec(operands + 2 * i + 1);
      load(odd, r_a, a_disp(i), masked && i == mv - 1);
      widen_pair(even, odd);
    }
  }

  // A bf16 pair step without vdpbf16ps (BrgemmMath::bf16_widen): A's vectors and B's broadcasts
  // widened into an even and an odd register each (operand registers 2x and 2x + 1), then two fp32
  // FMAs per accumulator, the odd k first.
  template <class ADisp, class BAddr>
  void widened_step(const BrgemmPanel& panel, int cols, int s, int operands, bool masked, ADisp a_disp, BAddr b_addr) {
    const int mv = panel.vectors;
    auto even = [&](int x) { return vec(operands + 2 * x); };
    auto odd = [&](int x) { return vec(operands + 2 * x + 1); };
    auto both = [&](const Vec& acc, const Vec& a_even, const Vec& a_odd, const Vec& b_even, const Vec& b_odd) {
      vfmadd231ps(acc, a_odd, b_odd);
      vfmadd231ps(acc, a_even, b_even);
    };
    if (!panel.b_in_registers) {
      widen_a(mv, operands, masked, a_disp);
      for (int j = 0; j < cols; ++j) {
        vpbroadcastd(odd(mv), b_addr(j));
        widen_pair(even(mv), odd(mv));
        for (int i = 0; i < mv; ++i) both(acc(i, j, mv, s), even(i), odd(i), even(mv), odd(mv));
      }
    } else {
      for (int j = 0; j < cols; ++j) {
        vpbroadcastd(odd(j), b_addr(j));
        widen_pair(even(j), odd(j));
      }
      for (int i = 0; i < mv; ++i) {
        load(odd(cols), r_a, a_disp(i), masked && i == mv - 1);
        widen_pair(even(cols), odd(cols));
        for (int j = 0; j < cols; ++j) both(acc(i, j, mv, s), even(cols), odd(cols), even(j), odd(j));
      }
    }
  }

  // A bf16 pair step of bf16_staged_b: A's vectors widened into even and odd registers, then per
  // column the odd and the even k of B broadcast from the staged floats (`b_disp(j)`: the pair's
  // offset from r_b), each accumulator taking the odd k first, as vdpbf16ps adds them.
  template <class ADisp, class BDisp>
  void staged_step(const BrgemmPanel& panel, int cols, int s, int operands, bool masked, ADisp a_disp, BDisp b_disp) {
    const int mv = panel.vectors;
    auto even = [&](int x) { return vec(operands + 2 * x); };
    auto odd = [&](int x) { return vec(operands + 2 * x + 1); };
    const Vec b = vec(operands + 2 * mv);
    widen_a(mv, operands, masked, a_disp);
    for (int j = 0; j < cols; ++j) {
      const int at = static_cast<int>(b_disp(j));
      vbroadcastss(b, ptr[r_b + at + 4]);
      for (int i = 0; i < mv; ++i) vfmadd231ps(acc(i, j, mv, s), odd(i), b);
      vbroadcastss(b, ptr[r_b + at]);
      for (int i = 0; i < mv; ++i) vfmadd231ps(acc(i, j, mv, s), even(i), b);
    }
  }

  void epilogue(const BrgemmPanel& panel, int cols) {
    const int mv = panel.vectors;
    const Vec t = vec(mv * cols);
    if (d_.bias != BrgemmBias::none) {
      mov(r_tmp, ptr[r_args + field(&BrgemmArgs::bias)]);
      if (d_.bias == BrgemmBias::per_row) {
        lea(r_tmp, ptr[r_tmp + r_row * out_bytes_]);
        for (int i = 0; i < mv; ++i) {
          load_out(t, r_tmp, i * lanes_ * out_bytes_, i == mv - 1 && panel.tail != 0 ? panel.tail : lanes_);
          for (int j = 0; j < cols; ++j) add_vectors(acc(i, j, mv), acc(i, j, mv), t);
        }
      } else {
        lea(r_tmp, ptr[r_tmp + r_col * out_bytes_]);
        for (int j = 0; j < cols; ++j) {
          broadcast_out(t, ptr[r_tmp + j * out_bytes_]);
          for (int i = 0; i < mv; ++i) add_vectors(acc(i, j, mv), acc(i, j, mv), t);
        }
      }
    }
    if (f64_ && d_.activation == BrgemmActivation::relu) {
      for (int j = 0; j < cols; ++j)
        for (int i = 0; i < mv; ++i) relu_f64(acc(i, j, mv), t);
      return;
    }
    if (d_.activation != BrgemmActivation::none) {
      // The unary TPPs' sequence, on each accumulator, with the registers above the tile as scratch.
      const UnaryOp op = d_.activation == BrgemmActivation::relu ? UnaryOp::relu : d_.unary;
      std::vector<Vec> scratch;
      for (int r = mv * cols; r < plan_.vector_registers && scratch.size() < 3; ++r) scratch.push_back(vec(r));
      detail::ActivationEmitter<Vec> act(*this, consts_);
      for (int j = 0; j < cols; ++j)
        for (int i = 0; i < mv; ++i) act.emit(op, d_.unary_alpha, acc(i, j, mv), scratch);
    }
  }

  // UnaryOp::relu in f64: x where x > 0 or x is NaN (not less-or-equal, unordered), else +0.
  void relu_f64(const Vec& x, const Vec& t) {
    constexpr std::uint8_t kNotLessEqualUnordered = 6;
    vxorpd(t, t, t);
    if constexpr (kZmm) {
      const Opmask pass(7);
      vcmppd(pass, x, t, kNotLessEqualUnordered);
      vmovapd(x | pass | T_z, x);
    } else {
      vcmppd(t, x, t, kNotLessEqualUnordered);
      vandpd(x, x, t);
    }
  }

  int steps() const { return bf16_in_ ? d_.k / 2 : d_.k; }

  // ---- dot tiles (m = 1, AVX2): C(0, j) = sum over k of A(0, k) B(k, j), vectors along k ----------
  //
  // Accumulator (j, s) holds lane-wise partial sums of column j; vector c of k (k = 8c .. 8c + 7)
  // of a batch entry goes to partial c % k_split. A k tail of r = k % 8 steps is the vector that
  // ends at k - 1 (it overlaps the last whole one, so no load leaves the matrices) with its first
  // 8 - r lanes masked to zero in A and in B (0 * inf would be NaN). After the batch the partials
  // are added pairwise, each column's 8 lanes are summed ((0+1)+(2+3))+((4+5)+(6+7)) with
  // vhaddps, which leaves up to 8 columns side by side in one register; then C (beta = 1), the
  // bias and the activation are applied to those, and they are stored.

  Vec dot_a() const { return vec(cols_ * plan_.k_split); }
  Vec dot_mask() const { return vec(cols_ * plan_.k_split + 1); }
  Vec dot_scratch() const { return vec(cols_ * plan_.k_split + 2); }

  void dot_tile(const BrgemmPanel& panel, int cols) {
    if constexpr (kZmm) {
      throw Error("brgemm: dot tiles are AVX2 only");
    } else {
      cols_ = cols;
      // C(0, n0): c + n0 * ldc * 4 (m = 1: the row offset is 0).
      mov(r_c, ptr[r_args + field(&BrgemmArgs::c)]);
      imul(r_tmp, r_col, static_cast<int>(d_.ldc * 4));
      add(r_c, r_tmp);
      for (int s = 0; s < plan_.k_split; ++s)
        for (int j = 0; j < cols; ++j) zero(acc(0, j, 1, s));
      const int r = d_.k % lanes_;
      if (r != 0) {
        std::vector<std::uint32_t> last(lanes_, 0u);
        for (int l = lanes_ - r; l < lanes_; ++l) last[static_cast<std::size_t>(l)] = 0xffffffffu;
        vmovups(dot_mask(), consts_.words(last));
      }
      batch_loop(panel, cols);
      fold_partials(panel, cols);
      // The column sums side by side in register 0 (a tile has at most 8 columns); every other
      // register is free from here on.
      const Ymm sum(0), t(15), t2(14);
      horizontal_sums(cols, t);
      if (d_.beta == 1) {
        load_row(t, r_c, cols, Xmm(t2.getIdx()));
        vaddps(sum, sum, t);
      }
      if (d_.bias == BrgemmBias::per_col) {
        mov(r_tmp, ptr[r_args + field(&BrgemmArgs::bias)]);
        lea(r_tmp, ptr[r_tmp + r_col * 4]);
        detail::load_lanes(*this, t, r_tmp, cols, Xmm(t2.getIdx()));
        vaddps(sum, sum, t);
      } else if (d_.bias == BrgemmBias::per_row) {
        mov(r_tmp, ptr[r_args + field(&BrgemmArgs::bias)]);
        vbroadcastss(t, ptr[r_tmp]);
        vaddps(sum, sum, t);
      }
      if (d_.activation != BrgemmActivation::none) {
        const UnaryOp op = d_.activation == BrgemmActivation::relu ? UnaryOp::relu : d_.unary;
        detail::ActivationEmitter<Ymm> act(*this, consts_);
        std::vector<Ymm> scratch{Ymm(13), Ymm(12), Ymm(11)};
        act.emit(op, d_.unary_alpha, sum, scratch);
      }
      store_row(r_c, sum, cols, Xmm(t.getIdx()));
    }
  }

  // Lane j of register 0 = the sum of the lanes of accumulator j, j < g (<= 8). Clobbers the
  // accumulators and t.
  void horizontal_sums(int g, const Ymm& t) {
    std::vector<int> level{};
    for (int p = 0; p < g; ++p) level.push_back(p);
    for (int round = 0; round < 2; ++round) {
      std::vector<int> next;
      for (std::size_t p = 0; p < level.size(); p += 2) {
        const Ymm x(level[p]), y(level[p + 1 < level.size() ? p + 1 : p]);
        vhaddps(x, x, y);
        next.push_back(level[p]);
      }
      level = next;
    }
    // level[0] = [c0 c1 c2 c3 | c0 c1 c2 c3] (sums of the low and of the high four lanes), level[1]
    // the same for columns 4..7.
    const Ymm lo(0);
    if (level.size() == 1) {
      vextractf128(Xmm(t.getIdx()), lo, 1);
      vaddps(Xmm(lo.getIdx()), Xmm(lo.getIdx()), Xmm(t.getIdx()));
    } else {
      const Ymm hi(level[1]);
      vperm2f128(t, lo, hi, 0x31);
      vperm2f128(lo, lo, hi, 0x20);
      vaddps(lo, lo, t);
    }
  }

  // C(0, n0 .. n0 + g - 1) into the low lanes of v (the others zero); ldc apart.
  void load_row(const Ymm& v, const Reg64& base, int g, const Xmm& high) {
    if (d_.ldc == 1) {
      detail::load_lanes(*this, v, base, g, high);
    } else {
      gather(v, base, 0, static_cast<int>(d_.ldc * 4), g, high);
    }
  }

  // `count` floats `step` bytes apart from base + disp into the low lanes of v, the others zero.
  void gather(const Ymm& v, const Reg64& base, int disp, int step, int count, const Xmm& high) {
    const Xmm low(v.getIdx());
    auto half = [&](const Xmm& x, int from, int n) {
      vmovss(x, ptr[base + disp + from * step]);
      for (int l = 1; l < n; ++l) vinsertps(x, x, ptr[base + disp + (from + l) * step], static_cast<std::uint8_t>(l << 4));
    };
    half(low, 0, std::min(count, 4));
    if (count > 4) {
      half(high, 4, count - 4);
      vinsertf128(v, v, high, 1);
    }
  }

  void store_row(const Reg64& base, const Ymm& v, int g, const Xmm& scratch) {
    if (d_.ldc == 1) {
      store(base, 0, Vec(v.getIdx()), g, {Vec(scratch.getIdx())});
      return;
    }
    const Xmm low(v.getIdx());
    for (int l = 0; l < g; ++l) {
      const Xmm from = l < 4 ? low : scratch;
      if (l == 4) vextractf128(scratch, v, 1);
      const auto at = ptr[base + static_cast<int>(l * d_.ldc * 4)];
      if (l % 4 == 0) {
        vmovss(at, from);
      } else {
        vextractps(at, from, static_cast<std::uint8_t>(l % 4));
      }
    }
  }

  void dot_k_loop(int cols) {
    const int chunks = d_.k / lanes_;  // whole vectors of k (the plan has k >= lanes)
    const int r = d_.k % lanes_;
    const int unroll = std::clamp(plan_.k_unroll / lanes_, 1, chunks);
    const int iterations = chunks / unroll;
    const int rest = chunks % unroll;
    if (iterations > 1 && unroll % plan_.k_split != 0) throw Error("brgemm plan: k_unroll is not a multiple of k_split vectors");
    const int a_step = static_cast<int>(unroll * lanes_ * d_.lda * 4);
    const int after = iterations * unroll;
    if (iterations > 1) {
      Label top;
      mov(r_k, iterations);
      L(top);
      for (int c = 0; c < unroll; ++c) dot_vector(cols, c * lanes_, c % plan_.k_split, false);
      add(r_a, a_step);
      add(r_b, unroll * kVectorBytes);
      dec(r_k);
      jnz(top, T_NEAR);
    } else {
      for (int c = 0; c < unroll; ++c) dot_vector(cols, c * lanes_, c % plan_.k_split, false);
      if (rest > 0 || r > 0) {
        add(r_a, a_step);
        add(r_b, unroll * kVectorBytes);
      }
    }
    for (int c = 0; c < rest; ++c) dot_vector(cols, c * lanes_, (after + c) % plan_.k_split, false);
    if (r > 0) dot_vector(cols, rest * lanes_ + r - lanes_, chunks % plan_.k_split, true);
  }

  // One vector of k, starting `first` k steps after r_a / r_b, into partial s; `masked`: only its
  // last k % 8 lanes count.
  void dot_vector(int cols, int first, int s, bool masked) {
    const Vec a = dot_a(), mask = dot_mask(), t = dot_scratch();
    const int a_disp = static_cast<int>(first * d_.lda * 4);
    if (d_.lda == 1) {
      if (masked) {
        vandps(a, mask, ptr[r_a + a_disp]);
      } else {
        vmovups(a, ptr[r_a + a_disp]);
      }
    } else {
      gather(Ymm(a.getIdx()), r_a, a_disp, static_cast<int>(d_.lda * 4), lanes_, Xmm(t.getIdx()));
      if (masked) vandps(a, a, mask);
    }
    for (int j = 0; j < cols; ++j) {
      const auto b = ptr[r_b + static_cast<int>(j * d_.ldb * 4 + first * 4)];
      if (masked) {
        vandps(t, mask, b);
        vfmadd231ps(acc(0, j, 1, s), a, t);
      } else {
        vfmadd231ps(acc(0, j, 1, s), a, b);
      }
    }
  }

  BrgemmDesc d_;
  BrgemmPlan plan_;
  BrgemmPlan fallback_;  // bf16_staged_ab: the body for calls with more entries than A's slots
  const int lanes_;       // accumulator lanes per register
  const bool f64_;        // f64 accumulators (and everything else f64)
  const bool bf16_in_;    // A and B in bf16: steps are pairs of k
  const int in_bytes_;    // an element of A and B
  const int out_bytes_;   // an element of C and the bias
  const int row_bytes_;   // one row of an A vector (and of an accumulator): 4, or 8 in f64
  detail::Bf16Emitter<Vec> bf16_;
  int cols_ = 1;  // columns of the tile being emitted
};

}  // namespace

std::unique_ptr<jit::x64::CodeBuffer> emit_brgemm(const BrgemmDesc& d, const BrgemmPlan& plan) {
  validate(d);
  const bool bf16 = d.types.in == jit::DataType::bf16;
  const bool dot_isa = jit::isa_traits(plan.isa).bf16_dot;
  const bool staged_ok = (plan.math != BrgemmMath::bf16_staged_b && plan.math != BrgemmMath::bf16_staged_ab) ||
                         jit::isa_traits(plan.isa).vector_bytes == 32;
  if (bf16 != (plan.math != BrgemmMath::fma) || (plan.math == BrgemmMath::bf16_dot && !dot_isa) || !staged_ok)
    throw Error("brgemm plan '" + to_string(plan) + "' does not fit " + to_string(d) +
                ": bf16 inputs need bf16_dot (avx512_bf16), bf16_widen, bf16_staged_b or bf16_staged_ab (AVX2), other "
                "types fma");
  if (plan.panels.empty() == false && plan.panels.front().dot && d.types != DataTypes{})
    throw Error("brgemm plan '" + to_string(plan) + "': dot tiles are f32 only");
  for (const BrgemmPanel& p : plan.panels) {
    if (p.dot && (!jit::isa_traits(plan.isa).brgemm.dot_tiles || d.m != 1 || d.k < plan.lanes || p.vectors != 1 ||
                  d.b_transposed))
      throw Error("brgemm plan '" + to_string(plan) + "': dot tiles need AVX2, m = 1, k >= 8 and B not transposed");
    for (const BrgemmColumnBlock& c : p.columns) {
      if (brgemm_tile_registers(plan, p, c.cols) > plan.vector_registers)
        throw Error("brgemm plan '" + to_string(plan) + "' needs more vector registers than " +
                    std::to_string(plan.vector_registers));
      if (p.dot && c.cols > plan.lanes) throw Error("brgemm plan '" + to_string(plan) + "': a dot tile has at most 8 columns");
    }
  }
  return detail::emit_kernel<BrgemmEmitter>(plan.isa, to_string(d), d, plan);
}

}  // namespace weft::tpp
