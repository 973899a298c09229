// An A64 (AArch64) assembler: appends 32-bit instruction words to a buffer. It runs on any host
// (it only writes words), so its encodings are tested against GNU as on x86-64 too.
//
//   using namespace weft::jit::a64;
//   Assembler a;
//   Label loop;
//   a.mov_imm(x3, 1000);
//   a.movi(v0.d2(), 0);                          // zero the accumulator
//   a.bind(loop);
//   a.ld1({v1.s4(), v2.s4()}, post_ptr(x1, 32));
//   a.ldr(q3, post_ptr(x2, 16));
//   a.fmla(v0.s4(), v1.s4(), v3.s(0));
//   a.fmla(v0.s4(), v2.s4(), v3.s(1));
//   a.subs(x3, x3, 1);
//   a.b(Cond::ne, loop);
//   a.str(q0, ptr(x0));
//   a.ret();
//   const std::vector<std::uint8_t> code = a.bytes();  // little-endian, ready to copy
//
// Every method emits exactly the instruction it names, or throws weft::Error naming the form and
// the bad operand ("a64 ldr.q.uimm: offset 40 is not a multiple of 16"): an out-of-range or
// misaligned immediate never turns into another instruction (ldr with a negative offset does not
// become ldur; call ldur). Labels may be used before they are bound; words() and bytes() throw
// while a used label is unbound. Each method records its form (forms.hpp) in forms_used().
#pragma once

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "weft/jit/aarch64/forms.hpp"
#include "weft/jit/aarch64/operands.hpp"

namespace weft::jit::a64 {

class Assembler;

// A position in the code. Bind it once; branches may refer to it before or after.
class Label {
 public:
  Label() = default;

 private:
  friend class Assembler;
  const Assembler* owner_ = nullptr;
  std::size_t id_ = 0;
};

namespace detail {
template <Arr A>
inline constexpr bool kFpArr = A == Arr::s2 || A == Arr::s4 || A == Arr::d2;
template <Arr A>
inline constexpr bool kIntArr = A == Arr::b16 || A == Arr::h8 || A == Arr::s4 || A == Arr::d2;
template <Arr A>
inline constexpr bool kByteArr = A == Arr::b8 || A == Arr::b16;
template <Arr A>
inline constexpr bool kWideArr = A == Arr::h8 || A == Arr::s4 || A == Arr::d2;
template <Lane L>
inline constexpr bool kSveFp = L != Lane::b;  // SVE floating point: h, s, d
template <unsigned B>
inline constexpr bool kFpScalar = B == 4 || B == 8;
template <unsigned B>
inline constexpr bool kLoadScalar = B == 2 || B == 4 || B == 8 || B == 16;

// The lane of an arrangement's elements.
constexpr Lane lane_of(Arr a) {
  switch (a) {
    case Arr::b8: case Arr::b16: return Lane::b;
    case Arr::h4: case Arr::h8: return Lane::h;
    case Arr::s2: case Arr::s4: return Lane::s;
    case Arr::d2: break;
  }
  return Lane::d;
}
// The halves of a wide arrangement: 8h -> 8b (low half) and 16b (whole register of narrow elements).
constexpr Arr narrow_low(Arr wide) { return wide == Arr::h8 ? Arr::b8 : wide == Arr::s4 ? Arr::h4 : Arr::s2; }
constexpr Arr narrow_full(Arr wide) { return wide == Arr::h8 ? Arr::b16 : wide == Arr::s4 ? Arr::h8 : Arr::s4; }
}  // namespace detail

class Assembler {
 public:
  // ---- output -----------------------------------------------------------------------------------
  const std::vector<std::uint32_t>& words() const;  // throws while a used label is unbound
  std::vector<std::uint8_t> bytes() const;           // words() in little-endian byte order
  std::size_t size_bytes() const { return words_.size() * 4; }
  const std::bitset<kFormCount>& forms_used() const { return forms_used_; }
  bool used(Form form) const { return forms_used_.test(static_cast<std::size_t>(form)); }

  // ---- labels and padding -----------------------------------------------------------------------
  void bind(Label& label);
  void align(std::size_t bytes);  // pads with nop to a power of two >= 4
  // One raw 32-bit word, appended as is (data among the code: a constant pool after the last
  // instruction). It is no instruction, so it records no form and no golden case covers it.
  void data(std::uint32_t word);

  // ---- integer arithmetic -----------------------------------------------------------------------
  // Immediate: 0..4095, or 0..4095 with lsl(12).
  void add(XOrSp d, XOrSp n, std::int64_t imm, Shift shift = {});
  void add(WOrSp d, WOrSp n, std::int64_t imm, Shift shift = {});
  void adds(XOrZr d, XOrSp n, std::int64_t imm, Shift shift = {});
  void adds(WOrZr d, WOrSp n, std::int64_t imm, Shift shift = {});
  void sub(XOrSp d, XOrSp n, std::int64_t imm, Shift shift = {});
  void sub(WOrSp d, WOrSp n, std::int64_t imm, Shift shift = {});
  void subs(XOrZr d, XOrSp n, std::int64_t imm, Shift shift = {});
  void subs(WOrZr d, WOrSp n, std::int64_t imm, Shift shift = {});
  // Shifted register: lsl, lsr or asr.
  void add(XOrZr d, XOrZr n, XOrZr m, Shift shift = {});
  void add(WOrZr d, WOrZr n, WOrZr m, Shift shift = {});
  void adds(XOrZr d, XOrZr n, XOrZr m, Shift shift = {});
  void adds(WOrZr d, WOrZr n, WOrZr m, Shift shift = {});
  void sub(XOrZr d, XOrZr n, XOrZr m, Shift shift = {});
  void sub(WOrZr d, WOrZr n, WOrZr m, Shift shift = {});
  void subs(XOrZr d, XOrZr n, XOrZr m, Shift shift = {});
  void subs(WOrZr d, WOrZr n, WOrZr m, Shift shift = {});
  // Extended register (the form that reaches sp): m is a w register with uxtb..sxtw, or an x
  // register with uxtx/sxtx; amount 0..4.
  void add(XOrSp d, XOrSp n, WOrZr m, Extend extend);
  void add(XOrSp d, XOrSp n, XOrZr m, Extend extend);
  void add(WOrSp d, WOrSp n, WOrZr m, Extend extend);
  void adds(XOrZr d, XOrSp n, WOrZr m, Extend extend);
  void adds(XOrZr d, XOrSp n, XOrZr m, Extend extend);
  void adds(WOrZr d, WOrSp n, WOrZr m, Extend extend);
  void sub(XOrSp d, XOrSp n, WOrZr m, Extend extend);
  void sub(XOrSp d, XOrSp n, XOrZr m, Extend extend);
  void sub(WOrSp d, WOrSp n, WOrZr m, Extend extend);
  void subs(XOrZr d, XOrSp n, WOrZr m, Extend extend);
  void subs(XOrZr d, XOrSp n, XOrZr m, Extend extend);
  void subs(WOrZr d, WOrSp n, WOrZr m, Extend extend);
  void cmp(XOrSp n, std::int64_t imm, Shift shift = {});
  void cmp(WOrSp n, std::int64_t imm, Shift shift = {});
  void cmp(XOrZr n, XOrZr m, Shift shift = {});
  void cmp(WOrZr n, WOrZr m, Shift shift = {});
  void cmn(XOrSp n, std::int64_t imm, Shift shift = {});
  void cmn(WOrSp n, std::int64_t imm, Shift shift = {});
  void cmn(XOrZr n, XOrZr m, Shift shift = {});
  void cmn(WOrZr n, WOrZr m, Shift shift = {});

