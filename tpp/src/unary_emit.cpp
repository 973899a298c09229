#include "unary_emit.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "activation_emit.hpp"
#include "kernel_frame.hpp"
#include "vec_traits.hpp"

namespace weft::tpp::detail {
namespace {

using namespace Xbyak;
using Xbyak::util::byte;
using Xbyak::util::ptr;
using Xbyak::util::word;

// Register use (SysV; no callee-saved register except r12/r13 in transpose kernels):
//   rdi args, then the inner loop counter; rsi A; rdx B; rcx aux (x or mask in); r8 mask out;
//   r9 ld_in bytes; r10 ld_out bytes; r11 column counter; rax scratch (tails, vmovmskps).
template <class Vmm>
class UnaryCode : public KernelFrame {
  using T = VecTraits<Vmm>;

 public:
  UnaryCode(const UnaryDesc& d, const UnaryPlan& p) : KernelFrame(T::bytes), d_(d), p_(p), act_(*this, consts_) {
    const bool transposes = d.transpose_out || d.op == UnaryOp::transpose;
    emit_function(transposes ? std::vector<Reg64>{r12, r13} : std::vector<Reg64>{}, [&] {
      load_args();
      if (transposes) {
        transpose();
      } else switch (d.op) {
        case UnaryOp::reduce_rows_sum:
        case UnaryOp::reduce_rows_max: reduce_rows(); break;
        case UnaryOp::reduce_cols_sum:
        case UnaryOp::reduce_cols_max: reduce_cols(); break;
        default:
          if (p.nontemporal) {
            streaming();
          } else {
            columns();
          }
      }
    });
  }

 private:
  static constexpr int kBytes = T::bytes;
  static constexpr int kLanes = T::lanes;
  bool max_op() const { return d_.op == UnaryOp::reduce_rows_max || d_.op == UnaryOp::reduce_cols_max; }

  void load_args() {
    mov(rsi, ptr[rdi + offsetof(UnaryArgs, in)]);
    mov(rdx, ptr[rdi + offsetof(UnaryArgs, out)]);
    mov(rcx, ptr[rdi + offsetof(UnaryArgs, aux)]);
    mov(r8, ptr[rdi + offsetof(UnaryArgs, mask)]);
    load_ld(r9, d_.ld_in, offsetof(UnaryArgs, ld_in));
    load_ld(r10, d_.ld_out, offsetof(UnaryArgs, ld_out));
  }
  void load_ld(const Reg64& r, std::int64_t ld, std::size_t field) {
    if (ld != 0) {
      mov(r, ld * 4);
    } else {
      mov(r, ptr[rdi + field]);
      shl(r, 2);
    }
  }

  Vmm data(int u) const { return Vmm(u); }
  Vmm aux(int u) const { return Vmm(4 + u); }
  Vmm spare() const { return Vmm(8); }  // of a piecewise tail load
  std::vector<Vmm> scratch() const { return {Vmm(12), Vmm(13), Vmm(14), Vmm(15)}; }

  bool uses_aux() const { return d_.op == UnaryOp::relu_bwd; }
  bool aux_is_mask() const { return d_.mask == ReluMask::bitmask; }
  bool writes_mask() const { return d_.op == UnaryOp::relu && d_.mask == ReluMask::bitmask; }
  int mask_bytes(int lanes_used) const { return (lanes_used + 7) / 8; }

  // ---- element-wise ops over columns -------------------------------------------------------------

  // `count` whole vectors (tail == 0) or one partial vector of `tail` lanes at the running pointers.
  void group(int count, int tail, bool nt) {
    const int n = tail > 0 ? 1 : count;
    if (d_.op == UnaryOp::zero) {
      vxorps(data(0), data(0), data(0));
      for (int u = 0; u < n; ++u) store(u * kBytes, data(0), tail, nt);
      return;
    }
    for (int u = 0; u < n; ++u) load(data(u), rsi + u * kBytes, tail);
    if (uses_aux() && !aux_is_mask()) {
      for (int u = 0; u < n; ++u) load(aux(u), rcx + u * kBytes, tail);
    }
    const auto s = scratch();
    for (int u = 0; u < n; ++u) {
      const Vmm v = data(u);
      const int lanes_used = tail > 0 ? tail : kLanes;
      const int mask_off = u * kLanes / 8;
      if (d_.op == UnaryOp::relu && writes_mask()) {
        relu_with_mask(v, s[0], mask_off, lanes_used);
      } else if (d_.op == UnaryOp::relu_bwd) {
        relu_bwd(v, aux(u), s[0], mask_off, lanes_used);
      } else {
        act_.emit(d_.op, d_.alpha, v, s);
      }
    }
    for (int u = 0; u < n; ++u) store(u * kBytes, data(u), tail, nt);
  }

