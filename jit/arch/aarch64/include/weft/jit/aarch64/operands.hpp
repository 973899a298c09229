// Registers and operands of the A64 assembler (assembler.hpp). The types carry what the encoding
// needs to know so that a wrong operand is a compile error where C++ can tell:
//
//   x3, w3, sp, xzr, wzr            general registers; sp and xzr are distinct types because both
//                                   encode as register 31 and each instruction accepts only one
//   v7.s4(), v7.d2(), v7.b16()      a vector register with its arrangement (Vec<Arr>)
//   v7.s(3), v7.d(1)                one element (lane) of a vector register (Elem<Lane>)
//   v7.h2(3)                        a pair of h lanes as one element, "v7.2h[3]" (bfdot)
//   q7, d7, s7, h7                  the scalar views of v7 (loads, stores, scalar floating point)
//   ptr(x1, 32), pre_ptr(sp, -16), post_ptr(x1, 64), post_ptr(x1, x2)
//   ptr(x1, x2), ptr(x1, x2, lsl(3)), ptr(x1, w2, sxtw(2))
//
// SVE (scalable vectors, whose length VL the hardware chooses: 128..2048 bits):
//   z7.s(), z7.d(), z7.h(), z7.b()  a Z register with its element size (ZVec<Lane>)
//   z7.s(3)                         one indexed element of each 128-bit segment (ZElem<Lane>)
//   z7                              the whole register (ldr/str z)
//   p3.s()                          a predicate with its element size (results of ptrue, fcmge...)
//   p3.z(), p3.m()                  a governing predicate that zeroes (/z) or merges (/m) the
//                                   inactive elements; p3 alone where the instruction has neither
//   ptr_vl(x1, -8)                  [x1, #-8, mul vl]: an offset counted in vector lengths
//
// Most SVE instructions encode the governing predicate in 3 bits: p8..p15 there throw
// weft::Error naming the form (as do wrong indexes and indexed registers out of range).
//
// A register built from a runtime number (XReg(n), VReg(n)) checks it and throws weft::Error.
#pragma once

#include <cstdint>
#include <string>

#include "weft/jit/error.hpp"