  // ---- logical ----------------------------------------------------------------------------------
  // Shifted register: lsl, lsr, asr or ror.
  void and_(XOrZr d, XOrZr n, XOrZr m, Shift shift = {});
  void and_(WOrZr d, WOrZr n, WOrZr m, Shift shift = {});
  void ands(XOrZr d, XOrZr n, XOrZr m, Shift shift = {});
  void ands(WOrZr d, WOrZr n, WOrZr m, Shift shift = {});
  void orr(XOrZr d, XOrZr n, XOrZr m, Shift shift = {});
  void orr(WOrZr d, WOrZr n, WOrZr m, Shift shift = {});
  void eor(XOrZr d, XOrZr n, XOrZr m, Shift shift = {});
  void eor(WOrZr d, WOrZr n, WOrZr m, Shift shift = {});
  void bic(XOrZr d, XOrZr n, XOrZr m, Shift shift = {});
  void bic(WOrZr d, WOrZr n, WOrZr m, Shift shift = {});
  void orn(XOrZr d, XOrZr n, XOrZr m, Shift shift = {});
  void orn(WOrZr d, WOrZr n, WOrZr m, Shift shift = {});
  void tst(XOrZr n, XOrZr m, Shift shift = {});
  void tst(WOrZr n, WOrZr m, Shift shift = {});
  // Bitmask immediate: a rotated run of ones repeated in 2, 4, ..., 64-bit elements (not 0, not ~0).
  void and_(XOrSp d, XOrZr n, std::uint64_t imm);
  void and_(WOrSp d, WOrZr n, std::uint64_t imm);
  void ands(XOrZr d, XOrZr n, std::uint64_t imm);
  void ands(WOrZr d, WOrZr n, std::uint64_t imm);
  void orr(XOrSp d, XOrZr n, std::uint64_t imm);
  void orr(WOrSp d, WOrZr n, std::uint64_t imm);
  void eor(XOrSp d, XOrZr n, std::uint64_t imm);
  void eor(WOrSp d, WOrZr n, std::uint64_t imm);
  void tst(XOrZr n, std::uint64_t imm);
  void tst(WOrZr n, std::uint64_t imm);

  // ---- moves ------------------------------------------------------------------------------------
  void mov(XOrZr d, XOrZr m);  // orr d, zr, m
  void mov(WOrZr d, WOrZr m);
  void mov(XSp d, XReg n);     // add sp, n, #0
  void mov(XReg d, XSp n);
  void mov(WSp d, WReg n);
  void mov(WReg d, WSp n);
  // imm16 at bit `shift` (0, 16, 32 or 48; 0 or 16 for w).
  void movz(XReg d, std::uint32_t imm16, unsigned shift = 0);
  void movz(WReg d, std::uint32_t imm16, unsigned shift = 0);
  void movn(XReg d, std::uint32_t imm16, unsigned shift = 0);
  void movn(WReg d, std::uint32_t imm16, unsigned shift = 0);
  void movk(XReg d, std::uint32_t imm16, unsigned shift = 0);
  void movk(WReg d, std::uint32_t imm16, unsigned shift = 0);
  // Any value in the fewest instructions: one orr with a bitmask immediate, or movz/movn and movk.
  void mov_imm(XReg d, std::uint64_t value);
  void mov_imm(WReg d, std::int64_t value);  // -2^31 .. 2^32-1

  // ---- shifts, multiply, divide, conditional select ---------------------------------------------
  void lsl(XOrZr d, XOrZr n, unsigned amount);  // 0..63 (0..31 for w)
  void lsl(WOrZr d, WOrZr n, unsigned amount);
  void lsr(XOrZr d, XOrZr n, unsigned amount);
  void lsr(WOrZr d, WOrZr n, unsigned amount);
  void asr(XOrZr d, XOrZr n, unsigned amount);
  void asr(WOrZr d, WOrZr n, unsigned amount);
  void lsl(XOrZr d, XOrZr n, XOrZr m);
  void lsl(WOrZr d, WOrZr n, WOrZr m);
  void lsr(XOrZr d, XOrZr n, XOrZr m);
  void lsr(WOrZr d, WOrZr n, WOrZr m);
  void asr(XOrZr d, XOrZr n, XOrZr m);
  void asr(WOrZr d, WOrZr n, WOrZr m);
  void mul(XOrZr d, XOrZr n, XOrZr m);
  void mul(WOrZr d, WOrZr n, WOrZr m);
  void madd(XOrZr d, XOrZr n, XOrZr m, XOrZr a);  // d = a + n * m
  void madd(WOrZr d, WOrZr n, WOrZr m, WOrZr a);
  void msub(XOrZr d, XOrZr n, XOrZr m, XOrZr a);  // d = a - n * m
  void msub(WOrZr d, WOrZr n, WOrZr m, WOrZr a);
  void udiv(XOrZr d, XOrZr n, XOrZr m);
  void udiv(WOrZr d, WOrZr n, WOrZr m);
  void sdiv(XOrZr d, XOrZr n, XOrZr m);
  void sdiv(WOrZr d, WOrZr n, WOrZr m);
  void csel(XOrZr d, XOrZr n, XOrZr m, Cond cond);
  void csel(WOrZr d, WOrZr n, WOrZr m, Cond cond);
  void csinc(XOrZr d, XOrZr n, XOrZr m, Cond cond);
  void csinc(WOrZr d, WOrZr n, WOrZr m, Cond cond);
  void cset(XOrZr d, Cond cond);  // not al or nv
  void cset(WOrZr d, Cond cond);

  // ---- branches and system ----------------------------------------------------------------------
  void b(Label& target);                 // +-128 MiB
  void bl(Label& target);                // +-128 MiB
  void b(Cond cond, Label& target);      // +-1 MiB
  void cbz(XOrZr t, Label& target);      // +-1 MiB
  void cbz(WOrZr t, Label& target);
  void cbnz(XOrZr t, Label& target);
  void cbnz(WOrZr t, Label& target);
  void tbz(XOrZr t, unsigned bit, Label& target);  // bit 0..63 (0..31 for w), +-32 KiB
  void tbz(WOrZr t, unsigned bit, Label& target);
  void tbnz(XOrZr t, unsigned bit, Label& target);
  void tbnz(WOrZr t, unsigned bit, Label& target);
  void adr(XOrZr d, Label& target);      // +-1 MiB
  void br(XOrZr n);
  void blr(XOrZr n);
  void ret(XOrZr n = lr);
  void nop();
  void udf(std::uint32_t imm16);
  void dmb(Barrier option);
  void dsb(Barrier option);
  void isb();

  // ---- integer loads and stores -----------------------------------------------------------------
  // ptr(base, offset): unsigned offset, a multiple of the access size up to 4095 times it.
  // pre_ptr/post_ptr: -256..255. ptr(base, index...): register offset. ldur/stur: ptr(base, -256..255).
  void ldr(XOrZr t, MemImm mem);
  void ldr(XOrZr t, MemReg mem);
  void ldr(WOrZr t, MemImm mem);
  void ldr(WOrZr t, MemReg mem);
  void ldrb(WOrZr t, MemImm mem);
  void ldrb(WOrZr t, MemReg mem);
  void ldrh(WOrZr t, MemImm mem);
  void ldrh(WOrZr t, MemReg mem);
  void ldrsw(XOrZr t, MemImm mem);
  void ldrsw(XOrZr t, MemReg mem);
  void str(XOrZr t, MemImm mem);
  void str(XOrZr t, MemReg mem);
  void str(WOrZr t, MemImm mem);
  void str(WOrZr t, MemReg mem);
  void strb(WOrZr t, MemImm mem);
  void strb(WOrZr t, MemReg mem);
  void strh(WOrZr t, MemImm mem);
  void strh(WOrZr t, MemReg mem);
  void ldur(XOrZr t, MemImm mem);
  void ldur(WOrZr t, MemImm mem);
  void ldurb(WOrZr t, MemImm mem);
  void ldurh(WOrZr t, MemImm mem);
  void ldursw(XOrZr t, MemImm mem);
  // Prefetch hints (never fault): prfm ptr(base, 0..32760, a multiple of 8) or ptr(base, index
  // {, lsl #0/#3}); prfum ptr(base, -256..255).
  void prfm(Prefetch op, MemImm mem);
  void prfm(Prefetch op, MemReg mem);
  void prfum(Prefetch op, MemImm mem);
  void stur(XOrZr t, MemImm mem);
  void stur(WOrZr t, MemImm mem);
  void sturb(WOrZr t, MemImm mem);
  void sturh(WOrZr t, MemImm mem);
  // Pairs: offset, pre and post index are -64..63 times the register size.
  void ldp(XOrZr t1, XOrZr t2, MemImm mem);
  void ldp(WOrZr t1, WOrZr t2, MemImm mem);
  void stp(XOrZr t1, XOrZr t2, MemImm mem);
  void stp(WOrZr t1, WOrZr t2, MemImm mem);

