#include "unary_emit.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

#include "activation_emit.hpp"
#include "bf16_emit.hpp"
#include "typed_moves.hpp"
#include "kernel_frame.hpp"
#include "min_max_emit.hpp"
#include "op_properties.hpp"
#include "vec_traits.hpp"
#include "weft/jit/data_type.hpp"

namespace weft::tpp::detail {
namespace {

using namespace Xbyak;
using Xbyak::util::byte;
using Xbyak::util::dword;
using Xbyak::util::ptr;
using Xbyak::util::qword;
using Xbyak::util::word;
using weft::jit::DataType;

int log2_size(DataType type) { return type == DataType::f64 ? 3 : type == DataType::bf16 ? 1 : 2; }

// Register use (SysV; no callee-saved register except r12/r13 in transpose kernels):
//   rdi args, then the inner loop counter; rsi A; rdx B; rcx aux (x or mask in; vnni2: the second
//   column of a pair); r8 mask out; r9 ld_in bytes; r10 ld_out bytes; r11 column counter; rax
//   scratch (tails, vmovmskps, bf16 scalars).
// Vector registers: 0-3 data, 4-7 aux (vnni2: the second column), 8 the spare of piecewise tail
// loads, 9 vnni2's interleave temporary, 12-15 the op's scratch (a max reduction's: 12-13, and
// 9-11, 14 its NaN lanes), 12-13 also bf16 rounding's (after the op). Opmasks: k1 tails, k2-k3 bf16
// rounding, k7 the op.
//
// Data types: elements are loaded into vectors of the compute type (bf16 widened to f32 lanes by
// Bf16Emitter, f64 as doubles) and stored as types.out; pointers advance in bytes of each type.
template <class Vmm>
class UnaryCode : public KernelFrame {
  using T = VecTraits<Vmm>;

