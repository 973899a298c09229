// bf16 <-> fp32 in generated code, shared by every TPP emitter (unary, binary, BRGEMM's C, bias and
// epilogue): loading bf16 elements as fp32 lanes (exact) and rounding fp32 lanes to bf16 on store,
// bit for bit what jit::to_bfloat16 does (VCVTNEPS2BF16: round to nearest even, NaN kept and made
// quiet, denormal inputs to a zero of their sign, overflow to infinity).
//
//   Bf16Emitter<Ymm> bf16(*this, consts_);
//   bf16.load(ymm0, rsi, 8, ymm1);           // 8 bf16 at rsi -> 8 floats (exact)
//   bf16.load(ymm0, rsi, 5, ymm1);           // 5 of them, lanes 5-7 zero, nothing past them read
//   bf16.store(rdi, ymm0, 8, {ymm2, ymm3});  // 8 floats -> 8 bf16 (RNE); ymm0 is clobbered
//   bf16.narrow(ymm0);                       // 8 floats that are bf16 values -> their bits, exactly
//   bf16.store_rounded(rdi, ymm0, 8);        // ... stored as they are
//
// A vector of f32 lanes holds `lanes` bf16 in half its bytes: an xmm for a Ymm, a ymm for a Zmm.
// - Widening is the bf16 bits shifted to the top of a 32-bit lane: vpmovzxwd + vpslld 16.
// - Rounding: with Isa::avx512_bf16 (`native`), vcvtneps2bf16. Otherwise emulated in integer ops:
//   denormals are cleared to their sign, then x + 0x7fff + ((x >> 16) & 1) >> 16 (round to nearest
//   even, carries into the exponent round to infinity), NaN instead (x | 0x400000) >> 16.
// - bf16 in and out without AVX512_BF16: load_pair / round_pair / narrow_pair take a full vector
//   of bf16 as two f32 vectors in an order only element-wise work may use (fewer shuffles).
// - Partial vectors follow vec_traits.hpp: AVX-512 under the opmask tail_k() (set for r lanes by
//   set_tail_mask, the same bits as for floats), AVX2 in 8-, 4- and 2-byte moves of the elements
//   that exist.
// Clobbers only the registers named in each call; AVX-512 rounding also uses opmasks k2 and k3.
#pragma once

#include <cstdint>
#include <vector>

#include <xbyak/xbyak.h>

#include "vec_traits.hpp"