  // ---- atomics and exclusives (the address is ptr(base) without offset) -------------------------
  void ldar(XOrZr t, MemImm mem);
  void ldar(WOrZr t, MemImm mem);
  void stlr(XOrZr t, MemImm mem);
  void stlr(WOrZr t, MemImm mem);
  void ldxr(XOrZr t, MemImm mem);
  void ldxr(WOrZr t, MemImm mem);
  void ldaxr(XOrZr t, MemImm mem);
  void ldaxr(WOrZr t, MemImm mem);
  void stxr(WOrZr status, XOrZr t, MemImm mem);  // status differs from t and the base
  void stxr(WOrZr status, WOrZr t, MemImm mem);
  void stlxr(WOrZr status, XOrZr t, MemImm mem);
  void stlxr(WOrZr status, WOrZr t, MemImm mem);
  void ldaddal(XOrZr s, XOrZr t, MemImm mem);  // t = *mem; *mem += s (needs LSE, Armv8.1)
  void ldaddal(WOrZr s, WOrZr t, MemImm mem);

  // ---- SIMD&FP loads and stores -----------------------------------------------------------------
  // q, d, s and h registers, addressed as the integer loads.
  template <unsigned B> requires detail::kLoadScalar<B>
  void ldr(ScalarReg<B> t, MemImm mem) { fp_load_store(true, B, t.index, mem); }
  template <unsigned B> requires detail::kLoadScalar<B>
  void ldr(ScalarReg<B> t, MemReg mem) { fp_load_store(true, B, t.index, mem); }
  template <unsigned B> requires detail::kLoadScalar<B>
  void str(ScalarReg<B> t, MemImm mem) { fp_load_store(false, B, t.index, mem); }
  template <unsigned B> requires detail::kLoadScalar<B>
  void str(ScalarReg<B> t, MemReg mem) { fp_load_store(false, B, t.index, mem); }
  template <unsigned B> requires detail::kLoadScalar<B>
  void ldur(ScalarReg<B> t, MemImm mem) { fp_load_store_unscaled(true, B, t.index, mem); }
  template <unsigned B> requires detail::kLoadScalar<B>
  void stur(ScalarReg<B> t, MemImm mem) { fp_load_store_unscaled(false, B, t.index, mem); }
  // Pairs of q, d or s registers.
  template <unsigned B> requires(B == 4 || B == 8 || B == 16)
  void ldp(ScalarReg<B> t1, ScalarReg<B> t2, MemImm mem) { fp_pair(true, B, t1.index, t2.index, mem); }
  template <unsigned B> requires(B == 4 || B == 8 || B == 16)
  void stp(ScalarReg<B> t1, ScalarReg<B> t2, MemImm mem) { fp_pair(false, B, t1.index, t2.index, mem); }

  // ld1/st1 of 1 to 4 consecutive registers (v31 wraps to v0): ptr(base), post_ptr(base, bytes of
  // the list) or post_ptr(base, xm).
  template <Arr A> requires detail::kIntArr<A>
  void ld1(std::initializer_list<Vec<A>> list, MemImm mem) { vector_list(true, A, indices(list), &mem, nullptr); }
  template <Arr A> requires detail::kIntArr<A>
  void ld1(std::initializer_list<Vec<A>> list, MemPostReg mem) { vector_list(true, A, indices(list), nullptr, &mem); }
  template <Arr A> requires detail::kIntArr<A>
  void st1(std::initializer_list<Vec<A>> list, MemImm mem) { vector_list(false, A, indices(list), &mem, nullptr); }
  template <Arr A> requires detail::kIntArr<A>
  void st1(std::initializer_list<Vec<A>> list, MemPostReg mem) { vector_list(false, A, indices(list), nullptr, &mem); }
  // One lane: ptr(base), post_ptr(base, element bytes) or post_ptr(base, xm).
  template <Lane L> requires(L == Lane::s || L == Lane::d)
  void ld1(Elem<L> lane, MemImm mem) { vector_lane(true, lane.index, lane.lane, L == Lane::d, mem); }
  template <Lane L> requires(L == Lane::s || L == Lane::d)
  void ld1(Elem<L> lane, MemPostReg mem) { vector_lane(true, lane.index, lane.lane, L == Lane::d, mem); }
  template <Lane L> requires(L == Lane::s || L == Lane::d)
  void st1(Elem<L> lane, MemImm mem) { vector_lane(false, lane.index, lane.lane, L == Lane::d, mem); }
  template <Lane L> requires(L == Lane::s || L == Lane::d)
  void st1(Elem<L> lane, MemPostReg mem) { vector_lane(false, lane.index, lane.lane, L == Lane::d, mem); }
  // Load one element into every lane: ptr(base), post_ptr(base, element bytes) or post_ptr(base, xm).
  template <Arr A> requires(A == Arr::s4 || A == Arr::d2)
  void ld1r(Vec<A> t, MemImm mem) { load_replicate(A == Arr::d2, t.index, mem); }
  template <Arr A> requires(A == Arr::s4 || A == Arr::d2)
  void ld1r(Vec<A> t, MemPostReg mem) { load_replicate(A == Arr::d2, t.index, mem); }