 public:
  UnaryCode(const UnaryDesc& d, const UnaryPlan& p)
      : KernelFrame(T::bytes),
        d_(d),
        p_(p),
        act_(*this, consts_),
        bf16_(*this, consts_, weft::jit::isa_traits(p.isa).bf16_dot),
        lanes_(p.lanes),
        in_bytes_(static_cast<int>(weft::jit::size_of(d.types.in))),
        out_bytes_(static_cast<int>(weft::jit::size_of(d.types.out))),
        keep_bits_(keeps_bf16_bits(d)),
        pairs_(d.types.in == DataType::bf16 && d.types.out == DataType::bf16 && bf16_.pairs() &&
               (is_elementwise(d.op) || d.op == UnaryOp::relu_bwd) && d.mask == ReluMask::none && !d.transpose_out) {
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
        case UnaryOp::vnni2_pack: vnni_pack(); break;
        case UnaryOp::vnni2_unpack: vnni_unpack(); break;
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
  bool max_op() const { return d_.op == UnaryOp::reduce_rows_max || d_.op == UnaryOp::reduce_cols_max; }

  void load_args() {
    mov(rsi, ptr[rdi + offsetof(UnaryArgs, in)]);
    mov(rdx, ptr[rdi + offsetof(UnaryArgs, out)]);
    mov(rcx, ptr[rdi + offsetof(UnaryArgs, aux)]);
    mov(r8, ptr[rdi + offsetof(UnaryArgs, mask)]);
    load_ld(r9, d_.ld_in, offsetof(UnaryArgs, ld_in), log2_size(d_.types.in));
    load_ld(r10, d_.ld_out, offsetof(UnaryArgs, ld_out), log2_size(d_.types.out));
  }
  // r = ld in bytes of elements of 2^shift bytes.
  void load_ld(const Reg64& r, std::int64_t ld, std::size_t field, int shift) {
    if (ld != 0) {
      mov(r, ld << shift);
    } else {
      mov(r, ptr[rdi + field]);
      shl(r, shift);
    }
  }

  bool f64() const { return d_.types.compute == DataType::f64; }
  int in_step() const { return lanes_ * in_bytes_; }    // bytes of A per vector
  int out_step() const { return lanes_ * out_bytes_; }  // bytes of B per vector

  Vmm data(int u) const { return Vmm(u); }
  Vmm aux(int u) const { return Vmm(4 + u); }
  Vmm spare() const { return Vmm(8); }  // of a piecewise tail load
  std::vector<Vmm> scratch() const { return {Vmm(12), Vmm(13), Vmm(14), Vmm(15)}; }
  // bf16 rounding's scratch: the op's, free again once the op is done.
  std::vector<Vmm> rounding_scratch() const { return {Vmm(12), Vmm(13)}; }

  bool uses_aux() const { return d_.op == UnaryOp::relu_bwd; }
  bool aux_is_mask() const { return d_.mask == ReluMask::bitmask; }
  bool writes_mask() const { return d_.op == UnaryOp::relu && d_.mask == ReluMask::bitmask; }
  int mask_bytes(int lanes_used) const { return (lanes_used + 7) / 8; }

  // ---- typed loads and stores ----------------------------------------------------------------------

  // The shared typed moves (typed_moves.hpp) with this kernel's registers and types.
  void load_elements(const Vmm& v, const RegExp& at, int count, DataType type) {
    detail::load_elements(*this, bf16_, v, at, count, lanes_, type, spare());
  }
  void store_elements(const RegExp& at, const Vmm& v, int count, bool nt) {
    detail::store_elements(*this, bf16_, at, v, count, lanes_, d_.types.out, nt, keep_bits_, rounding_scratch());
  }
  void store_bf16_bits(const RegExp& at, const Vmm& v, int count, bool nt) {
    detail::store_bf16_bits(*this, bf16_, at, v, count, lanes_, nt);
  }


  // One element of `type` at `at` into lane 0 of x as the compute type (clobbers eax for bf16).
  void load_scalar(const Xmm& x, const RegExp& at, DataType type) {
    switch (type) {
      case DataType::f32: vmovss(x, dword[at]); return;
      case DataType::f64: vmovsd(x, qword[at]); return;
      case DataType::bf16:
        movzx(eax, word[at]);
        shl(eax, 16);
        vmovd(x, eax);
        return;
    }
  }
  // Lane 0 of x to `at` as types.out (bf16: rounded, or narrowed as store_elements does, on ymm
  // registers whatever the kernel's vectors: bit for bit the same on every ISA; x is clobbered).
  void store_scalar(const RegExp& at, const Xmm& x) {
    detail::store_scalar(*this, consts_, at, x, d_.types.out, keep_bits_, Ymm(12), Ymm(13));
  }

  // x = op(x) in f64 for the ops validate() admits in f64 (x and t of the same register type; Zmm
  // code selects with k7 like the activation emitter).
  template <class V>
  void f64_op(const V& x, const V& t) {
    switch (d_.op) {
      case UnaryOp::copy: return;
      case UnaryOp::relu: return f64_keep_passing(x, x, t);
      case UnaryOp::square: vmulpd(x, x, x); return;
      case UnaryOp::reciprocal:
        vmovapd(t, consts_.splat_f64(1.0));
        vdivpd(x, t, x);
        return;
      case UnaryOp::sqrt: vsqrtpd(x, x); return;
      case UnaryOp::increment: vaddpd(x, x, consts_.splat_f64(d_.alpha)); return;
      case UnaryOp::decrement: vsubpd(x, x, consts_.splat_f64(d_.alpha)); return;
      case UnaryOp::scale: vmulpd(x, x, consts_.splat_f64(d_.alpha)); return;
      default: throw weft::Error("unary emitter: no f64 sequence for " + to_string(d_.op));
    }
  }
  // g = g where x passes ReLU (x > 0 or NaN), else +0; in f64. t is scratch.
  template <class V>
  void f64_keep_passing(const V& g, const V& x, const V& t) {
    constexpr int kNotLessEqualUnordered = 6;
    if constexpr (VecTraits<V>::is_zmm) {
      (void)t;
      const Opmask k(7);
      vcmppd(k, x, consts_.splat(0.0f), kNotLessEqualUnordered);  // +0.0f's bits are +0.0's too
      vmovapd(g | k | T_z, g);
    } else {
      vcmppd(t, x, consts_.splat(0.0f), kNotLessEqualUnordered);
      vandpd(g, g, t);
    }
  }

  // ---- element-wise ops over columns -------------------------------------------------------------

  // `count` whole vectors (tail == 0) or one partial vector of `tail` lanes at the running pointers.
  void group(int count, int tail, bool nt) {
    const int n = tail > 0 ? 1 : count;
    if (d_.op == UnaryOp::zero) {
      vxorps(data(0), data(0), data(0));
      for (int u = 0; u < n; ++u) store_zero(u * out_step(), data(0), tail, nt);
      return;
    }
    for (int u = 0; u < n; ++u) {
      if (pair_at(u, n, tail)) {
        bf16_.load_pair(data(u), data(u + 1), rsi + u * in_step());
        ++u;
      } else {
        load(data(u), rsi + u * in_step(), tail);
      }
    }
    if (uses_aux() && !aux_is_mask()) {
      for (int u = 0; u < n; ++u) {
        if (pair_at(u, n, tail)) {
          bf16_.load_pair(aux(u), aux(u + 1), rcx + u * in_step());
          ++u;
        } else {
          load(aux(u), rcx + u * in_step(), tail);
        }
      }
    }
    const auto s = scratch();
    for (int u = 0; u < n; ++u) {
      const Vmm v = data(u);
      const int lanes_used = tail > 0 ? tail : lanes_;
      const int mask_off = u * lanes_ / 8;
      if (d_.op == UnaryOp::relu && writes_mask()) {
        relu_with_mask(v, s[0], mask_off, lanes_used);
      } else if (d_.op == UnaryOp::relu_bwd) {
        relu_bwd(v, aux(u), s[0], mask_off, lanes_used);
      } else if (f64()) {
        f64_op(v, s[0]);
      } else {
        act_.emit(d_.op, d_.alpha, v, s);
      }
    }
    for (int u = 0; u < n; ++u) {
      if (pair_at(u, n, tail)) {
        store_pair(u * out_step(), data(u), data(u + 1), nt);
        ++u;
      } else {
        store(u * out_step(), data(u), tail, nt);
      }
    }
  }

  // Whether vectors u and u + 1 of a group of n whole vectors are done as a bf16 pair
  // (Bf16Emitter::load_pair: one full vector of bf16 in and out, in an order element-wise work
  // does not see).
  bool pair_at(int u, int n, int tail) const { return pairs_ && tail == 0 && u % 2 == 0 && u + 1 < n; }
  void store_pair(int disp, const Vmm& lo, const Vmm& hi, bool nt) {
    if (keep_bits_) {
      bf16_.narrow_pair(lo, hi);
    } else {
      bf16_.round_pair(lo, hi, rounding_scratch());
    }
    if (nt) {
      vmovntdq(ptr[rdx + disp], lo);
    } else {
      vmovups(ptr[rdx + disp], lo);
    }
  }

  void load(const Vmm& v, const RegExp& at, int tail) {
    const int count = tail > 0 && !whole_tail_loads_ ? tail : lanes_;
    if (count < lanes_) set_tail_mask<Vmm>(*this, count, eax);
    load_elements(v, at, count, d_.types.in);
  }
  void store(int disp, const Vmm& v, int tail, bool nt) {
    const int count = tail > 0 ? tail : lanes_;
    if (count < lanes_) set_tail_mask<Vmm>(*this, count, eax);
    store_elements(rdx + disp, v, count, nt);
  }
  // The zero vector v (left zero, for the next store) as types.out: bf16 zeros need no rounding.
  void store_zero(int disp, const Vmm& v, int tail, bool nt) {
    if (d_.types.out != DataType::bf16) return store(disp, v, tail, nt);  // f32 / f64 tails keep zeros zero
    const int count = tail > 0 ? tail : lanes_;
    if (count < lanes_) set_tail_mask<Vmm>(*this, count, eax);
    store_bf16_bits(rdx + disp, v, count, nt);
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
    if (f64()) return f64_keep_passing(g, x, t);  // from x only: f64 has no bitmask (validate)
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
    const std::int64_t in_bytes = vectors * in_step();
    if (d_.op != UnaryOp::zero) add(rsi, static_cast<std::uint32_t>(in_bytes));
    add(rdx, static_cast<std::uint32_t>(vectors * out_step()));
    if (uses_aux()) {
      add(rcx, static_cast<std::uint32_t>(aux_is_mask() ? vectors * lanes_ / 8 : in_bytes));
    }
    if (writes_mask()) add(r8, static_cast<std::uint32_t>(vectors * lanes_ / 8));
  }

  // One column of p_.rows elements at the running pointers, which end where they started.
  void column() {
    emit_column_sweep(
        *this, rdi, p_.full_vectors, p_.unroll, p_.tail,
        [&](int count, int tail) { group(count, tail, false); }, [&](int count) { advance(count); });
    // Back to the column start, then on to the next column.
    const std::int64_t done = p_.full_vectors;
    if (done > 0) {
      if (d_.op != UnaryOp::zero) sub(rsi, static_cast<std::uint32_t>(done * in_step()));
      sub(rdx, static_cast<std::uint32_t>(done * out_step()));
      if (uses_aux()) sub(rcx, static_cast<std::uint32_t>(aux_is_mask() ? done * lanes_ / 8 : done * in_step()));
      if (writes_mask()) sub(r8, static_cast<std::uint32_t>(done * lanes_ / 8));
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
    const std::int64_t whole = may_load_whole ? whole_tail_columns(p_.cols, lanes_, p_.tail, d_.ld_in) : 0;
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
      load_scalar(v, rsi, d_.types.in);
      if (f64()) {
        f64_op(v, s[0]);
      } else {
        ActivationEmitter<Xmm> act(*this, consts_);
        act.emit(d_.op, d_.alpha, v, s);
      }
      add(rsi, in_bytes_);
    }
    store_scalar(rdx, v);
    add(rdx, out_bytes_);
  }

  void streaming() {
    emit_streaming_sweep(
        *this, rdi, edx, p_.rows, p_.unroll, lanes_, out_bytes_, (pairs_ ? 2 : 1) * out_step(), [&] { scalar_element(); },
        [&](int count) { group(count, 0, true); }, [&](int count) { advance(count); });
  }

  // ---- reductions ----------------------------------------------------------------------------------

  // 0 for a sum, -inf for a max, in the compute type (+0.0f's bits are +0.0's too).
  Address identity() {
    if (!max_op()) return consts_.splat(0.0f);
    return f64() ? consts_.splat_f64(-std::numeric_limits<double>::infinity()) : consts_.splat_bits(0xff800000u);
  }


  // Opmask tails: sets tail_k() for load_reduce_tail. Called before the reduction loops, whose
  // column pointer is rax, the register this clobbers.
  void set_reduce_tail_mask(int tail) { set_tail_mask<Vmm>(*this, tail, eax); }

  // Partial vector for a reduction: lanes past the tail hold the identity (0 or -inf). Opmask tails
  // need tail_k() set by set_reduce_tail_mask(tail).
  void load_reduce_tail(const Vmm& v, const RegExp& at, int tail) {
    if constexpr (kOpmaskTails<Vmm>) {
      if (d_.types.in == DataType::f32) {
        vmovaps(v, identity());
        vmovups(v | tail_k(), ptr[at]);
      } else if (f64()) {
        vmovapd(v, identity());
        vmovupd(v | tail_k(), ptr[at]);  // tail_k() has a bit per double
      } else {
        load_elements(v, at, tail, d_.types.in);
        // The widened lanes past the tail are zero: the identity of a sum, not of a max.
        if (max_op()) {
          vmovaps(spare(), identity());
          vblendmps(v | tail_k(), spare(), v);
        }
      }
    } else {
      load_elements(v, at, tail, d_.types.in);
      // The piecewise load zeroes the lanes past the tail: the identity of a sum, not of a max. (A
      // double is two float lanes of the blend.)
      const int floats = f64() ? 2 * tail : tail;
      if (max_op()) vblendps(v, v, identity(), static_cast<std::uint8_t>(0xffu << floats));
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
      start_seen(n);
      if (tail > 0) set_reduce_tail_mask(tail);
      Label loop;
      mov(rax, rsi);
      mov(r11, d_.n);
      L(loop);
      for (int k = 0; k < n; ++k) {
        if (tail > 0) {
          load_reduce_tail(aux(k), rax + k * in_step(), tail);
        } else {
          load_elements(aux(k), rax + k * in_step(), lanes_, d_.types.in);
        }
        fold(data(k), aux(k), k);
      }
      add(rax, r9);
      dec(r11);
      jnz(loop, T_NEAR);
      finish_seen(n);
      for (int k = 0; k < n; ++k) store(k * out_step(), data(k), tail, false);
    };
    while (done + u <= full) {
      chunk(u, 0);
      add(rsi, u * in_step());
      add(rdx, u * out_step());
      done += u;
    }
    if (done < full) {
      const int r = static_cast<int>(full - done);
      chunk(r, 0);
      add(rsi, r * in_step());
      add(rdx, r * out_step());
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
      merge(y, Ymm(t.getIdx()));
    }
    vextractf128(tx, y, 1);
    merge(x, tx);
    if (f64()) {
      vunpckhpd(tx, x, x);
      merge(x, tx);
      return;
    }
    vmovhlps(tx, tx, x);
    merge(x, tx);
    vshufps(tx, x, x, 1);
    merge(x, tx);
  }

  // The reduction loops fold each loaded vector v into accumulator k: a sum adds; a max keeps the
  // accumulator's dependency chain to one instruction and sets what it does not see aside in
  // seen(k), which finish_seen() applies at the end.
  // - AVX-512: vrangeps orders the zeros but ignores a quiet NaN; seen(k) gets all ones in the
  //   lanes where v is NaN, ORed into the result (the NaN of min_max_emit.hpp).
  // - AVX2: vmaxps(v, acc) keeps acc where v is NaN or both are zeros; seen(k) gets all ones where
  //   v is NaN and 0x7fffffff where v is +0 (0x7fff... in f64), so that at the end a lane that saw
  //   a +0 has its sign cleared (the max is +0 or more there) and a lane that saw a NaN becomes one.
  // The full rule (merge()) on every vector lengthens the chain each column waits on:
  // reduce_rows_max over 256 columns of 3 and 15 rows took 1.65x (AVX-512) and 2.2-2.4x (AVX2) the
  // time of the old NaN-ignoring vmaxps fold with it (tail/unary_reduce_rows_max, minimum ticks
  // per call, Ice Lake-class Xeon); see docs/tpp_eltwise.md for this fold's figures.
  // v is clobbered, and register 12 (AVX2) or k7 (AVX-512).
  void fold(const Vmm& acc, const Vmm& v, int k) {
    if (!max_op()) return merge(acc, v);
    const Vmm flags = seen(k);
    if constexpr (T::is_zmm) {
      const Opmask nan(7);
      if (f64()) {
        vcmppd(nan, v, v, 3);
        vpternlogq(flags | nan, flags, flags, 0xff);
        vrangepd(acc, acc, v, 0x5);
      } else {
        vcmpps(nan, v, v, 3);
        vpternlogd(flags | nan, flags, flags, 0xff);
        vrangeps(acc, acc, v, 0x5);
      }
    } else {
      const Vmm t(12);
      const Address zero = consts_.splat_bits(0u);
      if (f64()) {
        vcmppd(t, v, v, 3);
        vpor(flags, flags, t);
        vpcmpeqq(t, v, zero);
        vpsrlq(t, t, 1);
        vpor(flags, flags, t);
        vmaxpd(acc, v, acc);
      } else {
        vcmpps(t, v, v, 3);
        vpor(flags, flags, t);
        vpcmpeqd(t, v, zero);
        vpsrld(t, t, 1);
        vpor(flags, flags, t);
        vmaxps(acc, v, acc);
      }
    }
  }
  // Registers 9, 10, 11, 14: free in reductions (vnni2's temporary, the op's scratch).
  Vmm seen(int k) const { return Vmm(k < 3 ? 9 + k : 14); }
  void start_seen(int count) {
    if (!max_op()) return;
    for (int k = 0; k < count; ++k) {
      if constexpr (T::is_zmm) {
        vpxord(seen(k), seen(k), seen(k));
      } else {
        vpxor(seen(k), seen(k), seen(k));
      }
    }
  }
  // Clobbers register 12 (AVX2).
  void finish_seen(int count) {
    if (!max_op()) return;
    for (int k = 0; k < count; ++k) {
      if constexpr (T::is_zmm) {
        vpord(data(k), data(k), seen(k));
      } else {
        const Vmm t(12);
        // The sign bit where a +0 was seen (its flag bit: the one below the sign), cleared.
        if (f64()) {
          vpsrlq(t, seen(k), 62);
          vpsllq(t, t, 63);
        } else {
          vpsrld(t, seen(k), 30);
          vpslld(t, t, 31);
        }
        vpandn(data(k), t, data(k));
        // All ones where a NaN was seen (its flag: the sign bit; f64 spreads the high dword's).
        vpsrad(t, seen(k), 31);
        if (f64()) vpshufd(t, t, 0xf5);
        vpor(data(k), data(k), t);
      }
    }
  }

  // acc = acc + v, or maximum(acc, v) by the whole rule (min_max_emit.hpp; clobbers registers 12
  // and 13, and k7).
  template <class V>
  void merge(const V& acc, const V& v) {
    if (max_op()) {
      emit_min_max(*this, MinMax::max, f64(), acc, acc, v, V(12), V(13));
    } else if (f64()) {
      vaddpd(acc, acc, v);
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
    start_seen(u);
    const std::int64_t blocks = p_.full_vectors / u;
    const int rem = static_cast<int>(p_.full_vectors % u);
    if (p_.tail > 0) set_reduce_tail_mask(p_.tail);
    mov(rax, rsi);
    if (blocks > 0) {
      Label loop;
      mov(rdi, blocks);
      L(loop);
      for (int k = 0; k < u; ++k) fold(data(k), load_into(aux(k), rax + k * in_step()), k);
      add(rax, u * in_step());
      dec(rdi);
      jnz(loop, T_NEAR);
    }
    for (int k = 0; k < rem; ++k) fold(data(k), load_into(aux(k), rax + k * in_step()), k);
    if (p_.tail > 0) {
      load_reduce_tail(aux(0), rax + rem * in_step(), p_.tail);
      fold(data(u - 1), aux(0), u - 1);
    }
    finish_seen(u);
    for (int k = 1; k < u; ++k) merge(data(0), data(k));
    horizontal(data(0), aux(0));
    store_scalar(rdx, Xmm(0));
    add(rdx, out_bytes_);
    add(rsi, r9);
    dec(r11);
    jnz(col, T_NEAR);
  }
  Vmm load_into(const Vmm& v, const RegExp& at) {
    load_elements(v, at, lanes_, d_.types.in);
    return v;
  }

  // ---- transpose: 8 x 8 blocks (4 x 4 in f64) in ymm registers (on AVX-512 too: it is shuffle-bound
  // either way) ---------------------------------------------------------------------------------------

  // Loads block columns (A rows i0.. of columns j0..j0+nj-1), transposes, stores mi B columns.
  // Columns from `first_piecewise` on load only their mi rows (the tail policy); the others load
  // 8 rows, those past the block landing in transposed rows that are never stored.
  void transpose_block(int mi, int nj, int first_piecewise) {
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
    if (keep_bits_ && d_.op == UnaryOp::transpose && mi == 8 && nj == 8 && first_piecewise == 8) {
      transpose_block_16(a_col);
      return;
    }
    if (f64()) {
      transpose_block_f64(mi, nj, first_piecewise, a_col);
      return;
    }
    for (int c = 0; c < 8; ++c) {
      if (c >= nj) {
        vxorps(r[c], r[c], r[c]);
      } else {
        // Ymm code on every ISA: the piecewise tail (t[0] is free until the shuffles).
        load_block_column(r[c], a_col(c), c < first_piecewise ? 8 : mi, Xmm(t[0].getIdx()));
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
    // r[] is free again: r[0..1] are the bf16 rounding's scratch.
    for (int k = 0; k < mi; ++k) {
      const Reg64& base = k < 4 ? rdx : r11;
      const RegExp at = k % 4 == 0 ? RegExp(base) : k % 4 == 1 ? base + r10 : k % 4 == 2 ? base + r10 * 2 : base + r8;
      store_block_row(at, t[k], nj, r[0], r[1]);
    }
  }

  // A whole 8 x 8 block of bf16 moved as 16-bit lanes, one column per xmm: words, then dwords, then
  // qwords of column pairs interleaved (24 shuffles), where widening to floats and narrowing back
  // costs twice the work (measured: the bf16 transpose of 64 x 56 tiles ran at 5.3 G elements/s
  // widened on Zen 4).
  template <class Column>
  void transpose_block_16(const Column& a_col) {
    const Xmm x[8] = {xmm0, xmm1, xmm2, xmm3, xmm4, xmm5, xmm6, xmm7};
    const Xmm t[8] = {xmm8, xmm9, xmm10, xmm11, xmm12, xmm13, xmm14, xmm15};
    for (int c = 0; c < 8; ++c) vmovdqu(x[c], ptr[a_col(c)]);
    for (int k = 0; k < 4; ++k) {  // t[2k]: rows 0-3 of columns 2k, 2k+1 interleaved; t[2k+1]: rows 4-7
      vpunpcklwd(t[2 * k], x[2 * k], x[2 * k + 1]);
      vpunpckhwd(t[2 * k + 1], x[2 * k], x[2 * k + 1]);
    }
    for (int h = 0; h < 2; ++h) {  // x[4h + q]: rows 2q, 2q+1 of columns 4h .. 4h+3
      const int b = 4 * h;
      vpunpckldq(x[b + 0], t[b + 0], t[b + 2]);
      vpunpckhdq(x[b + 1], t[b + 0], t[b + 2]);
      vpunpckldq(x[b + 2], t[b + 1], t[b + 3]);
      vpunpckhdq(x[b + 3], t[b + 1], t[b + 3]);
    }
    for (int q = 0; q < 4; ++q) {  // t[k]: row k of all 8 columns
      vpunpcklqdq(t[2 * q], x[q], x[q + 4]);
      vpunpckhqdq(t[2 * q + 1], x[q], x[q + 4]);
    }
    for (int k = 0; k < 8; ++k) {
      const Reg64& base = k < 4 ? rdx : r11;
      const RegExp at = k % 4 == 0 ? RegExp(base) : k % 4 == 1 ? base + r10 : k % 4 == 2 ? base + r10 * 2 : base + r8;
      vmovdqu(ptr[at], t[k]);
    }
  }

  // A 4 x 4 block of doubles (UnaryPlan::block 4): columns 0-3 as ymm registers, the op (with
  // transpose_out), two rounds of shuffles (pairs of rows within 128-bit halves, then the halves),
  // rows 0-3 stored. Loads and stores move pairs of floats, so bits are kept.
  template <class Column>
  void transpose_block_f64(int mi, int nj, int first_piecewise, const Column& a_col) {
    const Ymm r[4] = {ymm0, ymm1, ymm2, ymm3};
    const Ymm t[4] = {ymm8, ymm9, ymm10, ymm11};
    const Ymm op_scratch = ymm12;
    const Xmm high = xmm13;
    for (int c = 0; c < 4; ++c) {
      if (c >= nj) {
        vxorpd(r[c], r[c], r[c]);
      } else {
        load_lanes(*this, r[c], a_col(c), 2 * (c < first_piecewise ? 4 : mi), high);
      }
    }
    if (d_.transpose_out && d_.op != UnaryOp::copy)
      for (int c = 0; c < nj; ++c) f64_op(r[c], op_scratch);
    vunpcklpd(t[0], r[0], r[1]);  // rows 0 and 2 of columns 0, 1
    vunpckhpd(t[1], r[0], r[1]);  // rows 1 and 3
    vunpcklpd(t[2], r[2], r[3]);
    vunpckhpd(t[3], r[2], r[3]);
    vperm2f128(r[0], t[0], t[2], 0x20);
    vperm2f128(r[1], t[1], t[3], 0x20);
    vperm2f128(r[2], t[0], t[2], 0x31);
    vperm2f128(r[3], t[1], t[3], 0x31);
    for (int k = 0; k < mi; ++k) {
      const RegExp at = k == 0 ? RegExp(rdx) : k == 1 ? rdx + r10 : k == 2 ? rdx + r10 * 2 : rdx + r8;
      store_lanes(*this, at, r[k], 2 * nj, high);
    }
  }

  // `count` (1..8) elements of A (types.in) at `at` as floats in y; `high` clobbered (f32, count > 4).
  void load_block_column(const Ymm& y, const RegExp& at, int count, const Xmm& high) {
    if (d_.types.in == DataType::bf16) {
      Bf16Emitter<Ymm>(*this, consts_).load(y, at, count, Ymm(high.getIdx()));
    } else {
      load_lanes(*this, y, at, count, high);
    }
  }
  // The first `count` (1..8) floats of y to `at` as types.out; y (and, rounding, s0, s1) clobbered.
  void store_block_row(const RegExp& at, const Ymm& y, int count, const Ymm& s0, const Ymm& s1) {
    if (d_.types.out == DataType::bf16) {
      Bf16Emitter<Ymm> bf16(*this, consts_);
      if (keep_bits_) {
        bf16.narrow(y);
        bf16.store_rounded(at, y, count);
      } else {
        bf16.store(at, y, count, {s0, s1});
      }
    } else {
      store_lanes(*this, at, y, count, Xmm(y.getIdx()));
    }
  }

  // A row-block loop (over i) for one column block of width nj: rsi/rdx at the block row 0. The
  // partial row block loads its columns from `first_piecewise` on piecewise.
  void transpose_row_blocks(int nj, int first_piecewise) {
    const int edge = p_.block;
    const std::int64_t full = d_.m / edge;
    const int tail = static_cast<int>(d_.m % edge);
    push(rsi);
    push(rdx);
    // Columns 4-7 and rows 4-7 of an 8 x 8 block; a 4 x 4 block (f64) has none.
    auto setup = [&] {
      if (edge != 8) return;
      lea(rcx, ptr[rsi + r9 * 4]);
      lea(r11, ptr[rdx + r10 * 4]);
    };
    if (full > 0) {
      Label loop;
      mov(r13, full);
      L(loop);
      setup();
      transpose_block(edge, nj, edge);
      add(rsi, edge * in_bytes_);
      lea(rdx, ptr[rdx + r10 * edge]);
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
    const int tail = static_cast<int>(d_.m % p_.block);
    if (tail == 0) return d_.n;
    return d_.ld_in == 0 ? 0 : whole_tail_columns(d_.n, p_.block, tail, d_.ld_in);
  }

  // Column blocks of the block edge in a loop while none of their columns loads piecewise, then the
  // rest one by one.
  void transpose() {
    lea(rax, ptr[r9 + r9 * 2]);
    lea(r8, ptr[r10 + r10 * 2]);
    const int edge = p_.block;
    const std::int64_t full = d_.n / edge;
    const int tail = static_cast<int>(d_.n % edge);
    const std::int64_t piecewise = first_piecewise_column();
    const std::int64_t looped = std::min(full, piecewise / edge);
    auto next_column_block = [&] {
      lea(rsi, ptr[rsi + r9 * edge]);
      add(rdx, edge * out_bytes_);
    };
    auto first_piecewise_in = [&](std::int64_t block) {
      return static_cast<int>(std::clamp<std::int64_t>(piecewise - edge * block, 0, edge));
    };
    if (looped > 0) {
      Label loop;
      mov(r12, looped);
      L(loop);
      transpose_row_blocks(edge, edge);
      next_column_block();
      dec(r12);
      jnz(loop, T_NEAR);
    }
    for (std::int64_t block = looped; block < full; ++block) {
      transpose_row_blocks(edge, first_piecewise_in(block));
      next_column_block();
    }
    if (tail > 0) transpose_row_blocks(tail, first_piecewise_in(full));
  }

  // ---- VNNI-2: column pairs interleaved element by element (16-bit lanes) --------------------------
  //
  // A step handles `lanes` rows of a column pair: the two columns as `lanes` bf16 each (a half
  // vector: xmm on AVX2, ymm on AVX-512; f32 input is rounded into it), and `2 * lanes` interleaved
  // bf16 in VNNI-2 (a full vector). Tails move only the rows that exist, under k1 or piecewise.

  // Rows `rows` (1..lanes) of one column of A at `at` as bf16 in the low half of v (f32 rounded).
  void vnni_load_column(const Vmm& v, const RegExp& at, int rows) {
    if (d_.types.in == DataType::f32) {
      load_elements(v, at, rows, DataType::f32);
      bf16_.round(v, rounding_scratch());
      return;
    }
    const Half<Vmm> h(v.getIdx());
    if (rows == lanes_) {
      vmovdqu(h, ptr[at]);
    } else if constexpr (T::is_zmm) {
      vmovdqu16(h | tail_k() | T_z, ptr[at]);
    } else {
      load_words(*this, h, at, rows);
    }
  }
  // The low halves of x and y (bf16 columns) interleaved into x: x0 y0 x1 y1 ... (t is scratch).
  void vnni_interleave(const Vmm& x, const Vmm& y, const Vmm& t) {
    const Half<Vmm> hx(x.getIdx()), hy(y.getIdx()), ht(t.getIdx());
    // Within each 128-bit lane: low = the lane's first 4 rows of both columns, high = its last 4.
    vpunpckhwd(ht, hx, hy);
    vpunpcklwd(hx, hx, hy);
    if constexpr (T::is_zmm) {
      // [lo.0 lo.1 hi.0 hi.1] -> [lo.0 hi.0 lo.1 hi.1] (128-bit lanes): rows 0-3, 4-7, 8-11, 12-15.
      vinserti64x4(x, x, ht, 1);
      vshufi64x2(x, x, x, 0xD8);
    } else {
      vinserti128(x, x, ht, 1);
    }
  }
  // `words` (1..2 * lanes) 16-bit elements of v to `at`; v is clobbered.
  void vnni_store_pairs(const RegExp& at, const Vmm& v, int words) {
    if (words == 2 * lanes_) {
      vmovups(ptr[at], v);
    } else if constexpr (T::is_zmm) {
      mov(eax, static_cast<std::uint32_t>((std::uint64_t{1} << words) - 1));
      kmovd(tail_k(), eax);
      vmovdqu16(ptr[at] | tail_k(), v);
    } else {
      store_words16(*this, at, v, words, Xmm(v.getIdx()));
    }
  }
  // `words` (1..2 * lanes) 16-bit elements at `at` into v, the rest zero.
  void vnni_load_pairs(const Vmm& v, const RegExp& at, int words) {
    if (words == 2 * lanes_) {
      vmovups(v, ptr[at]);
    } else if constexpr (T::is_zmm) {
      mov(eax, static_cast<std::uint32_t>((std::uint64_t{1} << words) - 1));
      kmovd(tail_k(), eax);
      vmovdqu16(v | tail_k() | T_z, ptr[at]);
    } else {
      load_words16(*this, v, at, words, Xmm(spare().getIdx()));
    }
  }
  // The even 16-bit elements of v (the first column of the pair) into v's low half, the odd ones
  // (the second column) into o's.
  void vnni_deinterleave(const Vmm& v, const Vmm& o) {
    vpsrld(o, v, 16);
    if constexpr (T::is_zmm) {
      vpmovdw(Half<Vmm>(o.getIdx()), o);
      vpmovdw(Half<Vmm>(v.getIdx()), v);
    } else {
      vpand(v, v, consts_.splat_bits(0xffffu));
      vpackusdw(v, v, o);    // per 128-bit lane: 4 even, then 4 odd
      vpermq(v, v, 0xD8);    // evens in the low half, odds in the high one
      vextracti128(Xmm(o.getIdx()), v, 1);
    }
  }
  // `rows` (1..lanes) bf16 in v's low half to `at`. Opmask: a partial count needs tail_k() set.
  void vnni_store_column(const RegExp& at, const Vmm& v, int rows) { bf16_.store_rounded(at, v, rows); }

  // Pair p: rsi column 2p of A, rcx column 2p + 1, rdx pair p of B (2 * ld_out elements apart).
  void vnni_pack() {
    lea(rcx, ptr[rsi + r9]);
    const int in_bytes = lanes_ * in_bytes_, out_bytes = lanes_ * 4;
    auto advance_rows = [&](std::int64_t vectors, bool back) {
      for (const Reg64& r : {rsi, rcx}) back ? sub(r, static_cast<std::uint32_t>(vectors * in_bytes)) : add(r, static_cast<std::uint32_t>(vectors * in_bytes));
      back ? sub(rdx, static_cast<std::uint32_t>(vectors * out_bytes)) : add(rdx, static_cast<std::uint32_t>(vectors * out_bytes));
    };
    emit_column_runs(*this, r11, p_.cols, 0, [&](bool) {
      emit_column_sweep(
          *this, rdi, p_.full_vectors, p_.unroll, p_.tail,
          [&](int count, int tail) {
            const int n = tail > 0 ? 1 : count;
            const int rows = tail > 0 ? tail : lanes_;
            if (rows < lanes_) set_tail_mask<Vmm>(*this, rows, eax);
            for (int u = 0; u < n; ++u) {
              vnni_load_column(data(u), rsi + u * in_bytes, rows);
              vnni_load_column(aux(u), rcx + u * in_bytes, rows);
            }
            for (int u = 0; u < n; ++u) vnni_interleave(data(u), aux(u), Vmm(9));
            for (int u = 0; u < n; ++u) vnni_store_pairs(rdx + u * out_bytes, data(u), 2 * rows);
          },
          [&](int count) { advance_rows(count, false); });
      if (p_.full_vectors > 0) advance_rows(p_.full_vectors, true);
      if (p_.cols > 1) {
        lea(rsi, ptr[rsi + r9 * 2]);
        lea(rcx, ptr[rcx + r9 * 2]);
        lea(rdx, ptr[rdx + r10 * 2]);
      }
    });
  }

  // Pair p: rsi pair p of A (2 * ld_in elements apart), rdx column 2p of B, rcx column 2p + 1.
  void vnni_unpack() {
    lea(rcx, ptr[rdx + r10]);
    const int in_bytes = lanes_ * 4, out_bytes = lanes_ * 2;
    auto advance_rows = [&](std::int64_t vectors, bool back) {
      back ? sub(rsi, static_cast<std::uint32_t>(vectors * in_bytes)) : add(rsi, static_cast<std::uint32_t>(vectors * in_bytes));
      for (const Reg64& r : {rdx, rcx}) back ? sub(r, static_cast<std::uint32_t>(vectors * out_bytes)) : add(r, static_cast<std::uint32_t>(vectors * out_bytes));
    };
    emit_column_runs(*this, r11, p_.cols, 0, [&](bool) {
      emit_column_sweep(
          *this, rdi, p_.full_vectors, p_.unroll, p_.tail,
          [&](int count, int tail) {
            const int n = tail > 0 ? 1 : count;
            const int rows = tail > 0 ? tail : lanes_;
            for (int u = 0; u < n; ++u) vnni_load_pairs(data(u), rsi + u * in_bytes, 2 * rows);
            for (int u = 0; u < n; ++u) vnni_deinterleave(data(u), aux(u));
            if (rows < lanes_) set_tail_mask<Vmm>(*this, rows, eax);
            for (int u = 0; u < n; ++u) {
              vnni_store_column(rdx + u * out_bytes, data(u), rows);
              vnni_store_column(rcx + u * out_bytes, aux(u), rows);
            }
          },
          [&](int count) { advance_rows(count, false); });
      if (p_.full_vectors > 0) advance_rows(p_.full_vectors, true);
      if (p_.cols > 1) {
        lea(rsi, ptr[rsi + r9 * 2]);
        lea(rdx, ptr[rdx + r10 * 2]);
        lea(rcx, ptr[rcx + r10 * 2]);
      }
    });
  }

  UnaryDesc d_;
  UnaryPlan p_;
  ActivationEmitter<Vmm> act_;
  Bf16Emitter<Vmm> bf16_;
  int lanes_;       // compute-type elements per vector (plan.lanes)
  int in_bytes_;    // bytes per element of A (types.in)
  int out_bytes_;   // bytes per element of B (types.out)
  bool keep_bits_;  // keeps_bf16_bits(desc): bf16 results are narrowed, not rounded
  bool pairs_;      // whole vectors go by bf16 pairs (pair_at)
  bool whole_tail_loads_ = false;  // the column being emitted loads its partial vectors whole
};

}  // namespace

std::unique_ptr<weft::jit::x64::CodeBuffer> emit_unary(const UnaryDesc& desc, const UnaryPlan& plan) {
  return emit_kernel<UnaryCode>(plan.isa, "unary " + to_string(desc), desc, plan);
}

}  // namespace weft::tpp::detail