  void load(const Vmm& v, const RegExp& at, int tail) {
    if (tail > 0 && !whole_tail_loads_) {
      load_tail(*this, v, at, tail, spare());
    } else {
      vmovups(v, ptr[at]);
    }
  }
  void store(int disp, const Vmm& v, int tail, bool nt) {
    if (tail > 0) {
      store_tail(*this, rdx + disp, v, tail);
    } else if (nt) {
      vmovntps(ptr[rdx + disp], v);
    } else {
      vmovups(ptr[rdx + disp], v);
    }
  }

  // Writes ceil(lanes_used / 8) bytes of the lane predicate held in eax.
  void store_mask_bits(int off, int lanes_used) {
    if (lanes_used < 8) and_(eax, (1 << lanes_used) - 1);
    if (lanes_used < 16 && lanes_used > 8) and_(eax, (1 << lanes_used) - 1);
    if (mask_bytes(lanes_used) == 1) {
      mov(byte[r8 + off], al);
    } else {
      mov(word[r8 + off], ax);
    }
  }

  void relu_with_mask(const Vmm& v, const Vmm& t, int off, int lanes_used) {
    if constexpr (T::is_zmm) {
      (void)t;
      const Opmask k(7);
      vcmpps(k, v, consts_.splat(0.0f), 6);
      vmovaps(v | k | T_z, v);
      kmovw(eax, k);
    } else {
      act_.relu_predicate(t, v);
      vandps(v, v, t);
      vmovmskps(eax, t);
    }
    store_mask_bits(off, lanes_used);
  }

  void relu_bwd(const Vmm& g, const Vmm& x, const Vmm& t, int off, int lanes_used) {
    if constexpr (T::is_zmm) {
      (void)t;
      const Opmask k(7);
      if (aux_is_mask()) {
        if (mask_bytes(lanes_used) == 1) {
          movzx(eax, byte[rcx + off]);
        } else {
          movzx(eax, word[rcx + off]);
        }
        kmovw(k, eax);
      } else {
        vcmpps(k, x, consts_.splat(0.0f), 6);
      }
      vmovaps(g | k | T_z, g);
    } else {
      if (aux_is_mask()) {
        // Spread the byte's 8 bits over the 8 lanes: lane i keeps bit i, compared to itself.
        movzx(eax, byte[rcx + off]);
        vmovd(Xmm(t.getIdx()), eax);
        vpbroadcastd(t, Xmm(t.getIdx()));
        const Address bits = consts_.words({1, 2, 4, 8, 16, 32, 64, 128});
        vpand(t, t, bits);
        vpcmpeqd(t, t, bits);
      } else {
        act_.relu_predicate(t, x);
      }
      vandps(g, g, t);
    }
  }

  void advance(std::int64_t vectors) {
    const std::int64_t bytes = vectors * kBytes;
    if (d_.op != UnaryOp::zero) add(rsi, static_cast<std::uint32_t>(bytes));
    add(rdx, static_cast<std::uint32_t>(bytes));
    if (uses_aux()) {
      add(rcx, static_cast<std::uint32_t>(aux_is_mask() ? vectors * kLanes / 8 : bytes));
    }
    if (writes_mask()) add(r8, static_cast<std::uint32_t>(vectors * kLanes / 8));
  }

  // One column of p_.rows elements at the running pointers, which end where they started.
  void column() {
    emit_column_sweep(
        *this, rdi, p_.full_vectors, p_.unroll, p_.tail,
        [&](int count, int tail) { group(count, tail, false); }, [&](int count) { advance(count); });
    // Back to the column start, then on to the next column.
    const std::int64_t done = p_.full_vectors;
    if (done > 0) {
      if (d_.op != UnaryOp::zero) sub(rsi, static_cast<std::uint32_t>(done * kBytes));
      sub(rdx, static_cast<std::uint32_t>(done * kBytes));
      if (uses_aux()) sub(rcx, static_cast<std::uint32_t>(aux_is_mask() ? done * kLanes / 8 : done * kBytes));
      if (writes_mask()) sub(r8, static_cast<std::uint32_t>(done * kLanes / 8));
    }
  }