  // ---- floating-point vector (2s, 4s, 2d) -------------------------------------------------------
#define WEFT_A64_FP_VECTOR3(name, first, base)                                                                         \
  template <Arr A> requires detail::kFpArr<A>                                                                          \
  void name(Vec<A> d, Vec<A> n, Vec<A> m) { fp_vector(Form::first, base, A, d.index, n.index, m.index); }
#define WEFT_A64_FP_VECTOR2(name, first, base)                                                                         \
  template <Arr A> requires detail::kFpArr<A>                                                                          \
  void name(Vec<A> d, Vec<A> n) { fp_vector(Form::first, base, A, d.index, n.index, 0); }
  WEFT_A64_FP_VECTOR3(fadd, fadd_2s, 0x0E20D400)
  WEFT_A64_FP_VECTOR3(fsub, fsub_2s, 0x0EA0D400)
  WEFT_A64_FP_VECTOR3(fmul, fmul_2s, 0x2E20DC00)
  WEFT_A64_FP_VECTOR3(fdiv, fdiv_2s, 0x2E20FC00)
  WEFT_A64_FP_VECTOR3(fmax, fmax_2s, 0x0E20F400)
  WEFT_A64_FP_VECTOR3(fmin, fmin_2s, 0x0EA0F400)
  WEFT_A64_FP_VECTOR3(fmaxnm, fmaxnm_2s, 0x0E20C400)
  WEFT_A64_FP_VECTOR3(fminnm, fminnm_2s, 0x0EA0C400)
  WEFT_A64_FP_VECTOR3(fabd, fabd_2s, 0x2EA0D400)
  WEFT_A64_FP_VECTOR3(faddp, faddp_2s, 0x2E20D400)
  WEFT_A64_FP_VECTOR3(fmla, fmla_2s, 0x0E20CC00)
  WEFT_A64_FP_VECTOR3(fmls, fmls_2s, 0x0EA0CC00)
  WEFT_A64_FP_VECTOR3(frecps, frecps_2s, 0x0E20FC00)
  WEFT_A64_FP_VECTOR3(frsqrts, frsqrts_2s, 0x0EA0FC00)
  WEFT_A64_FP_VECTOR3(fcmeq, fcmeq_2s, 0x0E20E400)
  WEFT_A64_FP_VECTOR3(fcmge, fcmge_2s, 0x2E20E400)
  WEFT_A64_FP_VECTOR3(fcmgt, fcmgt_2s, 0x2EA0E400)
  WEFT_A64_FP_VECTOR2(fsqrt, fsqrt_2s, 0x2EA1F800)
  WEFT_A64_FP_VECTOR2(fabs, fabs_2s, 0x0EA0F800)
  WEFT_A64_FP_VECTOR2(fneg, fneg_2s, 0x2EA0F800)
  WEFT_A64_FP_VECTOR2(frintn, frintn_2s, 0x0E218800)
  WEFT_A64_FP_VECTOR2(frintm, frintm_2s, 0x0E219800)
  WEFT_A64_FP_VECTOR2(frintp, frintp_2s, 0x0EA18800)
  WEFT_A64_FP_VECTOR2(frintz, frintz_2s, 0x0EA19800)
  WEFT_A64_FP_VECTOR2(frecpe, frecpe_2s, 0x0EA1D800)
  WEFT_A64_FP_VECTOR2(frsqrte, frsqrte_2s, 0x2EA1D800)
  WEFT_A64_FP_VECTOR2(fcvtzs, fcvtzs_2s, 0x0EA1B800)
  WEFT_A64_FP_VECTOR2(fcvtns, fcvtns_2s, 0x0E21A800)
  WEFT_A64_FP_VECTOR2(scvtf, scvtf_2s, 0x0E21D800)
  WEFT_A64_FP_VECTOR2(ucvtf, ucvtf_2s, 0x2E21D800)
#undef WEFT_A64_FP_VECTOR3
#undef WEFT_A64_FP_VECTOR2
  // Compare with zero: `zero` must be 0.0 (it stands for the #0.0 operand).
#define WEFT_A64_FP_ZERO(name, first, base)                                                                            \
  template <Arr A> requires detail::kFpArr<A>                                                                          \
  void name(Vec<A> d, Vec<A> n, double zero) { fp_compare_zero(Form::first, base, A, d.index, n.index, zero); }
  WEFT_A64_FP_ZERO(fcmeq, fcmeq_2s_zero, 0x0EA0D800)
  WEFT_A64_FP_ZERO(fcmge, fcmge_2s_zero, 0x2EA0C800)
  WEFT_A64_FP_ZERO(fcmgt, fcmgt_2s_zero, 0x0EA0C800)
  WEFT_A64_FP_ZERO(fcmle, fcmle_2s_zero, 0x2EA0D800)
  WEFT_A64_FP_ZERO(fcmlt, fcmlt_2s_zero, 0x0EA0E800)
#undef WEFT_A64_FP_ZERO
  // By element: m is a lane of the same element size (v0..v31).
#define WEFT_A64_FP_ELEMENT(name, first, base)                                                                         \
  template <Arr A> requires detail::kFpArr<A>                                                                          \
  void name(Vec<A> d, Vec<A> n, Elem<detail::lane_of(A)> m) {                                                          \
    fp_by_element(Form::first, base, A, d.index, n.index, m.index, m.lane);                                            \
  }
  WEFT_A64_FP_ELEMENT(fmla, fmla_2s_elem, 0x0F801000)
  WEFT_A64_FP_ELEMENT(fmls, fmls_2s_elem, 0x0F805000)
  WEFT_A64_FP_ELEMENT(fmul, fmul_2s_elem, 0x0F809000)
#undef WEFT_A64_FP_ELEMENT
  // Every lane = value, which must be +-(16..31)/16 * 2^(-3..4) (1.0, 0.5, -2.0, 31.0, ...).
  template <Arr A> requires detail::kFpArr<A>
  void fmov(Vec<A> d, double value) { fp_vector_immediate(A, d.index, value); }
  void fcvtn(V2S d, V2D n);   // fp64 -> fp32, low half
  void fcvtn2(V4S d, V2D n);  // fp64 -> fp32, high half (the low half is kept)
  void fcvtl(V2D d, V2S n);   // fp32 -> fp64 from the low half
  void fcvtl2(V2D d, V4S n);  // fp32 -> fp64 from the high half
  void faddp(SReg d, V2S n);  // reductions
  void faddp(DReg d, V2D n);
  void fmaxv(SReg d, V4S n);
  void fminv(SReg d, V4S n);
  void fmaxnmv(SReg d, V4S n);
  void fminnmv(SReg d, V4S n);

  // ---- integer vector (16b, 8h, 4s, 2d) ---------------------------------------------------------
#define WEFT_A64_INT_VECTOR3(name, first, base)                                                                        \
  template <Arr A> requires detail::kIntArr<A>                                                                         \
  void name(Vec<A> d, Vec<A> n, Vec<A> m) { int_vector(Form::first, base, A, d.index, n.index, m.index); }
  WEFT_A64_INT_VECTOR3(add, add_16b, 0x0E208400)
  WEFT_A64_INT_VECTOR3(sub, sub_16b, 0x2E208400)
  WEFT_A64_INT_VECTOR3(uzp1, uzp1_16b, 0x0E001800)
  WEFT_A64_INT_VECTOR3(trn1, trn1_16b, 0x0E002800)
  WEFT_A64_INT_VECTOR3(zip1, zip1_16b, 0x0E003800)
  WEFT_A64_INT_VECTOR3(uzp2, uzp2_16b, 0x0E005800)
  WEFT_A64_INT_VECTOR3(trn2, trn2_16b, 0x0E006800)
  WEFT_A64_INT_VECTOR3(zip2, zip2_16b, 0x0E007800)
#undef WEFT_A64_INT_VECTOR3
  // Shift by an immediate: shl 0..esize-1, sshr/ushr 1..esize.
  template <Arr A> requires detail::kIntArr<A>
  void shl(Vec<A> d, Vec<A> n, unsigned shift) { shift_immediate(Form::shl_16b, A, d.index, n.index, shift); }
  template <Arr A> requires detail::kIntArr<A>
  void sshr(Vec<A> d, Vec<A> n, unsigned shift) { shift_immediate(Form::sshr_16b, A, d.index, n.index, shift); }
  template <Arr A> requires detail::kIntArr<A>
  void ushr(Vec<A> d, Vec<A> n, unsigned shift) { shift_immediate(Form::ushr_16b, A, d.index, n.index, shift); }
  // Widen (the low half, or the high half for ...2) and shift left by 0..esize-1 of the source.
  template <Arr W> requires detail::kWideArr<W>
  void sshll(Vec<W> d, Vec<detail::narrow_low(W)> n, unsigned shift) {
    widen_narrow(Form::sshll_8h, W, d.index, n.index, shift);
  }
  template <Arr W> requires detail::kWideArr<W>
  void sshll2(Vec<W> d, Vec<detail::narrow_full(W)> n, unsigned shift) {
    widen_narrow(Form::sshll2_8h, W, d.index, n.index, shift);
  }
  template <Arr W> requires detail::kWideArr<W>
  void ushll(Vec<W> d, Vec<detail::narrow_low(W)> n, unsigned shift) {
    widen_narrow(Form::ushll_8h, W, d.index, n.index, shift);
  }
  template <Arr W> requires detail::kWideArr<W>
  void ushll2(Vec<W> d, Vec<detail::narrow_full(W)> n, unsigned shift) {
    widen_narrow(Form::ushll2_8h, W, d.index, n.index, shift);
  }
  // Narrow into the low half (the high half is zeroed), or the high half for ...2 (the low half is
  // kept); shrn shifts right by 1..esize of the result (16 for 4s -> 4h turns fp32 into bf16 by truncation).
  template <Arr W> requires detail::kWideArr<W>
  void shrn(Vec<detail::narrow_low(W)> d, Vec<W> n, unsigned shift) {
    widen_narrow(Form::shrn_8h, W, d.index, n.index, shift);
  }
  template <Arr W> requires detail::kWideArr<W>
  void shrn2(Vec<detail::narrow_full(W)> d, Vec<W> n, unsigned shift) {
    widen_narrow(Form::shrn2_8h, W, d.index, n.index, shift);
  }
  template <Arr W> requires detail::kWideArr<W>
  void xtn(Vec<detail::narrow_low(W)> d, Vec<W> n) { widen_narrow(Form::xtn_8h, W, d.index, n.index, 0); }
  template <Arr W> requires detail::kWideArr<W>
  void xtn2(Vec<detail::narrow_full(W)> d, Vec<W> n) { widen_narrow(Form::xtn2_8h, W, d.index, n.index, 0); }