namespace weft::jit::a64 {

namespace detail {
// Throws for a register number out of range. In a constant expression the throw makes a bad
// register a compile error.
constexpr unsigned checked_register(unsigned index, unsigned last, const char* kind) {
  if (index > last) {
    throw Error(std::string("a64: register ") + kind + std::to_string(index) + " does not exist (" + kind + "0.." +
                kind + std::to_string(last) + ")");
  }
  return index;
}
}  // namespace detail

// ---- general registers --------------------------------------------------------------------------

struct XReg {
  constexpr explicit XReg(unsigned i) : index(detail::checked_register(i, 30, "x")) {}
  unsigned index;
};
struct WReg {
  constexpr explicit WReg(unsigned i) : index(detail::checked_register(i, 30, "w")) {}
  unsigned index;
};
struct XZr {};  // xzr
struct WZr {};  // wzr
struct XSp {};  // sp
struct WSp {};  // wsp

// Operand slots. Register 31 means the zero register in most slots and the stack pointer in the
// base-register and add/sub-immediate slots; these accept exactly one of the two.
struct XOrZr {
  constexpr XOrZr(XReg r) : index(r.index) {}
  constexpr XOrZr(XZr) : index(31) {}
  unsigned index;
};
struct WOrZr {
  constexpr WOrZr(WReg r) : index(r.index) {}
  constexpr WOrZr(WZr) : index(31) {}
  unsigned index;
};
struct XOrSp {
  constexpr XOrSp(XReg r) : index(r.index) {}
  constexpr XOrSp(XSp) : index(31) {}
  unsigned index;
};
struct WOrSp {
  constexpr WOrSp(WReg r) : index(r.index) {}
  constexpr WOrSp(WSp) : index(31) {}
  unsigned index;
};

inline constexpr XReg x0{0}, x1{1}, x2{2}, x3{3}, x4{4}, x5{5}, x6{6}, x7{7}, x8{8}, x9{9}, x10{10}, x11{11}, x12{12},
    x13{13}, x14{14}, x15{15}, x16{16}, x17{17}, x18{18}, x19{19}, x20{20}, x21{21}, x22{22}, x23{23}, x24{24}, x25{25},
    x26{26}, x27{27}, x28{28}, x29{29}, x30{30};
inline constexpr WReg w0{0}, w1{1}, w2{2}, w3{3}, w4{4}, w5{5}, w6{6}, w7{7}, w8{8}, w9{9}, w10{10}, w11{11}, w12{12},
    w13{13}, w14{14}, w15{15}, w16{16}, w17{17}, w18{18}, w19{19}, w20{20}, w21{21}, w22{22}, w23{23}, w24{24}, w25{25},
    w26{26}, w27{27}, w28{28}, w29{29}, w30{30};
inline constexpr XZr xzr{};
inline constexpr WZr wzr{};
inline constexpr XSp sp{};
inline constexpr WSp wsp{};
inline constexpr XReg fp = x29, lr = x30;

// ---- vector registers ---------------------------------------------------------------------------

// Arrangements: element count and size of a vector operand.
enum class Arr : std::uint8_t { b8, b16, h4, h8, s2, s4, d2 };

template <Arr A>
struct Vec {
  unsigned index;
};
using V8B = Vec<Arr::b8>;
using V16B = Vec<Arr::b16>;
using V4H = Vec<Arr::h4>;
using V8H = Vec<Arr::h8>;
using V2S = Vec<Arr::s2>;
using V4S = Vec<Arr::s4>;
using V2D = Vec<Arr::d2>;

// Element sizes of lanes and scalar views.
enum class Lane : std::uint8_t { b, h, s, d };

constexpr unsigned lane_count(Lane lane) { return 16u >> static_cast<unsigned>(lane); }

template <Lane L>
struct Elem {
  constexpr Elem(unsigned reg, unsigned lane_index) : index(reg), lane(lane_index) {
    if (lane_index >= lane_count(L)) {
      throw Error("a64: lane " + std::to_string(lane_index) + " of v" + std::to_string(reg) + " is out of range 0.." +
                  std::to_string(lane_count(L) - 1));
    }
  }
  unsigned index;
  unsigned lane;
};

// A pair of adjacent h lanes taken as one 32-bit element, v2.h2(3) = "v2.2h[3]" (pair 0..3, lanes
// 2*pair and 2*pair+1): the indexed operand of bfdot, whose products come in pairs.
struct Elem2H {
  constexpr Elem2H(unsigned reg, unsigned pair_index) : index(reg), pair(pair_index) {
    if (pair_index >= 4) {
      throw Error("a64: pair " + std::to_string(pair_index) + " (.2h) of v" + std::to_string(reg) +
                  " is out of range 0..3");
    }
  }
  unsigned index;
  unsigned pair;
};

// Scalar views of a vector register: b (8 bits) .. q (128 bits).
template <unsigned Bytes>
struct ScalarReg {
  constexpr explicit ScalarReg(unsigned i) : index(detail::checked_register(i, 31, "v")) {}
  unsigned index;
};
using BReg = ScalarReg<1>;
using HReg = ScalarReg<2>;
using SReg = ScalarReg<4>;
using DReg = ScalarReg<8>;
using QReg = ScalarReg<16>;

struct VReg {
  constexpr explicit VReg(unsigned i) : index(detail::checked_register(i, 31, "v")) {}
  unsigned index;

  constexpr V8B b8() const { return {index}; }
  constexpr V16B b16() const { return {index}; }
  constexpr V4H h4() const { return {index}; }
  constexpr V8H h8() const { return {index}; }
  constexpr V2S s2() const { return {index}; }
  constexpr V4S s4() const { return {index}; }
  constexpr V2D d2() const { return {index}; }

  constexpr Elem<Lane::b> b(unsigned lane) const { return {index, lane}; }
  constexpr Elem<Lane::h> h(unsigned lane) const { return {index, lane}; }
  constexpr Elem<Lane::s> s(unsigned lane) const { return {index, lane}; }
  constexpr Elem<Lane::d> d(unsigned lane) const { return {index, lane}; }
  constexpr Elem2H h2(unsigned pair) const { return {index, pair}; }

