// The binary TPP emitter: follows a BinaryPlan and writes one kernel `void(const BinaryArgs*)`.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>

#include "binary_emit.hpp"
#include "kernel_frame.hpp"
#include "vec_traits.hpp"

namespace weft::tpp::detail {
namespace {

using namespace Xbyak;
using Xbyak::util::dword;
using Xbyak::util::ptr;

// rsi A, rcx B, rdx C; r9 / r8 / r10 their leading dimensions in bytes; r11 column counter; rdi the
// inner counter. Vector registers: 0-7 A (and the results), 4 B of a tail (whole vectors of B are
// the op's memory operand), 8 the spare of a piecewise tail load, 10 / 11 broadcast A / B, 12-13
// scratch.
template <class Vmm>
class BinaryCode : public KernelFrame {
  using T = VecTraits<Vmm>;
  static constexpr int kBytes = T::bytes;
  static constexpr int kLanes = T::lanes;

 public:
  BinaryCode(const BinaryDesc& d, const BinaryPlan& p) : KernelFrame(kBytes), d_(d), p_(p) {
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
    mov(r9, d_.ld_in0 * 4);
    mov(r8, d_.ld_in1 * 4);
    mov(r10, d_.ld_out * 4);
    if (d_.bcast0 == Broadcast::scalar) vbroadcastss(bcast(0), dword[rsi]);
    if (d_.bcast1 == Broadcast::scalar) vbroadcastss(bcast(1), dword[rcx]);
  }

  Vmm a(int u) const { return Vmm(u); }
  Vmm b(int u) const { return Vmm(4 + u); }
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
    const RegExp at = base(input) + u * kBytes;
    if (tail > 0 && !loads_whole(input)) {
      load_tail(*this, v, at, tail, spare());
    } else {
      vmovups(v, ptr[at]);
    }
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
    switch (d_.op) {
      case BinaryOp::add: vaddps(d, x, y); break;
      case BinaryOp::sub: vsubps(d, x, y); break;
      case BinaryOp::mul: vmulps(d, x, y); break;
      case BinaryOp::div: vdivps(d, x, y); break;
      case BinaryOp::min:
      case BinaryOp::max:
        // std::fmin / fmax: vminps / vmaxps return y when either is NaN, so s = min(x, y) is NaN
        // exactly where y is; there the result is x (a number, or NaN when both are).
        if (d_.op == BinaryOp::min) vminps(t, x, y); else vmaxps(t, x, y);
        if constexpr (VecTraits<V>::is_zmm) {
          const Opmask k(7);
          vcmpps(k, t, t, 3);
          vblendmps(d | k, t, x);
        } else {
          vcmpps(t2, t, t, 3);
          vblendvps(d, t, x, t2);
        }
        break;
    }
  }

  // Whether the partial vectors of `input` in the column being emitted are loaded whole: a later
  // column of the same input follows within reach (whole_tail_columns).
  bool loads_whole(int input) const { return whole_tail_loads_ && kind(input) == Broadcast::none; }

  void group(int count, int tail, bool nt) {
    const int n = tail > 0 ? 1 : count;
    for (int u = 0; u < n; ++u) {
      const Vmm x = operand(0, u, tail);
      if (streams(1) && (tail == 0 || loads_whole(1))) {
        op(a(u), x, ptr[rcx + u * kBytes], scratch(0), scratch(1));
      } else {
        op(a(u), x, operand(1, u, tail), scratch(0), scratch(1));
      }
    }
    for (int u = 0; u < n; ++u) {
      if (tail > 0) {
        store_tail(*this, rdx + u * kBytes, a(u), tail);
      } else if (nt) {
        vmovntps(ptr[rdx + u * kBytes], a(u));
      } else {
        vmovups(ptr[rdx + u * kBytes], a(u));
      }
    }
  }

  void advance(std::int64_t vectors, bool back = false) {
    const auto bytes = static_cast<std::uint32_t>(vectors * kBytes);
    for (int input = 0; input < 2; ++input) {
      if (!streams(input)) continue;
      if (back) sub(base(input), bytes); else add(base(input), bytes);
    }
    if (back) sub(rdx, bytes); else add(rdx, bytes);
  }

  void column() {
    for (int input = 0; input < 2; ++input) {
      if (kind(input) == Broadcast::row) vbroadcastss(bcast(input), dword[base(input)]);
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
        if (kind(input) == Broadcast::none) whole = std::min(whole, whole_tail_columns(p_.cols, kLanes, p_.tail, ld_elements));
      }
    }
    emit_column_runs(*this, r11, p_.cols, whole, [&](bool whole_tails) {
      whole_tail_loads_ = whole_tails;
      column();
      if (p_.cols > 1) {
        for (int input = 0; input < 2; ++input) {
          if (kind(input) == Broadcast::none) add(base(input), ld(input));
          if (kind(input) == Broadcast::row) add(base(input), 4);
        }
        add(rdx, r10);
      }
    });
    whole_tail_loads_ = false;
  }

  void scalar_element() {
    const Xmm x(0), y(4), t(12), t2(13);
    if (streams(0)) vmovss(x, dword[rsi]); else vmovaps(x, Xmm(bcast(0).getIdx()));
    if (streams(1)) vmovss(y, dword[rcx]); else vmovaps(y, Xmm(bcast(1).getIdx()));
    op(x, x, y, t, t2);
    vmovss(dword[rdx], x);
    for (int input = 0; input < 2; ++input) {
      if (streams(input)) add(base(input), 4);
    }
    add(rdx, 4);
  }

  // Scalar head until C is vector-aligned, streaming body, scalar rest.
  void streaming() {
    emit_streaming_sweep(
        *this, rdi, edx, p_.rows, p_.unroll, kLanes, [&] { scalar_element(); },
        [&](int count) { group(count, 0, true); }, [&](int count) { advance(count); });
  }

  BinaryDesc d_;
  BinaryPlan p_;
  bool whole_tail_loads_ = false;  // the column being emitted loads its partial vectors whole
};

}  // namespace

std::unique_ptr<weft::jit::CodeBuffer> emit_binary(const BinaryDesc& desc, const BinaryPlan& plan) {
  return emit_kernel<BinaryCode>(plan.isa, "binary " + to_string(desc), desc, plan);
}

}  // namespace weft::tpp::detail