  // ---- bitwise vector (8b, 16b), immediates, permutes -------------------------------------------
#define WEFT_A64_BYTE_VECTOR3(name, first, base)                                                                       \
  template <Arr A> requires detail::kByteArr<A>                                                                        \
  void name(Vec<A> d, Vec<A> n, Vec<A> m) { byte_vector(Form::first, base, A, d.index, n.index, m.index); }
  WEFT_A64_BYTE_VECTOR3(and_, and_8b, 0x0E201C00)
  WEFT_A64_BYTE_VECTOR3(bic, bic_8b, 0x0E601C00)
  WEFT_A64_BYTE_VECTOR3(orr, orr_8b, 0x0EA01C00)
  WEFT_A64_BYTE_VECTOR3(orn, orn_8b, 0x0EE01C00)
  WEFT_A64_BYTE_VECTOR3(eor, eor_8b, 0x2E201C00)
  WEFT_A64_BYTE_VECTOR3(bsl, bsl_8b, 0x2E601C00)
  WEFT_A64_BYTE_VECTOR3(bit, bit_8b, 0x2EA01C00)
  WEFT_A64_BYTE_VECTOR3(bif, bif_8b, 0x2EE01C00)
#undef WEFT_A64_BYTE_VECTOR3
  template <Arr A> requires detail::kByteArr<A>
  void not_(Vec<A> d, Vec<A> n) { byte_vector(Form::not_8b, 0x2E205800, A, d.index, n.index, 0); }
  template <Arr A> requires detail::kByteArr<A>
  void mov(Vec<A> d, Vec<A> n) { byte_vector(Form::mov_8b, 0x0EA01C00, A, d.index, n.index, n.index); }
  // Bytes index.. of n:m (index 0..7 for 8b, 0..15 for 16b).
  template <Arr A> requires detail::kByteArr<A>
  void ext(Vec<A> d, Vec<A> n, Vec<A> m, unsigned index) { extract(A, d.index, n.index, m.index, index); }
  // imm8 in every element, shifted left by lsl(0/8) for h, lsl(0/8/16/24) for s; 2d and d take a
  // 64-bit value whose bytes are each 0x00 or 0xff (movi(v0.d2(), 0) zeroes v0).
  void movi(V8B d, std::uint32_t imm8);
  void movi(V16B d, std::uint32_t imm8);
  void movi(V4H d, std::uint32_t imm8, Shift shift = {});
  void movi(V8H d, std::uint32_t imm8, Shift shift = {});
  void movi(V2S d, std::uint32_t imm8, Shift shift = {});
  void movi(V4S d, std::uint32_t imm8, Shift shift = {});
  void movi(V2D d, std::uint64_t byte_mask);
  void movi(DReg d, std::uint64_t byte_mask);
  void mvni(V8H d, std::uint32_t imm8, Shift shift = {});  // ~(imm8 << shift)
  void mvni(V4S d, std::uint32_t imm8, Shift shift = {});

  // ---- element moves (16b, 8h, 4s, 2s, 2d) ------------------------------------------------------
  template <Arr A> requires(detail::kIntArr<A> || A == Arr::s2)
  void dup(Vec<A> d, Elem<detail::lane_of(A)> n) { duplicate(A, d.index, n.index, n.lane, true); }
  template <Arr A> requires(A == Arr::b16 || A == Arr::h8 || A == Arr::s4 || A == Arr::s2)
  void dup(Vec<A> d, WOrZr n) { duplicate(A, d.index, n.index, 0, false); }
  void dup(V2D d, XOrZr n) { duplicate(Arr::d2, d.index, n.index, 0, false); }
  // ins copies one lane into another (or from a general register), keeping the other lanes; mov
  // is its preferred name.
  template <Lane L>
  void ins(Elem<L> d, Elem<L> n) { insert(L, d.index, d.lane, n.index, n.lane, true); }
  template <Lane L> requires(L != Lane::d)
  void ins(Elem<L> d, WOrZr n) { insert(L, d.index, d.lane, n.index, 0, false); }
  void ins(Elem<Lane::d> d, XOrZr n) { insert(Lane::d, d.index, d.lane, n.index, 0, false); }
  template <Lane L>
  void mov(Elem<L> d, Elem<L> n) { ins(d, n); }
  template <Lane L> requires(L != Lane::d)
  void mov(Elem<L> d, WOrZr n) { ins(d, n); }
  void mov(Elem<Lane::d> d, XOrZr n) { ins(d, n); }
  // One lane, zero-extended, into a general register.
  template <Lane L> requires(L != Lane::d)
  void umov(WOrZr d, Elem<L> n) { move_to_general(L, d.index, n.index, n.lane); }
  void umov(XOrZr d, Elem<Lane::d> n) { move_to_general(Lane::d, d.index, n.index, n.lane); }
  // Bits between general and scalar FP registers.
  void fmov(SReg d, WOrZr n);
  void fmov(WOrZr d, SReg n);
  void fmov(DReg d, XOrZr n);
  void fmov(XOrZr d, DReg n);

  // ---- scalar floating point (s, d) -------------------------------------------------------------
#define WEFT_A64_FP_SCALAR3(name, first, opcode)                                                                       \
  template <unsigned B> requires detail::kFpScalar<B>                                                                  \
  void name(ScalarReg<B> d, ScalarReg<B> n, ScalarReg<B> m) {                                                          \
    fp_scalar(Form::first, 0x1E200800 | (opcode << 12), B, d.index, n.index, m.index);                                 \
  }
#define WEFT_A64_FP_SCALAR2(name, first, base)                                                                         \
  template <unsigned B> requires detail::kFpScalar<B>                                                                  \
  void name(ScalarReg<B> d, ScalarReg<B> n) { fp_scalar(Form::first, base, B, d.index, n.index, 0); }
  WEFT_A64_FP_SCALAR3(fmul, fmul_s, 0u)
  WEFT_A64_FP_SCALAR3(fdiv, fdiv_s, 1u)
  WEFT_A64_FP_SCALAR3(fadd, fadd_s, 2u)
  WEFT_A64_FP_SCALAR3(fsub, fsub_s, 3u)
  WEFT_A64_FP_SCALAR3(fmax, fmax_s, 4u)
  WEFT_A64_FP_SCALAR3(fmin, fmin_s, 5u)
  WEFT_A64_FP_SCALAR3(fmaxnm, fmaxnm_s, 6u)
  WEFT_A64_FP_SCALAR3(fminnm, fminnm_s, 7u)
  WEFT_A64_FP_SCALAR2(fmov, fmov_s, 0x1E204000)
  WEFT_A64_FP_SCALAR2(fabs, fabs_s, 0x1E20C000)
  WEFT_A64_FP_SCALAR2(fneg, fneg_s, 0x1E214000)
  WEFT_A64_FP_SCALAR2(fsqrt, fsqrt_s, 0x1E21C000)
#undef WEFT_A64_FP_SCALAR3
#undef WEFT_A64_FP_SCALAR2
  // d = a + n * m, d = a - n * m.
  template <unsigned B> requires detail::kFpScalar<B>
  void fmadd(ScalarReg<B> d, ScalarReg<B> n, ScalarReg<B> m, ScalarReg<B> a) {
    fp_scalar_fused(Form::fmadd_s, 0x1F000000, B, d.index, n.index, m.index, a.index);
  }
  template <unsigned B> requires detail::kFpScalar<B>
  void fmsub(ScalarReg<B> d, ScalarReg<B> n, ScalarReg<B> m, ScalarReg<B> a) {
    fp_scalar_fused(Form::fmsub_s, 0x1F008000, B, d.index, n.index, m.index, a.index);
  }
  void fcvt(DReg d, SReg n);
  void fcvt(SReg d, DReg n);
  void fmov(SReg d, double value);  // the values fmov on vectors takes
  void fmov(DReg d, double value);

  // ---- unary emitter: lane tests and sums across lanes ------------------------------------------
  // cmtst: a lane is all ones where n & m has a bit set, else 0.
  template <Arr A> requires detail::kIntArr<A>
  void cmtst(Vec<A> d, Vec<A> n, Vec<A> m) { int_vector(Form::cmtst_16b, 0x0E208C00, A, d.index, n.index, m.index); }
  // addv: the sum of all lanes (modulo the lane size) into the scalar d.
  void addv(BReg d, V16B n);
  void addv(HReg d, V8H n);
  void addv(SReg d, V4S n);

