// The binary TPP emitter: follows a BinaryPlan and writes one kernel `void(const BinaryArgs*)`.
#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <string>

#include "bf16_emit.hpp"
#include "typed_moves.hpp"
#include "binary_emit.hpp"
#include "kernel_frame.hpp"
#include "min_max_emit.hpp"
#include "op_properties.hpp"
#include "vec_traits.hpp"
#include "weft/jit/data_type.hpp"

namespace weft::tpp::detail {
namespace {

using namespace Xbyak;
using Xbyak::util::dword;
using Xbyak::util::ptr;
using Xbyak::util::qword;
using Xbyak::util::word;
using weft::jit::DataType;

// rsi A, rcx B, rdx C; r9 / r8 / r10 their leading dimensions in bytes; r11 column counter; rdi the
// inner counter; rax scratch (tail masks, bf16 scalars). Vector registers: 0-7 A (and the results),
// 4-7 and 9 B where it is loaded (a tail, or bf16; otherwise whole vectors of B are the op's memory
// operand; see b()), 8 the spare of a piecewise tail load, 10 / 11 broadcast A / B, 12-13 scratch
// (the op's, then bf16 rounding's). Opmasks: k1 tails, k2-k3 bf16 rounding, k7 min / max.
//
// Data types: A and B (types.in) are loaded into vectors of the compute type (bf16 widened to f32,
// f64 as doubles), C stored as types.out; pointers advance in bytes of each type.
template <class Vmm>
class BinaryCode : public KernelFrame {
  using T = VecTraits<Vmm>;

 public:
  BinaryCode(const BinaryDesc& d, const BinaryPlan& p)
      : KernelFrame(T::bytes),
        d_(d),
        p_(p),
        bf16_(*this, consts_, weft::jit::isa_traits(p.isa).bf16_dot),
        lanes_(p.lanes),
        in_bytes_(static_cast<int>(weft::jit::size_of(d.types.in))),
        out_bytes_(static_cast<int>(weft::jit::size_of(d.types.out))),
        keep_bits_(keeps_bf16_bits(d)),
        pairs_(d.types.in == DataType::bf16 && d.types.out == DataType::bf16 && bf16_.pairs()) {
    emit_function({}, [&] {
      load_args();
      if (p.nontemporal) {
        streaming();
      } else {
        columns();
      }
    });
  }

 private:
  void load_args() {
    mov(rsi, ptr[rdi + offsetof(BinaryArgs, in0)]);
    mov(rcx, ptr[rdi + offsetof(BinaryArgs, in1)]);
    mov(rdx, ptr[rdi + offsetof(BinaryArgs, out)]);
    mov(r9, d_.ld_in0 * in_bytes_);
    mov(r8, d_.ld_in1 * in_bytes_);
    mov(r10, d_.ld_out * out_bytes_);
    if (d_.bcast0 == Broadcast::scalar) broadcast(bcast(0), rsi);
    if (d_.bcast1 == Broadcast::scalar) broadcast(bcast(1), rcx);
  }

  bool f64() const { return d_.types.compute == DataType::f64; }
  int in_step() const { return lanes_ * in_bytes_; }    // bytes of A or B per vector
  int out_step() const { return lanes_ * out_bytes_; }  // bytes of C per vector

  // Every lane of v = the element (types.in) at `at` (clobbers eax for bf16).
  void broadcast(const Vmm& v, const RegExp& at) {
    switch (d_.types.in) {
      case DataType::f32: vbroadcastss(v, dword[at]); return;
      case DataType::f64: vbroadcastsd(v, qword[at]); return;
      case DataType::bf16:
        movzx(eax, word[at]);
        shl(eax, 16);
        vmovd(Xmm(v.getIdx()), eax);
        vbroadcastss(v, Xmm(v.getIdx()));
        return;
    }
  }

  // The shared typed moves (typed_moves.hpp) with this kernel's registers and types.
  void load_elements(const Vmm& v, const RegExp& at, int count) {
    detail::load_elements(*this, bf16_, v, at, count, lanes_, d_.types.in, spare());
  }
  void store_elements(const RegExp& at, const Vmm& v, int count, bool nt) {
    detail::store_elements(*this, bf16_, at, v, count, lanes_, d_.types.out, nt, keep_bits_, {scratch(0), scratch(1)});
  }

  Vmm a(int u) const { return Vmm(u); }
  // B where it is loaded. The streaming sweep's 8 vectors per step load B only when it is bf16 (not
  // a memory operand), one vector or pair at a time right before its op: vectors 4-7 take
  // registers 9 and 8 in turn (registers 4-7 are then A's; the spare is free there, the streaming
  // sweep having no partial vectors), so that B never lands on a broadcast register.
  Vmm b(int u) const { return u < 4 ? Vmm(4 + u) : Vmm(u % 2 == 0 ? 9 : 8); }
  Vmm spare() const { return Vmm(8); }
  Vmm bcast(int input) const { return Vmm(10 + input); }
  Vmm scratch(int i = 0) const { return Vmm(12 + i); }
  Broadcast kind(int input) const { return input == 0 ? d_.bcast0 : d_.bcast1; }
  const Reg64& base(int input) const { return input == 0 ? rsi : rcx; }
  const Reg64& ld(int input) const { return input == 0 ? r9 : r8; }
  bool streams(int input) const { return kind(input) == Broadcast::none || kind(input) == Broadcast::col; }