  void next_column() {
    if (d_.op != UnaryOp::zero) add(rsi, r9);
    add(rdx, r10);
    if (uses_aux()) {
      if (aux_is_mask()) {
        add(rcx, static_cast<std::uint32_t>(mask_ld(d_.m)));
      } else {
        add(rcx, r9);
      }
    }
    if (writes_mask()) add(r8, static_cast<std::uint32_t>(mask_ld(d_.m)));
  }

  // The columns; where a later column follows within reach, a partial vector is loaded whole
  // (whole_tail_columns). Not with ld_in given at call time: the kernel does not check it (the
  // tensor layer passes 0 for a broadcast input).
  void columns() {
    const bool may_load_whole = !kOpmaskTails<Vmm> && d_.op != UnaryOp::zero && d_.ld_in != 0;
    const std::int64_t whole = may_load_whole ? whole_tail_columns(p_.cols, kLanes, p_.tail, d_.ld_in) : 0;
    emit_column_runs(*this, r11, p_.cols, whole, [&](bool whole_tails) {
      whole_tail_loads_ = whole_tails;
      column();
      if (p_.cols > 1) next_column();
    });
    whole_tail_loads_ = false;
  }

  // ---- large contiguous arrays: non-temporal stores, which need aligned addresses ------------------

  void scalar_element() {
    const Xmm v(0);
    std::vector<Xmm> s{Xmm(12), Xmm(13), Xmm(14), Xmm(15)};
    if (d_.op == UnaryOp::zero) {
      vxorps(v, v, v);
    } else {
      vmovss(v, ptr[rsi]);
      ActivationEmitter<Xmm> act(*this, consts_);
      act.emit(d_.op, d_.alpha, v, s);
      add(rsi, 4);
    }
    vmovss(ptr[rdx], v);
    add(rdx, 4);
  }

  void streaming() {
    emit_streaming_sweep(
        *this, rdi, edx, p_.rows, p_.unroll, kLanes, [&] { scalar_element(); },
        [&](int count) { group(count, 0, true); }, [&](int count) { advance(count); });
  }

  // ---- reductions ----------------------------------------------------------------------------------

  Address identity() { return max_op() ? consts_.splat_bits(0xff800000u) : consts_.splat(0.0f); }


  // Opmask tails: sets tail_k() for load_reduce_tail. Called before the reduction loops, whose
  // column pointer is rax, the register this clobbers.
  void set_reduce_tail_mask(int tail) { set_tail_mask<Vmm>(*this, tail, eax); }

  // Partial vector for a reduction: lanes past the tail hold the identity (0 or -inf). Opmask tails
  // need tail_k() set by set_reduce_tail_mask(tail).
  void load_reduce_tail(const Vmm& v, const RegExp& at, int tail) {
    if constexpr (kOpmaskTails<Vmm>) {
      vmovaps(v, identity());
      vmovups(v | tail_k(), ptr[at]);
    } else {
      load_partial(*this, v, at, tail, spare());
      // The piecewise load zeroes the lanes past the tail: the identity of a sum, not of a max.
      if (max_op()) vblendps(v, v, identity(), static_cast<std::uint8_t>(0xffu << tail));
    }
  }

  // B[i] = fold over columns: vectors along M, accumulated across the N columns.
  void reduce_rows() {
    const std::int64_t full = p_.full_vectors;
    const int u = p_.unroll;
    std::int64_t done = 0;
    auto chunk = [&](int count, int tail) {
      const int n = tail > 0 ? 1 : count;
      for (int k = 0; k < n; ++k) vmovaps(data(k), identity());
      if (tail > 0) set_reduce_tail_mask(tail);
      Label loop;
      mov(rax, rsi);
      mov(r11, d_.n);
      L(loop);
      for (int k = 0; k < n; ++k) {
        if (tail > 0) {
          load_reduce_tail(aux(k), rax + k * kBytes, tail);
        } else {
          vmovups(aux(k), ptr[rax + k * kBytes]);
        }
        fold(data(k), aux(k));
      }
      add(rax, r9);
      dec(r11);
      jnz(loop, T_NEAR);
      for (int k = 0; k < n; ++k) store(k * kBytes, data(k), tail, false);
    };
    while (done + u <= full) {
      chunk(u, 0);
      add(rsi, u * kBytes);
      add(rdx, u * kBytes);
      done += u;
    }
    if (done < full) {
      const int r = static_cast<int>(full - done);
      chunk(r, 0);
      add(rsi, r * kBytes);
      add(rdx, r * kBytes);
    }
    if (p_.tail > 0) chunk(1, p_.tail);
  }