  // ---- SVE: predicates and counts ---------------------------------------------------------------
  // Instructions of the Scalable Vector Extension (needs SVE, bf16 ones also BF16): the vector
  // length VL is the hardware's (128..2048 bits), loops count elements with whilelt and cnt*.
  // The governing predicate is p0..p7 unless a comment says p0..p15; destructive forms (d = d op m)
  // take d twice and throw if n differs.
  template <Lane L>
  void ptrue(PVec<L> d, Pattern pattern = Pattern::all) { sve_ptrue(L, d.index, pattern); }
  void pfalse(PVec<Lane::b> d);
  // Lane i is active while n + i < m (signed), counted per element of the predicate's size.
  template <Lane L>
  void whilelt(PVec<L> d, WOrZr n, WOrZr m) { sve_while(L, false, d.index, n.index, m.index); }
  template <Lane L>
  void whilelt(PVec<L> d, XOrZr n, XOrZr m) { sve_while(L, true, d.index, n.index, m.index); }
  void ptest(PReg g, PVec<Lane::b> n);  // sets the flags (Cond::first, none, last...); g is p0..p15
  // d = the number of bytes / halfwords / words / doublewords the pattern selects, times mul (1..16);
  // inc* adds it to d.
  void cntb(XOrZr d, Pattern pattern = Pattern::all, unsigned mul = 1);
  void cnth(XOrZr d, Pattern pattern = Pattern::all, unsigned mul = 1);
  void cntw(XOrZr d, Pattern pattern = Pattern::all, unsigned mul = 1);
  void cntd(XOrZr d, Pattern pattern = Pattern::all, unsigned mul = 1);
  void incb(XOrZr d, Pattern pattern = Pattern::all, unsigned mul = 1);
  void inch(XOrZr d, Pattern pattern = Pattern::all, unsigned mul = 1);
  void incw(XOrZr d, Pattern pattern = Pattern::all, unsigned mul = 1);
  void incd(XOrZr d, Pattern pattern = Pattern::all, unsigned mul = 1);
  // d = n + imm * VL bytes (addvl) or imm * VL / 8 (addpl), imm -32..31; rdvl: d = imm * VL bytes.
  void addvl(XOrSp d, XOrSp n, std::int64_t imm);
  void addpl(XOrSp d, XOrSp n, std::int64_t imm);
  void rdvl(XOrZr d, std::int64_t imm);

  // ---- SVE: loads and stores --------------------------------------------------------------------
  // Contiguous: ptr_vl(base, -8..7) or ptr(base, xm, lsl(log2 of the element bytes)); inactive
  // elements load as zero and are not stored (nor touched: no fault).
  void ld1h(ZH t, PZeroing g, MemVl mem);
  void ld1h(ZH t, PZeroing g, MemReg mem);
  void ld1w(ZS t, PZeroing g, MemVl mem);
  void ld1w(ZS t, PZeroing g, MemReg mem);
  void ld1d(ZD t, PZeroing g, MemVl mem);
  void ld1d(ZD t, PZeroing g, MemReg mem);
  void st1h(ZH t, PReg g, MemVl mem);
  void st1h(ZH t, PReg g, MemReg mem);
  void st1w(ZS t, PReg g, MemVl mem);
  void st1w(ZS t, PReg g, MemReg mem);
  void st1d(ZD t, PReg g, MemVl mem);
  void st1d(ZD t, PReg g, MemReg mem);
  // One element into every active lane: ptr(base, 0..63 times the element bytes).
  void ld1rh(ZH t, PZeroing g, MemImm mem);
  void ld1rw(ZS t, PZeroing g, MemImm mem);
  void ld1rd(ZD t, PZeroing g, MemImm mem);
  // 128 bits (4 words / 2 doublewords, the active ones of the predicate's first 128 bits; the others
  // zero and not read) into every 128-bit segment: ptr(base, -128..112, a multiple of 16).
  void ld1rqw(ZS t, PZeroing g, MemImm mem);
  void ld1rqd(ZD t, PZeroing g, MemImm mem);
  // The whole register (spills): ptr_vl(base, -256..255).
  void ldr(ZReg t, MemVl mem);
  void str(ZReg t, MemVl mem);

  // ---- SVE: floating point (h, s, d) ------------------------------------------------------------
#define WEFT_A64_SVE_FUSED(name, first, base)                                                                          \
  template <Lane L> requires detail::kSveFp<L>                                                                         \
  void name(ZVec<L> d, PMerging g, ZVec<L> n, ZVec<L> m) {                                                             \
    sve_dgnm(Form::first, base, L, d.index, g.index, n.index, m.index, false);                                         \
  }
  WEFT_A64_SVE_FUSED(fmla, sve_fmla_h, 0x65200000)  // d += n * m
  WEFT_A64_SVE_FUSED(fmls, sve_fmls_h, 0x65202000)  // d -= n * m
  WEFT_A64_SVE_FUSED(fmad, sve_fmad_h, 0x65208000)  // d = d * n + m
#undef WEFT_A64_SVE_FUSED
  // By element: m is z0..z7 (h: element 0..7, s: 0..3) or z0..z15 (d: element 0..1).
  template <Lane L> requires detail::kSveFp<L>
  void fmla(ZVec<L> d, ZVec<L> n, ZElem<L> m) { sve_fmla_indexed(L, d.index, n.index, m.index, m.element); }
#define WEFT_A64_SVE_FP3(name, first, base)                                                                            \
  template <Lane L> requires detail::kSveFp<L>                                                                         \
  void name(ZVec<L> d, ZVec<L> n, ZVec<L> m) { sve_three(Form::first, base, L, d.index, n.index, m.index); }
  WEFT_A64_SVE_FP3(fadd, sve_fadd_h, 0x65000000)
  WEFT_A64_SVE_FP3(fsub, sve_fsub_h, 0x65000400)
  WEFT_A64_SVE_FP3(fmul, sve_fmul_h, 0x65000800)
#undef WEFT_A64_SVE_FP3
  // Predicated, destructive: d = d op m in the active lanes (n must be d).
#define WEFT_A64_SVE_FP_PRED(name, first, opc)                                                                         \
  template <Lane L> requires detail::kSveFp<L>                                                                         \
  void name(ZVec<L> d, PMerging g, ZVec<L> n, ZVec<L> m) {                                                             \
    sve_destructive(Form::first, 0x65008000u | (opc) << 16, L, d.index, g.index, n.index, m.index);                    \
  }
  WEFT_A64_SVE_FP_PRED(fadd, sve_fadd_pred_h, 0x0u)
  WEFT_A64_SVE_FP_PRED(fsub, sve_fsub_pred_h, 0x1u)
  WEFT_A64_SVE_FP_PRED(fmul, sve_fmul_pred_h, 0x2u)
  WEFT_A64_SVE_FP_PRED(fmaxnm, sve_fmaxnm_pred_h, 0x4u)
  WEFT_A64_SVE_FP_PRED(fminnm, sve_fminnm_pred_h, 0x5u)
  WEFT_A64_SVE_FP_PRED(fmax, sve_fmax_pred_h, 0x6u)
  WEFT_A64_SVE_FP_PRED(fmin, sve_fmin_pred_h, 0x7u)
  WEFT_A64_SVE_FP_PRED(fdiv, sve_fdiv_pred_h, 0xDu)
#undef WEFT_A64_SVE_FP_PRED
#define WEFT_A64_SVE_FP_UNARY(name, first, base)                                                                       \
  template <Lane L> requires detail::kSveFp<L>                                                                         \
  void name(ZVec<L> d, PMerging g, ZVec<L> n) { sve_unary(Form::first, base, L, d.index, g.index, n.index); }
  WEFT_A64_SVE_FP_UNARY(fsqrt, sve_fsqrt_h, 0x650DA000)
  WEFT_A64_SVE_FP_UNARY(fneg, sve_fneg_h, 0x041DA000)
  WEFT_A64_SVE_FP_UNARY(fabs, sve_fabs_h, 0x041CA000)
  WEFT_A64_SVE_FP_UNARY(frintn, sve_frintn_h, 0x6500A000)
#undef WEFT_A64_SVE_FP_UNARY
  void fcvtzs(ZS d, PMerging g, ZS n);  // fp32 -> int32, toward zero
  void scvtf(ZS d, PMerging g, ZS n);   // int32 -> fp32
  // Compares into a predicate (inactive lanes false); fcmle/fcmlt of vectors are fcmge/fcmgt with
  // the sources swapped. With a double: it must be 0.0 (the #0.0 operand).
#define WEFT_A64_SVE_COMPARE(name, first, base, swap)                                                                  \
  template <Lane L> requires detail::kSveFp<L>                                                                         \
  void name(PVec<L> d, PZeroing g, ZVec<L> n, ZVec<L> m) {                                                             \
    sve_dgnm(Form::first, base, L, d.index, g.index, swap ? m.index : n.index, swap ? n.index : m.index, false);       \
  }
  WEFT_A64_SVE_COMPARE(fcmge, sve_fcmge_h, 0x65004000, false)
  WEFT_A64_SVE_COMPARE(fcmgt, sve_fcmgt_h, 0x65004010, false)
  WEFT_A64_SVE_COMPARE(fcmeq, sve_fcmeq_h, 0x65006000, false)
  WEFT_A64_SVE_COMPARE(fcmle, sve_fcmle_h, 0x65004000, true)
  WEFT_A64_SVE_COMPARE(fcmlt, sve_fcmlt_h, 0x65004010, true)
#undef WEFT_A64_SVE_COMPARE
#define WEFT_A64_SVE_COMPARE_ZERO(name, first, base)                                                                   \
  template <Lane L> requires detail::kSveFp<L>                                                                         \
  void name(PVec<L> d, PZeroing g, ZVec<L> n, double zero) {                                                           \
    sve_compare_zero(Form::first, base, L, d.index, g.index, n.index, zero);                                           \
  }
  WEFT_A64_SVE_COMPARE_ZERO(fcmge, sve_fcmge_zero_h, 0x65102000)
  WEFT_A64_SVE_COMPARE_ZERO(fcmgt, sve_fcmgt_zero_h, 0x65102010)
  WEFT_A64_SVE_COMPARE_ZERO(fcmeq, sve_fcmeq_zero_h, 0x65122000)
  WEFT_A64_SVE_COMPARE_ZERO(fcmle, sve_fcmle_zero_h, 0x65112010)
  WEFT_A64_SVE_COMPARE_ZERO(fcmlt, sve_fcmlt_zero_h, 0x65112000)
#undef WEFT_A64_SVE_COMPARE_ZERO
  // The sum (in an implementation-defined tree order) / the maximum of the active lanes into d.
  template <Lane L> requires detail::kSveFp<L>
  void faddv(ScalarReg<(1u << static_cast<unsigned>(L))> d, PReg g, ZVec<L> n) {
    sve_unary(Form::sve_faddv_h, 0x65002000, L, d.index, g.index, n.index);
  }
  template <Lane L> requires detail::kSveFp<L>
  void fmaxv(ScalarReg<(1u << static_cast<unsigned>(L))> d, PReg g, ZVec<L> n) {
    sve_unary(Form::sve_fmaxv_h, 0x65062000, L, d.index, g.index, n.index);
  }