  // The operand vector u of an input: a fresh load, or the broadcast register.
  Vmm operand(int input, int u, int tail) {
    if (!streams(input)) return bcast(input);
    const Vmm v = input == 0 ? a(u) : b(u);
    const RegExp at = base(input) + u * in_step();
    const int count = tail > 0 && !loads_whole(input) ? tail : lanes_;
    if (count < lanes_) set_tail_mask<Vmm>(*this, count, eax);
    load_elements(v, at, count);
    return v;
  }

  // d = x op y, where y is a register or an address: every op reads B once, so where B streams it is
  // the op's memory operand (one fused load-op instead of a load and an op). On memory-bound sweeps
  // fewer instructions per byte keep more loads in flight: over 8M floats on 1 thread, interleaved
  // with our copy (12 runs), add ran at 1.03-1.09x the copy's bandwidth with the fused load and at
  // 0.98-1.03x with a separate one.
  // t and t2 are scratch; x is not clobbered unless it is d.
  template <class V>
  void op(const V& d, const V& x, const Operand& y, const V& t, const V& t2) {
    if (f64()) return op_f64(d, x, y, t, t2);
    switch (d_.op) {
      case BinaryOp::add: vaddps(d, x, y); break;
      case BinaryOp::sub: vsubps(d, x, y); break;
      case BinaryOp::mul: vmulps(d, x, y); break;
      case BinaryOp::div: vdivps(d, x, y); break;
      case BinaryOp::min: emit_min_max(*this, MinMax::min, false, d, x, y, t, t2); break;
      case BinaryOp::max: emit_min_max(*this, MinMax::max, false, d, x, y, t, t2); break;
    }
  }

  // op() in f64: the same instructions on doubles.
  template <class V>
  void op_f64(const V& d, const V& x, const Operand& y, const V& t, const V& t2) {
    switch (d_.op) {
      case BinaryOp::add: vaddpd(d, x, y); break;
      case BinaryOp::sub: vsubpd(d, x, y); break;
      case BinaryOp::mul: vmulpd(d, x, y); break;
      case BinaryOp::div: vdivpd(d, x, y); break;
      case BinaryOp::min: emit_min_max(*this, MinMax::min, true, d, x, y, t, t2); break;
      case BinaryOp::max: emit_min_max(*this, MinMax::max, true, d, x, y, t, t2); break;
    }
  }

  // Whether the partial vectors of `input` in the column being emitted are loaded whole: a later
  // column of the same input follows within reach (whole_tail_columns).
  bool loads_whole(int input) const { return whole_tail_loads_ && kind(input) == Broadcast::none; }

  // Whether vectors u and u + 1 of a group of n whole vectors are done as a bf16 pair
  // (Bf16Emitter::load_pair: one full vector of bf16 in and out, in an order element-wise work
  // does not see).
  bool pair_at(int u, int n, int tail) const { return pairs_ && tail == 0 && u % 2 == 0 && u + 1 < n; }
  // The operand vectors u and u + 1 of an input as a bf16 pair, or the broadcast register twice.
  std::array<Vmm, 2> operand_pair(int input, int u) {
    if (!streams(input)) return {bcast(input), bcast(input)};
    const std::array<Vmm, 2> v = input == 0 ? std::array<Vmm, 2>{a(u), a(u + 1)} : std::array<Vmm, 2>{b(u), b(u + 1)};
    bf16_.load_pair(v[0], v[1], base(input) + u * in_step());
    return v;
  }

  void group(int count, int tail, bool nt) {
    const int n = tail > 0 ? 1 : count;
    for (int u = 0; u < n; ++u) {
      if (pair_at(u, n, tail)) {
        const std::array<Vmm, 2> x = operand_pair(0, u), y = operand_pair(1, u);
        op(a(u), x[0], y[0], scratch(0), scratch(1));
        op(a(u + 1), x[1], y[1], scratch(0), scratch(1));
        ++u;
        continue;
      }
      const Vmm x = operand(0, u, tail);
      // bf16 B is widened first: it cannot be the op's memory operand.
      if (streams(1) && (tail == 0 || loads_whole(1)) && d_.types.in != DataType::bf16) {
        op(a(u), x, ptr[rcx + u * in_step()], scratch(0), scratch(1));
      } else {
        op(a(u), x, operand(1, u, tail), scratch(0), scratch(1));
      }
    }
    for (int u = 0; u < n; ++u) {
      if (pair_at(u, n, tail)) {
        if (keep_bits_) {
          bf16_.narrow_pair(a(u), a(u + 1));
        } else {
          bf16_.round_pair(a(u), a(u + 1), {scratch(0), scratch(1)});
        }
        if (nt) {
          vmovntdq(ptr[rdx + u * out_step()], a(u));
        } else {
          vmovups(ptr[rdx + u * out_step()], a(u));
        }
        ++u;
        continue;
      }
      const int count_out = tail > 0 ? tail : lanes_;
      if (count_out < lanes_) set_tail_mask<Vmm>(*this, count_out, eax);
      store_elements(rdx + u * out_step(), a(u), count_out, nt);
    }
  }