  // Folds all lanes of v into lane 0 (clobbers v's register and t).
  void horizontal(const Vmm& v, const Vmm& t) {
    const Ymm y(v.getIdx());
    const Xmm x(v.getIdx());
    const Xmm tx(t.getIdx());
    if constexpr (T::is_zmm) {
      vextractf64x4(Ymm(t.getIdx()), v, 1);
      fold(y, Ymm(t.getIdx()));
    }
    vextractf128(tx, y, 1);
    fold(x, tx);
    vmovhlps(tx, tx, x);
    fold(x, tx);
    vshufps(tx, x, x, 1);
    fold(x, tx);
  }
  // vmaxps returns its second operand when either is NaN: a NaN element leaves acc unchanged.
  template <class V>
  void fold(const V& acc, const V& v) {
    if (max_op()) {
      vmaxps(acc, v, acc);
    } else {
      vaddps(acc, acc, v);
    }
  }

  // B[j] = fold over the rows of column j.
  void reduce_cols() {
    Label col;
    mov(r11, d_.n);
    L(col);
    const int u = p_.unroll;
    for (int k = 0; k < u; ++k) vmovaps(data(k), identity());
    const std::int64_t blocks = p_.full_vectors / u;
    const int rem = static_cast<int>(p_.full_vectors % u);
    if (p_.tail > 0) set_reduce_tail_mask(p_.tail);
    mov(rax, rsi);
    if (blocks > 0) {
      Label loop;
      mov(rdi, blocks);
      L(loop);
      for (int k = 0; k < u; ++k) fold(data(k), load_into(aux(k), ptr[rax + k * kBytes]));
      add(rax, u * kBytes);
      dec(rdi);
      jnz(loop, T_NEAR);
    }
    for (int k = 0; k < rem; ++k) fold(data(k), load_into(aux(k), ptr[rax + k * kBytes]));
    if (p_.tail > 0) {
      load_reduce_tail(aux(0), rax + rem * kBytes, p_.tail);
      fold(data(u - 1), aux(0));
    }
    for (int k = 1; k < u; ++k) fold(data(0), data(k));
    horizontal(data(0), aux(0));
    vmovss(ptr[rdx], Xmm(0));
    add(rdx, 4);
    add(rsi, r9);
    dec(r11);
    jnz(col, T_NEAR);
  }
  Vmm load_into(const Vmm& v, const Address& a) {
    vmovups(v, a);
    return v;
  }

  // ---- transpose: 8 x 8 blocks in ymm registers (on AVX-512 too: it is shuffle-bound either way) --

  // Loads block columns (A rows i0.. of columns j0..j0+nj-1), transposes, stores mi B columns.
  // Columns from `first_piecewise` on load only their mi rows (the tail policy); the others load
  // 8 rows, those past the block landing in transposed rows that are never stored.
  void transpose_block(int mi, int nj, int first_piecewise = 8) {
    const Ymm r[8] = {ymm0, ymm1, ymm2, ymm3, ymm4, ymm5, ymm6, ymm7};
    const Ymm t[8] = {ymm8, ymm9, ymm10, ymm11, ymm12, ymm13, ymm14, ymm15};
    // Column c of the block: [rsi + c*lda] for c < 4, [rcx + (c-4)*lda] for c >= 4; rax = 3*lda.
    auto a_col = [&](int c) -> RegExp {
      const Reg64& base = c < 4 ? rsi : rcx;
      switch (c % 4) {
        case 0: return base;
        case 1: return base + r9;
        case 2: return base + r9 * 2;
        default: return base + rax;
      }
    };
    for (int c = 0; c < 8; ++c) {
      if (c >= nj) {
        vxorps(r[c], r[c], r[c]);
      } else {
        // Ymm code on every ISA: the piecewise tail (t[0] is free until the shuffles).
        load_lanes(*this, r[c], a_col(c), c < first_piecewise ? 8 : mi, Xmm(t[0].getIdx()));
      }
    }
    if (d_.transpose_out && d_.op != UnaryOp::copy) {
      // The op commutes with the transpose; t[1..3] are free until the shuffles.
      ActivationEmitter<Ymm> act(*this, consts_);
      const Ymm s[] = {t[1], t[2], t[3]};
      for (int c = 0; c < nj; ++c) act.emit(d_.op, d_.alpha, r[c], s);
    }
    for (int k = 0; k < 4; ++k) {
      vunpcklps(t[2 * k], r[2 * k], r[2 * k + 1]);
      vunpckhps(t[2 * k + 1], r[2 * k], r[2 * k + 1]);
    }
    for (int h = 0; h < 2; ++h) {
      const int b = 4 * h;
      vshufps(r[b + 0], t[b + 0], t[b + 2], 0x44);
      vshufps(r[b + 1], t[b + 0], t[b + 2], 0xEE);
      vshufps(r[b + 2], t[b + 1], t[b + 3], 0x44);
      vshufps(r[b + 3], t[b + 1], t[b + 3], 0xEE);
    }
    for (int k = 0; k < 4; ++k) {
      vperm2f128(t[k], r[k], r[k + 4], 0x20);
      vperm2f128(t[k + 4], r[k], r[k + 4], 0x31);
    }
    // Row k of the block is B column i0 + k: [rdx + k*ldb] via rdx / r11 (= rdx + 4*ldb), r8 = 3*ldb.
    for (int k = 0; k < mi; ++k) {
      const Reg64& base = k < 4 ? rdx : r11;
      const RegExp at = k % 4 == 0 ? RegExp(base) : k % 4 == 1 ? base + r10 : k % 4 == 2 ? base + r10 * 2 : base + r8;
      store_lanes(*this, at, t[k], nj, Xmm(t[k].getIdx()));
    }
  }