  // ---- SVE: selects, moves, broadcasts, bitwise, shifts, integer, permutes ----------------------
  // d = g ? n : m per lane (g is p0..p15).
  template <Lane L>
  void sel(ZVec<L> d, PReg g, ZVec<L> n, ZVec<L> m) {
    sve_dgnm(Form::sve_sel_b, 0x0520C000, L, d.index, g.index, n.index, m.index, true);
  }
  void mov(ZD d, ZD n);  // the whole register
  // The active lanes of n into d, the others kept (sel d, g, n, d; g is p0..p15).
  template <Lane L>
  void mov(ZVec<L> d, PMerging g, ZVec<L> n) {
    sve_dgnm(Form::sve_mov_pred_b, 0x0520C000, L, d.index, g.index, n.index, d.index, true);
  }
  // Every lane = a general register (w for b, h, s; x for d; sp reads the stack pointer).
  template <Lane L> requires(L != Lane::d)
  void dup(ZVec<L> d, WOrSp n) { sve_dup_general(L, d.index, n.index); }
  void dup(ZD d, XOrSp n) { sve_dup_general(Lane::d, d.index, n.index); }
  // Every lane = imm (-128..127, or a multiple of 256 in -32768..32512 for h, s, d: lsl #8).
  template <Lane L>
  void dup(ZVec<L> d, std::int32_t imm) { sve_dup_immediate(L, d.index, imm); }
  // Every lane = value, which must be +-(16..31)/16 * 2^(-3..4) (as fmov).
  template <Lane L> requires detail::kSveFp<L>
  void fdup(ZVec<L> d, double value) { sve_fdup(L, d.index, value); }
  void and_(ZD d, ZD n, ZD m);
  void orr(ZD d, ZD n, ZD m);
  void eor(ZD d, ZD n, ZD m);
  void bic(ZD d, ZD n, ZD m);  // n & ~m
  // Shift by an immediate: lsl 0..esize-1, lsr/asr 1..esize.
  template <Lane L>
  void lsl(ZVec<L> d, ZVec<L> n, unsigned shift) { sve_shift(Form::sve_lsl_b, L, d.index, n.index, shift); }
  template <Lane L>
  void lsr(ZVec<L> d, ZVec<L> n, unsigned shift) { sve_shift(Form::sve_lsr_b, L, d.index, n.index, shift); }
  template <Lane L>
  void asr(ZVec<L> d, ZVec<L> n, unsigned shift) { sve_shift(Form::sve_asr_b, L, d.index, n.index, shift); }
#define WEFT_A64_SVE_INT3(name, first, base)                                                                           \
  template <Lane L>                                                                                                    \
  void name(ZVec<L> d, ZVec<L> n, ZVec<L> m) { sve_three(Form::first, base, L, d.index, n.index, m.index); }
  WEFT_A64_SVE_INT3(add, sve_add_b, 0x04200000)
  WEFT_A64_SVE_INT3(sub, sve_sub_b, 0x04200400)
  WEFT_A64_SVE_INT3(zip1, sve_zip1_b, 0x05206000)
  WEFT_A64_SVE_INT3(zip2, sve_zip2_b, 0x05206400)
  WEFT_A64_SVE_INT3(uzp1, sve_uzp1_b, 0x05206800)
  WEFT_A64_SVE_INT3(uzp2, sve_uzp2_b, 0x05206C00)
  WEFT_A64_SVE_INT3(trn1, sve_trn1_b, 0x05207000)
  WEFT_A64_SVE_INT3(trn2, sve_trn2_b, 0x05207400)
#undef WEFT_A64_SVE_INT3

  // ---- SVE: bf16 (needs BF16) -------------------------------------------------------------------
  // bfdot: each fp32 lane of d += the dot product of the pair of bf16 lanes of n and m (or of the
  // indexed pair 0..3 of m, z0..z7, in each 128-bit segment). bfmmla: d (2x2 fp32 per segment) +=
  // n (2x4 bf16) * m^T (4x2). bfcvt: fp32 -> bf16 (rounded by FPCR) into the even halves, the odd
  // halves zeroed; bfcvtnt into the odd halves, the even ones kept.
  void bfdot(ZS d, ZH n, ZH m);
  void bfdot(ZS d, ZH n, ZElem<Lane::h> m);
  void bfmmla(ZS d, ZH n, ZH m);
  void bfcvt(ZH d, PMerging g, ZS n);
  void bfcvtnt(ZH d, PMerging g, ZS n);
  // ---- FEAT_BF16 (Neon): bf16 products summed in fp32 (Armv8.6; the CPU must have HWCAP2_BF16) ----
  // bfdot: each fp32 lane of d += the dot product of the matching pair of bf16 lanes of n and m (or
  // the pair m.h2(i), the same for every lane).
  void bfdot(V2S d, V4H n, V4H m);
  void bfdot(V4S d, V8H n, V8H m);
  void bfdot(V2S d, V4H n, Elem2H m);
  void bfdot(V4S d, V8H n, Elem2H m);
  // bfmmla: d (2x2 fp32, row-major) += n (2x4 bf16, row-major) times m^T (m: 2x4 bf16, row-major).
  void bfmmla(V4S d, V8H n, V8H m);
  // bfmlalb / bfmlalt: d[i] += n[2i] * m[2i] (b, even lanes) or n[2i+1] * m[2i+1] (t, odd lanes),
  // widened to fp32; by element: times m.h(lane) for every i, m one of v0..v15.
  void bfmlalb(V4S d, V8H n, V8H m);
  void bfmlalt(V4S d, V8H n, V8H m);
  void bfmlalb(V4S d, V8H n, Elem<Lane::h> m);
  void bfmlalt(V4S d, V8H n, Elem<Lane::h> m);
  // fp32 -> bf16 narrowing: into the low half (the high half is zeroed), into the high half (the low
  // half is kept), or the scalar h (the rest of the register zeroed).
  void bfcvtn(V4H d, V4S n);
  void bfcvtn2(V8H d, V4S n);
  void bfcvt(HReg d, SReg n);