namespace weft::tpp::detail {

// The register that holds `lanes` 16-bit elements beside a vector of `lanes` floats.
template <class Vmm>
struct HalfOf;
template <>
struct HalfOf<Xbyak::Ymm> {
  using type = Xbyak::Xmm;
};
template <>
struct HalfOf<Xbyak::Zmm> {
  using type = Xbyak::Ymm;
};
template <class Vmm>
using Half = typename HalfOf<Vmm>::type;

// AVX2: the first `count` (1..8) 16-bit elements at `at` into the low words of x, the rest zero.
inline void load_words(Xbyak::CodeGenerator& g, const Xbyak::Xmm& x, const Xbyak::RegExp& at, int count) {
  using Xbyak::util::ptr;
  using Xbyak::util::qword;
  using Xbyak::util::dword;
  using Xbyak::util::word;
  if (count == 8) {
    g.vmovdqu(x, ptr[at]);
    return;
  }
  // Pieces of 4, 2 and 1 elements, the first one zeroing the register.
  int done = 0;
  bool first = true;
  for (int piece : {4, 2, 1}) {
    if ((count - done) < piece) continue;
    const Xbyak::RegExp p = at + done * 2;
    if (piece == 4) {
      g.vmovq(x, qword[p]);
    } else if (piece == 2) {
      if (first) {
        g.vmovd(x, dword[p]);
      } else {
        g.vpinsrd(x, x, dword[p], static_cast<std::uint8_t>(done / 2));
      }
    } else {
      if (first) g.vpxor(x, x, x);
      g.vpinsrw(x, x, word[p], static_cast<std::uint8_t>(done));
    }
    first = false;
    done += piece;
  }
}

// AVX2: the low `count` (1..8) words of x to `at` (x is left as it was).
inline void store_words(Xbyak::CodeGenerator& g, const Xbyak::RegExp& at, const Xbyak::Xmm& x, int count) {
  using Xbyak::util::ptr;
  using Xbyak::util::qword;
  using Xbyak::util::dword;
  using Xbyak::util::word;
  if (count == 8) {
    g.vmovdqu(ptr[at], x);
    return;
  }
  int done = 0;
  for (int piece : {4, 2, 1}) {
    if ((count - done) < piece) continue;
    const Xbyak::RegExp p = at + done * 2;
    if (piece == 4) {
      g.vmovq(qword[p], x);
    } else if (piece == 2) {
      g.vpextrd(dword[p], x, static_cast<std::uint8_t>(done / 2));
    } else {
      g.vpextrw(word[p], x, static_cast<std::uint8_t>(done));
    }
    done += piece;
  }
}

// AVX2: the first `count` (1..16) 16-bit elements at `at` into the words of y, the rest zero;
// `high` (not y's register) is clobbered when count > 8.
inline void load_words16(Xbyak::CodeGenerator& g, const Xbyak::Ymm& y, const Xbyak::RegExp& at, int count,
                         const Xbyak::Xmm& high) {
  using Xbyak::util::ptr;
  const Xbyak::Xmm low(y.getIdx());
  if (count == 16) {
    g.vmovdqu(y, ptr[at]);
  } else if (count > 8) {
    g.vmovdqu(low, ptr[at]);
    load_words(g, high, at + 16, count - 8);
    g.vinserti128(y, y, high, 1);
  } else {
    load_words(g, low, at, count);  // a VEX write of the xmm zeroes the upper half
  }
}

// AVX2: the first `count` (1..16) words of y to `at`; `high` is clobbered when count > 8 (it may be
// y's own register when y is not needed afterwards).
inline void store_words16(Xbyak::CodeGenerator& g, const Xbyak::RegExp& at, const Xbyak::Ymm& y, int count,
                          const Xbyak::Xmm& high) {
  using Xbyak::util::ptr;
  const Xbyak::Xmm low(y.getIdx());
  if (count == 16) {
    g.vmovdqu(ptr[at], y);
  } else if (count > 8) {
    g.vmovdqu(ptr[at], low);
    g.vextracti128(high, y, 1);
    store_words(g, at + 16, high, count - 8);
  } else {
    store_words(g, at, low, count);
  }
}

template <class Vmm>
class Bf16Emitter {
  static constexpr bool kZmm = VecTraits<Vmm>::is_zmm;
  static constexpr int kLanes = VecTraits<Vmm>::lanes;

 public:
  // `native`: the ISA has AVX512_BF16 (Zmm only).
  Bf16Emitter(Xbyak::CodeGenerator& g, ConstantTable& consts, bool native = false)
      : g_(g), consts_(consts), native_(native && kZmm) {}

  // Registers store() needs besides its value: none native, 2 emulated (AVX2 also uses them for
  // the NaN and denormal masks).
  int store_scratch() const { return native_ ? 0 : 2; }

  // `count` (1..lanes) bf16 at `at` -> f32 lanes of v, lanes past count zero. Opmask: a partial
  // count needs tail_k() set for it. Piecewise: `spare` is not used (kept for symmetry).
  void load(const Vmm& v, const Xbyak::RegExp& at, int count, const Vmm& spare) {
    (void)spare;
    using Xbyak::util::ptr;
    const Half<Vmm> h(v.getIdx());
    if (count == kLanes) {
      g_.vpmovzxwd(v, ptr[at]);
    } else if constexpr (kZmm) {
      g_.vmovdqu16(h | tail_k() | Xbyak::util::T_z, ptr[at]);
      g_.vpmovzxwd(v, h);
    } else {
      load_words(g_, h, at, count);
      g_.vpmovzxwd(v, h);
    }
    g_.vpslld(v, v, 16);
  }

  // Rounds the f32 lanes of v to bf16 (RNE) into its low half (Half<Vmm>(v.getIdx())), the bits
  // that store() writes. v and `scratch` (store_scratch() registers) are clobbered.
  void round(const Vmm& v, const std::vector<Vmm>& scratch) {
    const Half<Vmm> h(v.getIdx());
    if (native_) {
      if constexpr (kZmm) g_.vcvtneps2bf16(h, v);
      return;
    }
    const Vmm r = round_dwords(v, scratch.at(0), scratch.at(1));
    if constexpr (kZmm) {
      g_.vpsrld(r, r, 16);
      g_.vpmovdw(h, r);
    } else {
      upper_halves(Xbyak::Ymm(v.getIdx()), r);
    }
  }

