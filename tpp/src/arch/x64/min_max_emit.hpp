// min and max as the vector instructions of every TPP emitter compute them (the binary min / max
// and the max reductions), by the rule of weft/tpp/min_max_relu.hpp: NaN if either operand is NaN,
// -0 below +0 in either operand order. The NaN they produce has all bits set (a quiet NaN, with
// bf16's upper half 0xffff), on every ISA, as the reference's.
//
// vmaxps / vminps alone do not follow it: they return their second operand when either operand is
// NaN or both are zeros. AVX-512DQ's vrangeps orders the zeros, but ignores a quiet NaN operand like
// IEEE 754-2008 maxNum (checked on an Ice Lake-class Xeon: vrange(1, qNaN) = 1, vrange(1, sNaN) = the
// quieted sNaN), so both ISAs mark the unordered lanes with a compare:
// - AVX-512: k = unordered(x, y); d = vrange(x, y); d |= all-ones under k. Three instructions,
//   y read from memory by the first two.
// - AVX2: t = max(x, y) and t2 = max(y, x) agree except where vmaxps returned its second operand:
//   zeros of both signs (AND gives +0 for max, OR gives -0 for min) or a NaN operand (then {t, t2}
//   is {x, y}, and unordered(t, t2) flags it). Five instructions, and y in a register.
#pragma once

#include <cstdint>
#include <type_traits>

#include <xbyak/xbyak.h>

namespace weft::tpp::detail {

enum class MinMax : std::uint8_t { min, max };

// d = op(x, y) on float lanes, or on double lanes when `f64`. y is a register or an address; d may
// be x. The scratch registers t, t2 (and opmask k7 on AVX-512) are clobbered; x and y are not
// unless d is x.
template <class V>
void emit_min_max(Xbyak::CodeGenerator& g, MinMax op, bool f64, const V& d, const V& x, const Xbyak::Operand& y,
                  const V& t, const V& t2) {
  constexpr std::uint8_t kUnordered = 3;
  if constexpr (std::is_same_v<V, Xbyak::Zmm>) {
    // imm8[1:0] 00 min, 01 max; imm8[3:2] 01: the sign of the compared result (not of x).
    const std::uint8_t range = op == MinMax::max ? 0x5 : 0x4;
    const Xbyak::Opmask k(7);
    if (f64) {
      g.vcmppd(k, x, y, kUnordered);
      g.vrangepd(d, x, y, range);
      g.vpternlogq(d | k, d, d, 0xff);
    } else {
      g.vcmpps(k, x, y, kUnordered);
      g.vrangeps(d, x, y, range);
      g.vpternlogd(d | k, d, d, 0xff);
    }
  } else {
    V yr = t2;
    if (y.isMEM()) {
      if (f64) g.vmovupd(t2, y); else g.vmovups(t2, y);
    } else {
      yr = V(y.getIdx());
    }
    if (f64) {
      if (op == MinMax::max) {
        g.vmaxpd(t, x, yr);
        g.vmaxpd(t2, yr, x);
        g.vandpd(d, t, t2);
      } else {
        g.vminpd(t, x, yr);
        g.vminpd(t2, yr, x);
        g.vorpd(d, t, t2);
      }
      g.vcmppd(t, t, t2, kUnordered);
      g.vorpd(d, d, t);
    } else {
      if (op == MinMax::max) {
        g.vmaxps(t, x, yr);
        g.vmaxps(t2, yr, x);
        g.vandps(d, t, t2);
      } else {
        g.vminps(t, x, yr);
        g.vminps(t2, yr, x);
        g.vorps(d, t, t2);
      }
      g.vcmpps(t, t, t2, kUnordered);
      g.vorps(d, d, t);
    }
  }
}

}  // namespace weft::tpp::detail