  void advance(std::int64_t vectors, bool back = false) {
    const auto in_bytes = static_cast<std::uint32_t>(vectors * in_step());
    const auto out_bytes = static_cast<std::uint32_t>(vectors * out_step());
    for (int input = 0; input < 2; ++input) {
      if (!streams(input)) continue;
      if (back) sub(base(input), in_bytes); else add(base(input), in_bytes);
    }
    if (back) sub(rdx, out_bytes); else add(rdx, out_bytes);
  }

  void column() {
    for (int input = 0; input < 2; ++input) {
      if (kind(input) == Broadcast::row) broadcast(bcast(input), base(input));
    }
    emit_column_sweep(
        *this, rdi, p_.full_vectors, p_.unroll, p_.tail,
        [&](int count, int tail) { group(count, tail, false); }, [&](int count) { advance(count); });
    if (p_.full_vectors > 0) advance(p_.full_vectors, true);
  }

  // The columns; where a later column of every full input follows within reach, a partial vector
  // is loaded whole (whole_tail_columns).
  void columns() {
    std::int64_t whole = 0;
    if constexpr (!kOpmaskTails<Vmm>) {
      whole = p_.cols;
      for (int input = 0; input < 2; ++input) {
        const std::int64_t ld_elements = input == 0 ? d_.ld_in0 : d_.ld_in1;
        if (kind(input) == Broadcast::none) whole = std::min(whole, whole_tail_columns(p_.cols, lanes_, p_.tail, ld_elements));
      }
    }
    emit_column_runs(*this, r11, p_.cols, whole, [&](bool whole_tails) {
      whole_tail_loads_ = whole_tails;
      column();
      if (p_.cols > 1) {
        for (int input = 0; input < 2; ++input) {
          if (kind(input) == Broadcast::none) add(base(input), ld(input));
          if (kind(input) == Broadcast::row) add(base(input), in_bytes_);
        }
        add(rdx, r10);
      }
    });
    whole_tail_loads_ = false;
  }

  // One element of types.in at `at` into lane 0 of x (clobbers eax for bf16).
  void load_scalar(const Xmm& x, const RegExp& at) {
    switch (d_.types.in) {
      case DataType::f32: vmovss(x, dword[at]); return;
      case DataType::f64: vmovsd(x, qword[at]); return;
      case DataType::bf16:
        movzx(eax, word[at]);
        shl(eax, 16);
        vmovd(x, eax);
        return;
    }
  }

  void scalar_element() {
    const Xmm x(0), y(4), t(12), t2(13);
    if (streams(0)) load_scalar(x, rsi); else vmovaps(x, Xmm(bcast(0).getIdx()));
    if (streams(1)) load_scalar(y, rcx); else vmovaps(y, Xmm(bcast(1).getIdx()));
    op(x, x, y, t, t2);
    detail::store_scalar(*this, consts_, rdx, x, d_.types.out, keep_bits_, Ymm(t.getIdx()), Ymm(t2.getIdx()));
    for (int input = 0; input < 2; ++input) {
      if (streams(input)) add(base(input), in_bytes_);
    }
    add(rdx, out_bytes_);
  }

  // Scalar head until C is vector-aligned, streaming body, scalar rest.
  void streaming() {
    emit_streaming_sweep(
        *this, rdi, edx, p_.rows, p_.unroll, lanes_, out_bytes_, (pairs_ ? 2 : 1) * out_step(), [&] { scalar_element(); },
        [&](int count) { group(count, 0, true); }, [&](int count) { advance(count); });
  }

  BinaryDesc d_;
  BinaryPlan p_;
  Bf16Emitter<Vmm> bf16_;
  int lanes_;       // compute-type elements per vector (plan.lanes)
  int in_bytes_;    // bytes per element of A and B (types.in)
  int out_bytes_;   // bytes per element of C (types.out)
  bool keep_bits_;  // keeps_bf16_bits(desc): bf16 results are narrowed, not rounded
  bool pairs_;      // whole vectors go by bf16 pairs (pair_at)
  bool whole_tail_loads_ = false;  // the column being emitted loads its partial vectors whole
};

}  // namespace

std::unique_ptr<weft::jit::x64::CodeBuffer> emit_binary(const BinaryDesc& desc, const BinaryPlan& plan) {
  return emit_kernel<BinaryCode>(plan.isa, "binary " + to_string(desc), desc, plan);
}

}  // namespace weft::tpp::detail