  // ---- pairs: 2 * lanes bf16 in and out, in an order only element-wise work may use ---------------
  //
  // Without AVX512_BF16 (pairs()), element-wise work from bf16 to bf16 takes 2 * lanes bf16 (one
  // full vector of them) as two f32 vectors in "pair order": each 128-bit lane's first 4 words
  // widened in `lo`, its last 4 in `hi`. That costs one unpack per vector (against vpmovzxwd and a
  // shift), and putting the words back one byte shuffle per vector and an OR per pair (against a
  // byte shuffle and vpermq): the shift and shuffle pipes are what these kernels run out of. A
  // bf16 add on AVX2 over 8K elements in L1/L2 (Zen 4, minimum of 200 calls): 5.05 G elements/s in
  // vector order, 5.84 in pair order (ReLU: 12.6, 13.65). Not for work that depends on the lane (a
  // bitmask, a transpose), nor with AVX512_BF16 (vcvtneps2bf16 writes vector order).
  bool pairs() const { return !native_; }

  // 2 * lanes bf16 at `at` -> lo, hi (f32, pair order).
  void load_pair(const Vmm& lo, const Vmm& hi, const Xbyak::RegExp& at) {
    using Xbyak::util::ptr;
    zero(lo);
    g_.vpunpcklwd(lo, lo, ptr[at]);  // word w of a lane into the top half of dword w
    zero(hi);
    g_.vpunpckhwd(hi, hi, ptr[at]);
  }
  // Rounds lo and hi (f32, pair order) to 2 * lanes bf16 in lo, in memory order (a full vector to
  // store as it is). lo, hi and `scratch` (store_scratch() registers) are clobbered.
  void round_pair(const Vmm& lo, const Vmm& hi, const std::vector<Vmm>& scratch) {
    // AVX2 rounds in place; the opmask sequence leaves its result in its `t`: one scratch each
    // (it needs no `mask`).
    const Vmm r0 = round_dwords(lo, scratch.at(0), scratch.at(1));
    const Vmm r1 = kZmm ? round_dwords(hi, scratch.at(1), scratch.at(0)) : round_dwords(hi, scratch.at(0), scratch.at(1));
    gather_pair(lo, r0, r1);
  }
  // narrow() for a pair: the bf16 values in lo and hi, as they are, into lo in memory order.
  void narrow_pair(const Vmm& lo, const Vmm& hi) { gather_pair(lo, lo, hi); }

  // round() without its last step: the rounded values in the top halves of the dwords of the
  // register it returns (v on AVX2, t on AVX-512); v, t and mask clobbered.
  Vmm round_dwords(const Vmm& v, const Vmm& t, const Vmm& mask) {
    if constexpr (kZmm) {
      (void)mask;
      const Xbyak::Opmask nan(2), denormal(3);
      g_.vcmpps(nan, v, v, 3);  // unordered: NaN
      g_.vptestnmd(denormal, v, consts_.splat_bits(0x7f800000u));
      g_.vpandd(v | denormal, v, consts_.splat_bits(0x80000000u));
      g_.vpsrld(t, v, 16);
      g_.vpandd(t, t, consts_.splat_bits(1u));
      g_.vpaddd(t, t, consts_.splat_bits(0x7fffu));
      g_.vpaddd(t, t, v);
      g_.vpord(t | nan, v, consts_.splat_bits(0x00400000u));
      return t;
    } else {
      // Measured on Zen 4 (a bf16 add over 8K elements in L1/L2, WEFT_ISA=avx2): 4.6 G elements/s
      // with the sequence written plainly (denormals cleared with and/andn, lsb by a shift, the
      // words packed with vpackusdw), 5.05 with the denormal sign blended, the lsb compared
      // instead of shifted and the words gathered with one vpshufb: these kernels are bound by
      // vector instructions per element, and shifts and shuffles share two of the four pipes.
      const Vmm zero = mask;
      g_.vpxor(zero, zero, zero);
      // Denormals: the sign alone where the exponent is 0.
      g_.vpand(t, v, consts_.splat_bits(0x7f800000u));
      g_.vpcmpeqd(t, t, zero);                                // exponent 0: all ones
      g_.vandps(mask, v, consts_.splat_bits(0x80000000u));
      g_.vblendvps(v, v, mask, t);
      g_.vpxor(zero, zero, zero);
      // x + 0x7fff + lsb as x + 0x8000 - (lsb == 0), lsb = bit 16 (the last bf16 mantissa bit).
      g_.vpand(t, v, consts_.splat_bits(0x00010000u));
      g_.vpcmpeqd(t, t, zero);                                // lsb 0: -1
      g_.vpaddd(t, t, v);
      g_.vpaddd(t, t, consts_.splat_bits(0x8000u));
      // NaN lanes (unordered with themselves): the quiet NaN, truncated.
      g_.vcmpunordps(mask, v, v);
      g_.vpor(v, v, consts_.splat_bits(0x00400000u));
      g_.vblendvps(v, t, v, mask);
      return v;
    }
  }