  constexpr QReg qreg() const { return QReg(index); }
  constexpr DReg dreg() const { return DReg(index); }
  constexpr SReg sreg() const { return SReg(index); }
  constexpr HReg hreg() const { return HReg(index); }
};

inline constexpr VReg v0{0}, v1{1}, v2{2}, v3{3}, v4{4}, v5{5}, v6{6}, v7{7}, v8{8}, v9{9}, v10{10}, v11{11}, v12{12},
    v13{13}, v14{14}, v15{15}, v16{16}, v17{17}, v18{18}, v19{19}, v20{20}, v21{21}, v22{22}, v23{23}, v24{24}, v25{25},
    v26{26}, v27{27}, v28{28}, v29{29}, v30{30}, v31{31};
inline constexpr QReg q0{0}, q1{1}, q2{2}, q3{3}, q4{4}, q5{5}, q6{6}, q7{7}, q8{8}, q9{9}, q10{10}, q11{11}, q12{12},
    q13{13}, q14{14}, q15{15}, q16{16}, q17{17}, q18{18}, q19{19}, q20{20}, q21{21}, q22{22}, q23{23}, q24{24}, q25{25},
    q26{26}, q27{27}, q28{28}, q29{29}, q30{30}, q31{31};
inline constexpr DReg d0{0}, d1{1}, d2{2}, d3{3}, d4{4}, d5{5}, d6{6}, d7{7}, d8{8}, d9{9}, d10{10}, d11{11}, d12{12},
    d13{13}, d14{14}, d15{15}, d16{16}, d17{17}, d18{18}, d19{19}, d20{20}, d21{21}, d22{22}, d23{23}, d24{24}, d25{25},
    d26{26}, d27{27}, d28{28}, d29{29}, d30{30}, d31{31};
inline constexpr SReg s0{0}, s1{1}, s2{2}, s3{3}, s4{4}, s5{5}, s6{6}, s7{7}, s8{8}, s9{9}, s10{10}, s11{11}, s12{12},
    s13{13}, s14{14}, s15{15}, s16{16}, s17{17}, s18{18}, s19{19}, s20{20}, s21{21}, s22{22}, s23{23}, s24{24}, s25{25},
    s26{26}, s27{27}, s28{28}, s29{29}, s30{30}, s31{31};
inline constexpr HReg h0{0}, h1{1}, h2{2}, h3{3}, h4{4}, h5{5}, h6{6}, h7{7}, h8{8}, h9{9}, h10{10}, h11{11}, h12{12},
    h13{13}, h14{14}, h15{15}, h16{16}, h17{17}, h18{18}, h19{19}, h20{20}, h21{21}, h22{22}, h23{23}, h24{24}, h25{25},
    h26{26}, h27{27}, h28{28}, h29{29}, h30{30}, h31{31};

// ---- SVE registers -----------------------------------------------------------------------------

template <Lane L>
struct ZVec {
  unsigned index;
};
using ZB = ZVec<Lane::b>;
using ZH = ZVec<Lane::h>;
using ZS = ZVec<Lane::s>;
using ZD = ZVec<Lane::d>;

// An indexed element: the same element of every 128-bit segment (fmla by element, bfdot). Which
// registers and indexes an instruction takes is its own: the assembler checks them.
template <Lane L>
struct ZElem {
  unsigned index;
  unsigned element;
};

struct ZReg {
  constexpr explicit ZReg(unsigned i) : index(detail::checked_register(i, 31, "z")) {}
  unsigned index;