  // A row-block loop (over i) for one column block of width nj: rsi/rdx at the block row 0. The
  // partial row block loads its columns from `first_piecewise` on piecewise.
  void transpose_row_blocks(int nj, int first_piecewise = 8) {
    const std::int64_t full = d_.m / 8;
    const int tail = static_cast<int>(d_.m % 8);
    push(rsi);
    push(rdx);
    auto setup = [&] {
      lea(rcx, ptr[rsi + r9 * 4]);
      lea(r11, ptr[rdx + r10 * 4]);
    };
    if (full > 0) {
      Label loop;
      mov(r13, full);
      L(loop);
      setup();
      transpose_block(8, nj);
      add(rsi, 32);
      lea(rdx, ptr[rdx + r10 * 8]);
      dec(r13);
      jnz(loop, T_NEAR);
    }
    if (tail > 0) {
      setup();
      transpose_block(tail, nj, first_piecewise);
    }
    pop(rdx);
    pop(rsi);
  }

  // The first column of A whose partial row block must be loaded piecewise. Loading all 8 rows of
  // the partial block of column j reads 8 - m % 8 elements past row m, which stay inside A (in
  // later columns) when (n - 1 - j) * lda >= 8 - m % 8: only the last few columns (at most 7)
  // need the piecewise loads. An lda given at call time is unchecked by the kernel (the tensor
  // layer passes 0 for a broadcast input): then every column loads piecewise.
  std::int64_t first_piecewise_column() const {
    const int tail = static_cast<int>(d_.m % 8);
    if (tail == 0) return d_.n;
    return d_.ld_in == 0 ? 0 : whole_tail_columns(d_.n, 8, tail, d_.ld_in);
  }

  // Column blocks of 8 in a loop while none of their columns loads piecewise, then the rest one
  // by one.
  void transpose() {
    lea(rax, ptr[r9 + r9 * 2]);
    lea(r8, ptr[r10 + r10 * 2]);
    const std::int64_t full = d_.n / 8;
    const int tail = static_cast<int>(d_.n % 8);
    const std::int64_t piecewise = first_piecewise_column();
    const std::int64_t looped = std::min(full, piecewise / 8);
    auto next_column_block = [&] {
      lea(rsi, ptr[rsi + r9 * 8]);
      add(rdx, 32);
    };
    auto first_piecewise_in = [&](std::int64_t block) {
      return static_cast<int>(std::clamp<std::int64_t>(piecewise - 8 * block, 0, 8));
    };
    if (looped > 0) {
      Label loop;
      mov(r12, looped);
      L(loop);
      transpose_row_blocks(8);
      next_column_block();
      dec(r12);
      jnz(loop, T_NEAR);
    }
    for (std::int64_t block = looped; block < full; ++block) {
      transpose_row_blocks(8, first_piecewise_in(block));
      next_column_block();
    }
    if (tail > 0) transpose_row_blocks(tail, first_piecewise_in(full));
  }

  UnaryDesc d_;
  UnaryPlan p_;
  ActivationEmitter<Vmm> act_;
  bool whole_tail_loads_ = false;  // the column being emitted loads its partial vectors whole
};

}  // namespace

std::unique_ptr<weft::jit::CodeBuffer> emit_unary(const UnaryDesc& desc, const UnaryPlan& plan) {
  return emit_kernel<UnaryCode>(plan.isa, "unary " + to_string(desc), desc, plan);
}

}  // namespace weft::tpp::detail
