// Wrong operands of the A64 assembler are compile errors: each concept below asks whether a call
// compiles, and the static_asserts pin down which calls do. (Operands that C++ cannot check, such
// as immediates and lanes given at run time, throw instead: assembler_errors_test.cpp.)
#include <gtest/gtest.h>

#include "weft/jit/aarch64/assembler.hpp"

namespace {

using namespace weft::jit::a64;

template <class... Args>
concept CanAdd = requires(Assembler& a, Args... args) { a.add(args...); };
template <class... Args>
concept CanMov = requires(Assembler& a, Args... args) { a.mov(args...); };
template <class... Args>
concept CanLdr = requires(Assembler& a, Args... args) { a.ldr(args...); };
template <class... Args>
concept CanFadd = requires(Assembler& a, Args... args) { a.fadd(args...); };
template <class... Args>
concept CanFmla = requires(Assembler& a, Args... args) { a.fmla(args...); };
template <class... Args>
concept CanDup = requires(Assembler& a, Args... args) { a.dup(args...); };
template <class... Args>
concept CanSshll = requires(Assembler& a, Args... args) { a.sshll(args...); };
template <class... Args>
concept CanUmov = requires(Assembler& a, Args... args) { a.umov(args...); };
template <class... Args>
concept CanTbz = requires(Assembler& a, Label& l, Args... args) { a.tbz(args..., l); };
template <class... Args>
concept CanBfdot = requires(Assembler& a, Args... args) { a.bfdot(args...); };
template <class... Args>
concept CanBfmlalb = requires(Assembler& a, Args... args) { a.bfmlalb(args...); };
template <class... Args>
concept CanBfcvtn = requires(Assembler& a, Args... args) { a.bfcvtn(args...); };
template <class... Args>
concept CanBfcvt = requires(Assembler& a, Args... args) { a.bfcvt(args...); };
template <class A, class B>
concept CanLd1Pair = requires(Assembler& a, A first, B second, MemImm mem) { a.ld1({first, second}, mem); };

using Es = Elem<Lane::s>;
using Ed = Elem<Lane::d>;

// sp and xzr: each slot takes the one its encoding means by register 31.
static_assert(CanAdd<XSp, XSp, int>);               // add sp, sp, #16
static_assert(!CanAdd<XZr, XReg, int>);             // no add xzr, x1, #imm
static_assert(CanAdd<XReg, XReg, XZr>);             // add x0, x1, xzr
static_assert(!CanAdd<XSp, XReg, XReg>);            // the shifted-register add has no sp
static_assert(CanAdd<XSp, XSp, WReg, Extend>);      // add sp, sp, w1, sxtw
static_assert(!CanAdd<XReg, WReg, WReg>);           // no mixing of x and w
static_assert(CanMov<XReg, XSp>);
static_assert(CanMov<XSp, XReg>);
static_assert(!CanMov<XZr, XSp>);
static_assert(CanMov<XReg, XZr>);
static_assert(!CanTbz<XSp, unsigned>);
static_assert(CanTbz<WReg, unsigned>);

// Loads: scalar views for SIMD&FP registers, not arrangements.
static_assert(CanLdr<XReg, MemImm>);
static_assert(CanLdr<QReg, MemImm>);
static_assert(CanLdr<HReg, MemReg>);
static_assert(!CanLdr<V4S, MemImm>);
static_assert(!CanLdr<BReg, MemImm>);
static_assert(!CanLdr<QReg, MemPostReg>);  // post-increment by a register is for ld1/st1 only

// Arrangements must agree, and fit the operation.
static_assert(CanFadd<V4S, V4S, V4S>);
static_assert(CanFadd<V2D, V2D, V2D>);
static_assert(!CanFadd<V4S, V4S, V2D>);
static_assert(!CanFadd<V16B, V16B, V16B>);
static_assert(CanFadd<SReg, SReg, SReg>);
static_assert(!CanFadd<SReg, SReg, DReg>);
static_assert(CanFmla<V4S, V4S, Es>);
static_assert(CanFmla<V2D, V2D, Ed>);
static_assert(!CanFmla<V4S, V4S, Ed>);
static_assert(CanLd1Pair<V4S, V4S>);
static_assert(!CanLd1Pair<V4S, V2D>);
static_assert(!CanLd1Pair<V2S, V2S>);  // ld1/st1 take 128-bit arrangements
static_assert(CanDup<V4S, Es>);
static_assert(!CanDup<V4S, Ed>);
static_assert(CanDup<V2D, XReg>);
static_assert(!CanDup<V2D, WReg>);
static_assert(!CanDup<V4S, XReg>);
static_assert(CanSshll<V4S, V4H, unsigned>);
static_assert(!CanSshll<V4S, V8H, unsigned>);  // the high half is sshll2
static_assert(CanUmov<WReg, Es>);
static_assert(!CanUmov<WReg, Ed>);
static_assert(CanUmov<XReg, Ed>);

// SVE: element sizes agree, predicates carry their qualifier, indexed elements their size.
template <class... Args>
concept CanLd1w = requires(Assembler& a, Args... args) { a.ld1w(args...); };
template <class... Args>
concept CanSt1w = requires(Assembler& a, Args... args) { a.st1w(args...); };
template <class... Args>
concept CanFcmge = requires(Assembler& a, Args... args) { a.fcmge(args...); };
template <class... Args>
concept CanWhilelt = requires(Assembler& a, Args... args) { a.whilelt(args...); };
template <class... Args>
concept CanFaddv = requires(Assembler& a, Args... args) { a.faddv(args...); };
template <class... Args>
concept CanDupZ = requires(Assembler& a, Args... args) { a.dup(args...); };
static_assert(CanFadd<ZS, ZS, ZS>);
static_assert(!CanFadd<ZS, ZS, ZD>);
static_assert(!CanFadd<ZB, ZB, ZB>);            // no byte floating point
static_assert(CanFadd<ZD, PMerging, ZD, ZD>);
static_assert(!CanFadd<ZD, PZeroing, ZD, ZD>);  // predicated fadd merges
static_assert(!CanFadd<ZD, PReg, ZD, ZD>);
static_assert(CanFmla<ZS, ZS, Elem<Lane::s>> == false);  // a Neon lane is not a Z element
static_assert(CanFmla<ZS, ZS, ZElem<Lane::s>>);
static_assert(!CanFmla<ZS, ZS, ZElem<Lane::d>>);
static_assert(CanLd1w<ZS, PZeroing, MemVl>);
static_assert(CanLd1w<ZS, PZeroing, MemReg>);
static_assert(!CanLd1w<ZS, PMerging, MemVl>);  // loads zero the inactive lanes
static_assert(!CanLd1w<ZD, PZeroing, MemVl>);  // ld1w loads words
static_assert(!CanLd1w<ZS, PZeroing, MemImm>);  // the offset counts vectors: ptr_vl
static_assert(CanSt1w<ZS, PReg, MemVl>);
static_assert(!CanSt1w<ZS, PZeroing, MemVl>);
static_assert(CanFcmge<PVec<Lane::s>, PZeroing, ZS, ZS>);
static_assert(!CanFcmge<PVec<Lane::d>, PZeroing, ZS, ZS>);
static_assert(CanWhilelt<PVec<Lane::b>, XReg, XReg>);
static_assert(!CanWhilelt<PVec<Lane::b>, XReg, WReg>);
static_assert(!CanWhilelt<PReg, XReg, XReg>);  // the predicate needs its element size
static_assert(CanBfdot<ZS, ZH, ZH>);
static_assert(!CanBfdot<ZH, ZH, ZH>);
static_assert(CanFaddv<SReg, PReg, ZS>);
static_assert(!CanFaddv<DReg, PReg, ZS>);
static_assert(CanDupZ<ZD, XReg>);
static_assert(!CanDupZ<ZD, WReg>);
static_assert(CanDupZ<ZS, WReg>);
// FEAT_BF16: fp32 accumulators, bf16 (h) sources of the same register width; bfdot's index is a pair.
static_assert(CanBfdot<V2S, V4H, V4H>);
static_assert(CanBfdot<V4S, V8H, V8H>);
static_assert(!CanBfdot<V4S, V4H, V4H>);
static_assert(!CanBfdot<V4S, V8H, V4H>);
static_assert(CanBfdot<V4S, V8H, Elem2H>);
static_assert(!CanBfdot<V4S, V8H, Elem<Lane::h>>);  // v2.2h[i], not v2.h[i]
static_assert(!CanBfdot<V4S, V8H, Es>);
static_assert(CanBfmlalb<V4S, V8H, Elem<Lane::h>>);
static_assert(!CanBfmlalb<V4S, V8H, Elem2H>);
static_assert(!CanBfmlalb<V2S, V4H, V4H>);
static_assert(CanBfcvtn<V4H, V4S>);
static_assert(!CanBfcvtn<V8H, V4S>);  // the high half is bfcvtn2
static_assert(CanBfcvt<HReg, SReg>);
static_assert(!CanBfcvt<SReg, HReg>);

TEST(A64AssemblerTypes, WrongOperandsAreCompileErrors) { SUCCEED() << "checked by the static_asserts above"; }

}  // namespace