  // ---- SVE activation (issue 28, sve-activation) --------------------------------------------------
  // fscale: d = d * 2^m in the active lanes (m's lanes signed integers), rounded once (n must be d).
  template <Lane L> requires detail::kSveFp<L>
  void fscale(ZVec<L> d, PMerging g, ZVec<L> n, ZVec<L> m) {
    sve_destructive(Form::sve_fscale_pred_h, 0x65098000u, L, d.index, g.index, n.index, m.index);
  }

 private:
  void emit(Form form, std::uint32_t word);
  [[noreturn]] void fail(Form form, const std::string& what) const;
  void add_sub_immediate(Form form, std::uint32_t base, unsigned d, unsigned n, std::int64_t imm, Shift shift);
  void add_sub_shifted(Form form, std::uint32_t base, unsigned d, unsigned n, unsigned m, Shift shift);
  void add_sub_extended(Form form, std::uint32_t base, unsigned d, unsigned n, unsigned m, bool m_is_x, Extend extend);
  void logical_shifted(Form form, std::uint32_t base, unsigned d, unsigned n, unsigned m, Shift shift);
  void logical_immediate(Form form, std::uint32_t base, unsigned d, unsigned n, std::uint64_t imm);
  void move_wide(Form form, std::uint32_t base, unsigned d, std::uint32_t imm16, unsigned shift);
  void shift_by_immediate(Form form, bool x, unsigned kind, unsigned d, unsigned n, unsigned amount);
  void three_registers(Form form, std::uint32_t base, unsigned d, unsigned n, unsigned m);
  void conditional_select(Form form, std::uint32_t base, unsigned d, unsigned n, unsigned m, Cond cond);
  void branch_to(Form form, std::uint32_t word, Label& target);
  void test_bit_branch(Form form, std::uint32_t base, unsigned t, unsigned bit, Label& target);
  std::size_t label_id(Label& label);
  void load_store(Form first, std::uint32_t size_opc, unsigned bytes, unsigned t, const MemImm& mem);
  void load_store(Form first, std::uint32_t size_opc, unsigned bytes, unsigned t, const MemReg& mem);
  void load_store_unscaled(Form first, std::uint32_t size_opc, unsigned t, const MemImm& mem);
  void fp_load_store(bool load, unsigned bytes, unsigned t, const MemImm& mem);
  void fp_load_store(bool load, unsigned bytes, unsigned t, const MemReg& mem);
  void fp_load_store_unscaled(bool load, unsigned bytes, unsigned t, const MemImm& mem);
  void pair(Form first, std::uint32_t base, unsigned bytes, unsigned t1, unsigned t2, const MemImm& mem);
  void fp_pair(bool load, unsigned bytes, unsigned t1, unsigned t2, const MemImm& mem);
  void exclusive(Form form, std::uint32_t base, unsigned s, unsigned t, const MemImm& mem);
  template <Arr A>
  static std::vector<unsigned> indices(std::initializer_list<Vec<A>> list) {
    std::vector<unsigned> out;
    for (Vec<A> v : list) out.push_back(v.index);
    return out;
  }
  void vector_list(bool load, Arr arr, const std::vector<unsigned>& registers, const MemImm* imm,
                   const MemPostReg* reg);
  void vector_lane(bool load, unsigned t, unsigned lane, bool is_d, const MemImm& mem);
  void vector_lane(bool load, unsigned t, unsigned lane, bool is_d, const MemPostReg& mem);
  void load_replicate(bool is_d, unsigned t, const MemImm& mem);
  void load_replicate(bool is_d, unsigned t, const MemPostReg& mem);
  void fp_vector(Form first, std::uint32_t base, Arr arr, unsigned d, unsigned n, unsigned m);
  void fp_compare_zero(Form first, std::uint32_t base, Arr arr, unsigned d, unsigned n, double zero);
  void fp_by_element(Form first, std::uint32_t base, Arr arr, unsigned d, unsigned n, unsigned m, unsigned lane);
  void fp_vector_immediate(Arr arr, unsigned d, double value);
  void int_vector(Form first, std::uint32_t base, Arr arr, unsigned d, unsigned n, unsigned m);
  void shift_immediate(Form first, Arr arr, unsigned d, unsigned n, unsigned shift);
  void widen_narrow(Form first, Arr wide, unsigned d, unsigned n, unsigned shift);
  void byte_vector(Form first, std::uint32_t base, Arr arr, unsigned d, unsigned n, unsigned m);
  void extract(Arr arr, unsigned d, unsigned n, unsigned m, unsigned index);
  void modified_immediate(Form form, std::uint32_t base, unsigned d, std::uint32_t imm8, std::uint32_t cmode);
  void shifted_immediate(Form form, std::uint32_t base, bool halfword, unsigned d, std::uint32_t imm8, Shift shift);
  void duplicate(Arr arr, unsigned d, unsigned n, unsigned lane, bool from_element);
  void insert(Lane lane, unsigned d, unsigned d_lane, unsigned n, unsigned n_lane, bool from_element);
  void move_to_general(Lane lane, unsigned d, unsigned n, unsigned n_lane);
  void fp_scalar(Form first, std::uint32_t base, unsigned bytes, unsigned d, unsigned n, unsigned m);
  void fp_scalar_fused(Form first, std::uint32_t base, unsigned bytes, unsigned d, unsigned n, unsigned m, unsigned a);
  unsigned sve_low_predicate(Form form, unsigned p) const;
  void sve_ptrue(Lane lane, unsigned d, Pattern pattern);
  void sve_while(Lane lane, bool x, unsigned d, unsigned n, unsigned m);
  void sve_count(Form form, std::uint32_t base, unsigned d, Pattern pattern, unsigned mul);
  void sve_contiguous(Form form, std::uint32_t base, unsigned t, unsigned g, const MemVl& mem);
  void sve_contiguous(Form form, std::uint32_t base, unsigned shift, unsigned t, unsigned g, const MemReg& mem);
  void sve_replicate(Form form, std::uint32_t base, unsigned bytes, unsigned t, unsigned g, const MemImm& mem);
  void sve_replicate_quad(Form form, std::uint32_t base, unsigned t, unsigned g, const MemImm& mem);
  void sve_fill_spill(Form form, std::uint32_t base, unsigned t, const MemVl& mem);
  void sve_dgnm(Form first, std::uint32_t base, Lane lane, unsigned d, unsigned g, unsigned n, unsigned m,
                bool wide_predicate);
  void sve_destructive(Form first, std::uint32_t base, Lane lane, unsigned d, unsigned g, unsigned n, unsigned m);
  void sve_unary(Form first, std::uint32_t base, Lane lane, unsigned d, unsigned g, unsigned n);
  void sve_three(Form first, std::uint32_t base, Lane lane, unsigned d, unsigned n, unsigned m);
  void sve_compare_zero(Form first, std::uint32_t base, Lane lane, unsigned d, unsigned g, unsigned n, double zero);
  void sve_fmla_indexed(Lane lane, unsigned d, unsigned n, unsigned m, unsigned element);
  void sve_dup_general(Lane lane, unsigned d, unsigned n);
  void sve_dup_immediate(Lane lane, unsigned d, std::int32_t imm);
  void sve_fdup(Lane lane, unsigned d, double value);
  void sve_shift(Form first, Lane lane, unsigned d, unsigned n, unsigned shift);
  void bf16_by_element(Form form, std::uint32_t base, unsigned d, unsigned n, unsigned m, unsigned lane);

  struct Fixup {
    std::size_t word;   // index of the branch in words_
    std::size_t label;  // label id
    Form form;
  };

  std::vector<std::uint32_t> words_;
  std::bitset<kFormCount> forms_used_;
  std::vector<std::int64_t> label_words_;  // word index of each bound label, -1 while unbound
  std::vector<Fixup> fixups_;              // branches to labels not bound yet
};

}  // namespace weft::jit::a64