  constexpr ZB b() const { return {index}; }
  constexpr ZH h() const { return {index}; }
  constexpr ZS s() const { return {index}; }
  constexpr ZD d() const { return {index}; }
  constexpr ZElem<Lane::h> h(unsigned element) const { return {index, element}; }
  constexpr ZElem<Lane::s> s(unsigned element) const { return {index, element}; }
  constexpr ZElem<Lane::d> d(unsigned element) const { return {index, element}; }
};

template <Lane L>
struct PVec {
  unsigned index;
};
struct PZeroing {  // pg/z
  unsigned index;
};
struct PMerging {  // pg/m
  unsigned index;
};

struct PReg {
  constexpr explicit PReg(unsigned i) : index(detail::checked_register(i, 15, "p")) {}
  unsigned index;

  constexpr PVec<Lane::b> b() const { return {index}; }
  constexpr PVec<Lane::h> h() const { return {index}; }
  constexpr PVec<Lane::s> s() const { return {index}; }
  constexpr PVec<Lane::d> d() const { return {index}; }
  constexpr PZeroing z() const { return {index}; }
  constexpr PMerging m() const { return {index}; }
};

inline constexpr ZReg z0{0}, z1{1}, z2{2}, z3{3}, z4{4}, z5{5}, z6{6}, z7{7}, z8{8}, z9{9}, z10{10}, z11{11}, z12{12},
    z13{13}, z14{14}, z15{15}, z16{16}, z17{17}, z18{18}, z19{19}, z20{20}, z21{21}, z22{22}, z23{23}, z24{24}, z25{25},
    z26{26}, z27{27}, z28{28}, z29{29}, z30{30}, z31{31};
inline constexpr PReg p0{0}, p1{1}, p2{2}, p3{3}, p4{4}, p5{5}, p6{6}, p7{7}, p8{8}, p9{9}, p10{10}, p11{11}, p12{12},
    p13{13}, p14{14}, p15{15};

// The element-count patterns of ptrue and cntb..cntd (the encodings' pattern field): all elements,
// the largest power of two, a fixed count (vl1..vl256: none if the vector has fewer), the largest
// multiple of 4 or 3.
enum class Pattern : std::uint8_t {
  pow2 = 0,
  vl1 = 1,
  vl2 = 2,
  vl3 = 3,
  vl4 = 4,
  vl5 = 5,
  vl6 = 6,
  vl7 = 7,
  vl8 = 8,
  vl16 = 9,
  vl32 = 10,
  vl64 = 11,
  vl128 = 12,
  vl256 = 13,
  mul4 = 29,
  mul3 = 30,
  all = 31
};

// ---- shifts and extends -------------------------------------------------------------------------

enum class ShiftKind : std::uint8_t { lsl, lsr, asr, ror };
struct Shift {
  ShiftKind kind = ShiftKind::lsl;
  unsigned amount = 0;
};
constexpr Shift lsl(unsigned amount) { return {ShiftKind::lsl, amount}; }
constexpr Shift lsr(unsigned amount) { return {ShiftKind::lsr, amount}; }
constexpr Shift asr(unsigned amount) { return {ShiftKind::asr, amount}; }
constexpr Shift ror(unsigned amount) { return {ShiftKind::ror, amount}; }

// The values are the encodings' option field.
enum class ExtendKind : std::uint8_t { uxtb, uxth, uxtw, uxtx, sxtb, sxth, sxtw, sxtx };
struct Extend {
  ExtendKind kind;
  int amount;  // -1: no amount written (a byte load's register offset tells the two apart)
};
constexpr Extend uxtb(int amount = -1) { return {ExtendKind::uxtb, amount}; }
constexpr Extend uxth(int amount = -1) { return {ExtendKind::uxth, amount}; }
constexpr Extend uxtw(int amount = -1) { return {ExtendKind::uxtw, amount}; }
constexpr Extend uxtx(int amount = -1) { return {ExtendKind::uxtx, amount}; }
constexpr Extend sxtb(int amount = -1) { return {ExtendKind::sxtb, amount}; }
constexpr Extend sxth(int amount = -1) { return {ExtendKind::sxth, amount}; }
constexpr Extend sxtw(int amount = -1) { return {ExtendKind::sxtw, amount}; }
constexpr Extend sxtx(int amount = -1) { return {ExtendKind::sxtx, amount}; }

// ---- memory operands ----------------------------------------------------------------------------

enum class AddrMode : std::uint8_t { offset, pre, post };

// [base, #offset], [base, #offset]! or [base], #offset.
struct MemImm {
  XOrSp base;
  std::int64_t offset;
  AddrMode mode;
};
// [base, index{, extend/shift}]: index is an x register with lsl/sxtx, or a w register with
// uxtw/sxtw; the amount must be 0 or log2 of the access size.
struct MemReg {
  XOrSp base;
  unsigned index;
  ExtendKind kind;  // uxtx stands for lsl
  int amount;       // -1: none written
};
// [base], xm: post-increment by a register (ld1/st1 structures).
struct MemPostReg {
  XOrSp base;
  XReg index;
};

constexpr MemImm ptr(XOrSp base, std::int64_t offset = 0) { return {base, offset, AddrMode::offset}; }
constexpr MemImm pre_ptr(XOrSp base, std::int64_t offset) { return {base, offset, AddrMode::pre}; }
constexpr MemImm post_ptr(XOrSp base, std::int64_t offset) { return {base, offset, AddrMode::post}; }
constexpr MemPostReg post_ptr(XOrSp base, XReg index) { return {base, index}; }

// [base, #index, mul vl]: SVE's offset in multiples of the vector length (or of the predicate length).
struct MemVl {
  XOrSp base;
  std::int64_t index;
};
constexpr MemVl ptr_vl(XOrSp base, std::int64_t index = 0) { return {base, index}; }

constexpr MemReg ptr(XOrSp base, XReg index) { return {base, index.index, ExtendKind::uxtx, -1}; }
constexpr MemReg ptr(XOrSp base, XReg index, Shift shift) {
  if (shift.kind != ShiftKind::lsl) throw Error("a64: a register offset shifts only with lsl");
  return {base, index.index, ExtendKind::uxtx, static_cast<int>(shift.amount)};
}
constexpr MemReg ptr(XOrSp base, XReg index, Extend extend) {
  if (extend.kind != ExtendKind::sxtx) throw Error("a64: an x register offset extends only with sxtx (or lsl)");
  return {base, index.index, extend.kind, extend.amount};
}
constexpr MemReg ptr(XOrSp base, WReg index, Extend extend) {
  if (extend.kind != ExtendKind::uxtw && extend.kind != ExtendKind::sxtw) {
    throw Error("a64: a w register offset extends only with uxtw or sxtw");
  }
  return {base, index.index, extend.kind, extend.amount};
}

// ---- conditions and barriers --------------------------------------------------------------------

// The values are the encodings' cond field.
enum class Cond : std::uint8_t {
  eq, ne, hs, lo, mi, pl, vs, vc, hi, ls, ge, lt, gt, le, al, nv,
  // SVE's names for the flags a predicate sets (ptest, whilelt): b(Cond::first, l), b(Cond::none, l) ...
  none = eq, any = ne, nlast = hs, last = lo, first = mi, nfrst = pl, pmore = hi, plast = ls, tcont = ge, tstop = lt
};
constexpr Cond invert(Cond c) { return static_cast<Cond>(static_cast<unsigned>(c) ^ 1u); }

// The values are the CRm field of dmb/dsb.
enum class Barrier : std::uint8_t {
  oshld = 1,
  oshst = 2,
  osh = 3,
  nshld = 5,
  nshst = 6,
  nsh = 7,
  ishld = 9,
  ishst = 10,
  ish = 11,
  ld = 13,
  st = 14,
  sy = 15
};

// The prfop field of prfm / prfum: pld (load) or pst (store), the cache level, keep (temporal) or
// strm (streaming, used once).
enum class Prefetch : std::uint8_t {
  pldl1keep = 0,
  pldl1strm = 1,
  pldl2keep = 2,
  pldl2strm = 3,
  pldl3keep = 4,
  pldl3strm = 5,
  pstl1keep = 16,
  pstl1strm = 17,
  pstl2keep = 18,
  pstl2strm = 19,
  pstl3keep = 20,
  pstl3strm = 21
};

}  // namespace weft::jit::a64