  // The bf16 bits of f32 lanes that hold bf16 values exactly (as load() leaves them: the low 16
  // bits zero) into v's low half, where round() leaves its result, but without rounding: every bit
  // is kept, where round() would flush a bf16 denormal to zero and quiet a signaling NaN. For ops
  // whose result is one of their bf16 inputs (a copy, a ReLU, a transpose). v is clobbered.
  void narrow(const Vmm& v) {
    if constexpr (kZmm) {
      g_.vpsrld(v, v, 16);
      g_.vpmovdw(Half<Vmm>(v.getIdx()), v);
    } else {
      upper_halves(v, v);
    }
  }

  // Rounds v (see round) and stores its first `count` (1..lanes) bf16 at `at`. Opmask: a partial
  // count needs tail_k() set for it.
  void store(const Xbyak::RegExp& at, const Vmm& v, int count, const std::vector<Vmm>& scratch) {
    round(v, scratch);
    store_rounded(at, v, count);
  }

  // Stores the first `count` (1..lanes) bf16 already in v's low half (round's result, or any bf16
  // bits) at `at`, without rounding. Opmask: a partial count needs tail_k() set for it.
  void store_rounded(const Xbyak::RegExp& at, const Vmm& v, int count) {
    using Xbyak::util::ptr;
    const Half<Vmm> h(v.getIdx());
    if constexpr (kZmm) {
      if (count == kLanes) {
        g_.vmovdqu16(ptr[at], h);
      } else {
        g_.vmovdqu16(ptr[at] | tail_k(), h);
      }
    } else {
      store_words(g_, at, h, count);
    }
  }

 private:
  void zero(const Vmm& v) {
    if constexpr (kZmm) {
      g_.vpxord(v, v, v);
    } else {
      g_.vpxor(v, v, v);
    }
  }

  // The upper halves of the dwords of lo and hi (pair order) into `to`, in memory order: per
  // 128-bit lane, lo's 4 in the low qword and hi's 4 in the high one (byte shuffles that zero the
  // other qword, then an OR). lo and hi are clobbered.
  void gather_pair(const Vmm& to, const Vmm& lo, const Vmm& hi) {
    std::vector<std::uint32_t> low, high;
    for (int lane = 0; lane < kLanes / 4; ++lane) {
      for (std::uint32_t w : {0x07060302u, 0x0f0e0b0au, 0x80808080u, 0x80808080u}) low.push_back(w);
      for (std::uint32_t w : {0x80808080u, 0x80808080u, 0x07060302u, 0x0f0e0b0au}) high.push_back(w);
    }
    g_.vpshufb(lo, lo, consts_.words(low));
    g_.vpshufb(hi, hi, consts_.words(high));
    if constexpr (kZmm) {
      g_.vpord(to, lo, hi);
    } else {
      g_.vpor(to, lo, hi);
    }
  }

  // AVX2: the upper 16 bits of the 8 dwords of `from`, in order, into the low 128 bits of `to`
  // (its upper half undefined): a byte shuffle gathers each 128-bit lane's 4 into its low qword,
  // vpermq joins the two qwords.
  void upper_halves(const Xbyak::Ymm& to, const Xbyak::Ymm& from) {
    g_.vpshufb(from, from, consts_.words({0x07060302u, 0x0f0e0b0au, 0x80808080u, 0x80808080u,
                                          0x07060302u, 0x0f0e0b0au, 0x80808080u, 0x80808080u}));
    g_.vpermq(to, from, 0x08);
  }

  Xbyak::CodeGenerator& g_;
  ConstantTable& consts_;
  bool native_;
};

}  // namespace weft::tpp::detail
