// Every range check of the A64 assembler throws weft::Error naming the form and the bad operand,
// and emits nothing: an operand out of range never becomes another instruction.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "weft/jit/aarch64/assembler.hpp"
#include "weft/jit/error.hpp"

namespace {

using namespace weft::jit::a64;

struct ErrorCase {
  std::function<void(Assembler&)> emit;
  std::vector<std::string> message_parts;  // each must appear in what()
};

const std::vector<ErrorCase>& error_cases() {
  static const std::vector<ErrorCase> cases = {
      // add/sub immediate, shifted and extended register
      {[](Assembler& a) { a.add(x0, x1, 4096); }, {"a64 add.x.imm", "immediate 4096", "0..4095"}},
      {[](Assembler& a) { a.sub(w0, w1, -1); }, {"a64 sub.w.imm", "immediate -1"}},
      {[](Assembler& a) { a.adds(x0, sp, 1, lsl(1)); }, {"a64 adds.x.imm", "lsl(12)"}},
      {[](Assembler& a) { a.cmp(x0, 5000); }, {"a64 cmp.x.imm", "immediate 5000"}},
      {[](Assembler& a) { a.cmn(w3, 1, lsr(12)); }, {"a64 cmn.w.imm", "lsl(12)"}},
      {[](Assembler& a) { a.add(x0, x1, x2, ror(3)); }, {"a64 add.x.shift", "ror"}},
      {[](Assembler& a) { a.sub(x0, x1, x2, lsl(64)); }, {"a64 sub.x.shift", "shift 64", "0..63"}},
      {[](Assembler& a) { a.subs(w0, w1, w2, asr(32)); }, {"a64 subs.w.shift", "shift 32", "0..31"}},
      {[](Assembler& a) { a.cmp(w0, w1, lsl(32)); }, {"a64 cmp.w.shift", "shift 32"}},
      {[](Assembler& a) { a.add(sp, sp, x1, uxtw()); }, {"a64 add.x.ext", "uxtx or sxtx"}},
      {[](Assembler& a) { a.add(sp, sp, w1, sxtx()); }, {"a64 add.x.ext", "w register"}},
      {[](Assembler& a) { a.sub(wsp, wsp, w1, uxtx(2)); }, {"a64 sub.w.ext", "w register"}},
      {[](Assembler& a) { a.adds(x0, sp, w1, sxtw(5)); }, {"a64 adds.x.ext", "amount 5", "0..4"}},
      // logical
      {[](Assembler& a) { a.orr(x0, x1, x2, lsl(64)); }, {"a64 orr.x.shift", "shift 64"}},
      {[](Assembler& a) { a.tst(w0, w1, ror(32)); }, {"a64 tst.w.shift", "shift 32"}},
      {[](Assembler& a) { a.and_(x0, x1, std::uint64_t{0}); }, {"a64 and.x.imm", "immediate 0", "not a bitmask"}},
      {[](Assembler& a) { a.orr(x0, x1, ~std::uint64_t{0}); }, {"a64 orr.x.imm", "0xffffffffffffffff", "bitmask"}},
      {[](Assembler& a) { a.eor(w0, w1, 0x1234); }, {"a64 eor.w.imm", "0x1234", "bitmask"}},
      {[](Assembler& a) { a.ands(w0, w1, 0x100000000); }, {"a64 ands.w.imm", "0x100000000", "32 bits"}},
      {[](Assembler& a) { a.tst(x0, 0x5); }, {"a64 tst.x.imm", "0x5"}},
      // moves
      {[](Assembler& a) { a.movz(x0, 0x10000); }, {"a64 movz.x", "0x10000", "16 bits"}},
      {[](Assembler& a) { a.movk(x0, 1, 8); }, {"a64 movk.x", "shift 8"}},
      {[](Assembler& a) { a.movn(w0, 1, 32); }, {"a64 movn.w", "shift 32"}},
      {[](Assembler& a) { a.movz(x0, 1, 64); }, {"a64 movz.x", "shift 64"}},
      {[](Assembler& a) { a.mov_imm(w0, 0x100000000); }, {"a64 mov_imm w", "4294967296"}},
      {[](Assembler& a) { a.mov_imm(w0, -2147483649); }, {"a64 mov_imm w", "-2147483649"}},
      // shifts, select
      {[](Assembler& a) { a.lsl(x0, x1, 64u); }, {"a64 lsl.x.imm", "shift 64"}},
      {[](Assembler& a) { a.asr(w0, w1, 32u); }, {"a64 asr.w.imm", "shift 32"}},
      {[](Assembler& a) { a.cset(x0, Cond::al); }, {"a64 cset.x", "al or nv"}},
      {[](Assembler& a) { a.cset(w0, Cond::nv); }, {"a64 cset.w", "al or nv"}},
      // system
      {[](Assembler& a) { a.udf(0x10000); }, {"a64 udf", "0x10000"}},
      {[](Assembler& a) { a.align(3); }, {"a64 align", "3", "power of two"}},
      {[](Assembler& a) { a.align(2); }, {"a64 align", "2"}},
      // loads and stores
      {[](Assembler& a) { a.ldr(q0, ptr(x1, 40)); }, {"a64 ldr.q.uimm", "offset 40 is not a multiple of 16"}},
      {[](Assembler& a) { a.ldr(x0, ptr(x1, -8)); }, {"a64 ldr.x.uimm", "offset -8", "0..32760", "ldur"}},
      {[](Assembler& a) { a.str(x0, ptr(x1, 32768)); }, {"a64 str.x.uimm", "offset 32768", "0..32760"}},
      {[](Assembler& a) { a.ldrh(w0, ptr(x1, 3)); }, {"a64 ldrh.uimm", "offset 3", "multiple of 2"}},
      {[](Assembler& a) { a.ldrb(w0, ptr(x1, 4096)); }, {"a64 ldrb.uimm", "offset 4096", "0..4095"}},
      {[](Assembler& a) { a.str(s0, ptr(x1, 16384)); }, {"a64 str.s.uimm", "offset 16384", "0..16380"}},
      {[](Assembler& a) { a.ldr(x0, pre_ptr(x1, 256)); }, {"a64 ldr.x.pre", "offset 256", "-256..255"}},
      {[](Assembler& a) { a.str(d0, post_ptr(sp, -257)); }, {"a64 str.d.post", "offset -257", "-256..255"}},
      {[](Assembler& a) { a.ldr(x1, post_ptr(x1, 8)); }, {"a64 ldr.x.post", "base register"}},
      {[](Assembler& a) { a.ldur(x0, ptr(x1, 256)); }, {"a64 ldur.x", "offset 256", "-256..255"}},
      {[](Assembler& a) { a.stur(q0, ptr(x1, -257)); }, {"a64 stur.q", "offset -257"}},
      {[](Assembler& a) { a.ldur(w0, post_ptr(x1, 4)); }, {"a64 ldur.w", "post_ptr"}},
      {[](Assembler& a) { a.ldr(x0, ptr(x1, x2, lsl(2))); }, {"a64 ldr.x.reg", "index shift 2", "0 or 3"}},
      {[](Assembler& a) { a.ldr(q0, ptr(x1, w2, sxtw(3))); }, {"a64 ldr.q.reg", "index shift 3", "0 or 4"}},
      {[](Assembler& a) { a.ldrb(w0, ptr(x1, x2, lsl(1))); }, {"a64 ldrb.reg", "index shift 1 is not 0"}},
      {[](Assembler& a) { a.ldp(x0, x1, ptr(x2, 512)); }, {"a64 ldp.x.off", "offset 512", "-512..504"}},
      {[](Assembler& a) { a.stp(w0, w1, pre_ptr(sp, -260)); }, {"a64 stp.w.pre", "offset -260", "-256..252"}},
      {[](Assembler& a) { a.stp(q0, q1, post_ptr(sp, 8)); }, {"a64 stp.q.post", "offset 8", "multiple of 16"}},
      {[](Assembler& a) { a.ldp(d0, d1, ptr(x0, 1024)); }, {"a64 ldp.d.off", "offset 1024", "-512..504"}},
      {[](Assembler& a) { a.ldp(x0, x0, ptr(x2)); }, {"a64 ldp.x.off", "same register twice"}},
      {[](Assembler& a) { a.ldp(s3, s3, ptr(x2)); }, {"a64 ldp.s.off", "same register twice"}},
      {[](Assembler& a) { a.stp(x2, x3, pre_ptr(x2, 16)); }, {"a64 stp.x.pre", "base register"}},
      // atomics and exclusives
      {[](Assembler& a) { a.ldar(x0, ptr(x1, 8)); }, {"a64 ldar.x", "without offset"}},
      {[](Assembler& a) { a.stlr(w0, post_ptr(x1, 0)); }, {"a64 stlr.w", "without offset"}},
      {[](Assembler& a) { a.stxr(w0, x0, ptr(x1)); }, {"a64 stxr.x", "status register"}},
      {[](Assembler& a) { a.stlxr(w1, w2, ptr(x1)); }, {"a64 stlxr.w", "status register"}},
      {[](Assembler& a) { a.ldaddal(x0, x1, ptr(x2, 16)); }, {"a64 ldaddal.x", "without offset"}},
      // vector structures
      {[](Assembler& a) {
         a.ld1({v0.s4(), v2.s4()}, ptr(x1));
       },
       {"a64 ld1.4s.x2.off", "v2 does not follow v0"}},
      {[](Assembler& a) { a.st1({v0.b16()}, ptr(x1, 16)); }, {"a64 st1.16b.x1.off", "no offset"}},
      {[](Assembler& a) {
         a.st1({v0.s4(), v1.s4(), v2.s4(), v3.s4(), v4.s4()}, ptr(x1));
       },
       {"a64 st1", "5 registers"}},
      {[](Assembler& a) {
         a.ld1({v0.d2(), v1.d2()}, post_ptr(x1, 16));
       },
       {"a64 ld1.2d.x2.post_imm", "post-index 16", "32"}},
      {[](Assembler& a) { a.ld1({v0.h8()}, pre_ptr(x1, 16)); }, {"a64 ld1.8h.x1.off", "pre-index"}},
      {[](Assembler& a) { a.ld1(v0.s(1), post_ptr(x1, 8)); }, {"a64 ld1.s.lane.post_imm", "post-index 8", "4"}},
      {[](Assembler& a) { a.st1(v0.d(1), ptr(x1, 8)); }, {"a64 st1.d.lane.off", "no offset"}},
      {[](Assembler& a) { a.ld1r(v0.s4(), post_ptr(x1, 8)); }, {"a64 ld1r.4s.post_imm", "post-index 8", "4"}},
      {[](Assembler& a) { a.ld1r(v0.d2(), ptr(x1, 8)); }, {"a64 ld1r.2d.off", "no offset"}},
      // vector arithmetic and immediates
      {[](Assembler& a) { a.fcmeq(v0.s4(), v1.s4(), 1.0); }, {"a64 fcmeq.4s.zero", "0.0 only, not 1"}},
      {[](Assembler& a) { a.fmov(v0.s4(), 0.0); }, {"a64 fmov.4s.imm", "value 0 is not"}},
      {[](Assembler& a) { a.fmov(v0.d2(), 32.0); }, {"a64 fmov.2d.imm", "value 32 is not"}},
      {[](Assembler& a) { a.fmov(s0, 0.1); }, {"a64 fmov.s.imm", "value 0.1 is not"}},
      {[](Assembler& a) { a.fmov(d0, 0.0625); }, {"a64 fmov.d.imm", "value 0.0625 is not"}},
      {[](Assembler& a) { a.shl(v0.b16(), v1.b16(), 8); }, {"a64 shl.16b", "shift 8", "0..7"}},
      {[](Assembler& a) { a.sshr(v0.s4(), v1.s4(), 0); }, {"a64 sshr.4s", "shift 0", "1..32"}},
      {[](Assembler& a) { a.ushr(v0.d2(), v1.d2(), 65); }, {"a64 ushr.2d", "shift 65", "1..64"}},
      {[](Assembler& a) { a.sshll(v0.h8(), v1.b8(), 8); }, {"a64 sshll.8h", "shift 8", "0..7"}},
      {[](Assembler& a) { a.ushll2(v0.d2(), v1.s4(), 32); }, {"a64 ushll2.2d", "shift 32", "0..31"}},
      {[](Assembler& a) { a.shrn(v0.h4(), v1.s4(), 17); }, {"a64 shrn.4s", "shift 17", "1..16"}},
      {[](Assembler& a) { a.shrn2(v0.b16(), v1.h8(), 0); }, {"a64 shrn2.8h", "shift 0", "1..8"}},
      {[](Assembler& a) { a.ext(v0.b8(), v1.b8(), v2.b8(), 8); }, {"a64 ext.8b", "index 8", "0..7"}},
      {[](Assembler& a) { a.ext(v0.b16(), v1.b16(), v2.b16(), 16); }, {"a64 ext.16b", "index 16", "0..15"}},
      {[](Assembler& a) { a.movi(v0.b16(), 256); }, {"a64 movi.16b", "0x100", "8 bits"}},
      {[](Assembler& a) { a.movi(v0.h8(), 1, lsl(16)); }, {"a64 movi.8h", "lsl(8)"}},
      {[](Assembler& a) { a.movi(v0.s4(), 1, lsl(4)); }, {"a64 movi.4s", "lsl(24)"}},
      {[](Assembler& a) { a.mvni(v0.s4(), 1, lsr(8)); }, {"a64 mvni.4s", "lsl"}},
      {[](Assembler& a) { a.movi(v0.d2(), 0x1234); }, {"a64 movi.2d", "0x1234", "0x00 and 0xff"}},
      {[](Assembler& a) { a.movi(d0, 0xff00ff00ff00ff01); }, {"a64 movi.d", "0xff00ff00ff00ff01"}},
      // FEAT_BF16: the by-element bfmlal's register field has four bits
      {[](Assembler& a) { a.bfmlalb(v0.s4(), v1.h8(), v16.h(0)); }, {"a64 bfmlalb.4s.elem", "v16", "v0..v15"}},
      {[](Assembler& a) { a.bfmlalt(v0.s4(), v1.h8(), v31.h(7)); }, {"a64 bfmlalt.4s.elem", "v31", "v0..v15"}},
  };
  return cases;
}

TEST(A64AssemblerErrors, EveryRangeCheckThrowsNamingFormAndOperandAndEmitsNothing) {
  int index = 0;
  for (const ErrorCase& c : error_cases()) {
    SCOPED_TRACE("error case " + std::to_string(index++) + " expecting \"" + c.message_parts.front() + "\"");
    Assembler a;
    try {
      c.emit(a);
      ADD_FAILURE() << "no weft::Error; emitted " << a.size_bytes() << " bytes";
    } catch (const weft::Error& e) {
      const std::string what = e.what();
      for (const std::string& part : c.message_parts) {
        EXPECT_NE(what.find(part), std::string::npos) << "\"" << what << "\" does not say \"" << part << "\"";
      }
    }
    EXPECT_EQ(a.size_bytes(), 0u);
    EXPECT_TRUE(a.forms_used().none());
  }
}

TEST(A64AssemblerErrors, RegistersAndLanesOutOfRangeThrow) {
  EXPECT_THROW(XReg(31), weft::Error);  // x31 is sp or xzr: use those
  EXPECT_THROW(WReg(31), weft::Error);
  EXPECT_THROW(VReg(32), weft::Error);
  EXPECT_THROW(QReg(32), weft::Error);
  EXPECT_THROW(v0.s(4), weft::Error);
  EXPECT_THROW(v31.d(2), weft::Error);
  EXPECT_THROW(v1.b(16), weft::Error);
  EXPECT_THROW(v1.h(8), weft::Error);
  EXPECT_THROW(v1.h2(4), weft::Error);  // bfdot's pair index: 0..3
  try {
    (void)v7.s(4);
    FAIL();
  } catch (const weft::Error& e) {
    EXPECT_STREQ(e.what(), "a64: lane 4 of v7 is out of range 0..3");
  }
  try {
    (void)XReg(40);
    FAIL();
  } catch (const weft::Error& e) {
    EXPECT_STREQ(e.what(), "a64: register x40 does not exist (x0..x30)");
  }
  EXPECT_NO_THROW(XReg(30));
  EXPECT_NO_THROW(v31.s(3));
  EXPECT_NO_THROW(v31.h2(3));
  try {
    (void)v5.h2(4);
    FAIL();
  } catch (const weft::Error& e) {
    EXPECT_STREQ(e.what(), "a64: pair 4 (.2h) of v5 is out of range 0..3");
  }
}

TEST(A64AssemblerErrors, RegisterOffsetsTakeOnlyTheirExtends) {
  EXPECT_THROW(ptr(x1, x2, lsr(3)), weft::Error);
  EXPECT_THROW(ptr(x1, x2, uxtw()), weft::Error);
  EXPECT_THROW(ptr(x1, w2, sxtx()), weft::Error);
  EXPECT_THROW(ptr(x1, w2, uxtb()), weft::Error);
  EXPECT_NO_THROW(ptr(sp, w2, sxtw(3)));
}

// The message of a range check for the example in the header.
TEST(A64AssemblerErrors, MessageOfAMisalignedOffset) {
  Assembler a;
  try {
    a.ldr(q0, ptr(x1, 40));
    FAIL();
  } catch (const weft::Error& e) {
    EXPECT_STREQ(e.what(), "a64 ldr.q.uimm: offset 40 is not a multiple of 16");
  }
}

}  // namespace

namespace {

using namespace weft::jit::a64;

// The prefetch hints (brgemm emitter): offsets out of range or misaligned, writeback modes, index
// shifts other than 0 or 3 are errors, and emit nothing.
TEST(A64AssemblerErrors, PrefetchOperands) {
  const std::vector<ErrorCase> cases = {
      {[](Assembler& a) { a.prfm(Prefetch::pldl1keep, ptr(x1, 32768)); }, {"a64 prfm.uimm", "offset 32768"}},
      {[](Assembler& a) { a.prfm(Prefetch::pldl1keep, ptr(x1, 12)); }, {"a64 prfm.uimm", "multiple of 8"}},
      {[](Assembler& a) { a.prfm(Prefetch::pldl1keep, ptr(x1, -8)); }, {"a64 prfm.uimm", "offset -8"}},
      {[](Assembler& a) { a.prfm(Prefetch::pldl1keep, post_ptr(x1, 8)); }, {"a64 prfm.uimm", "pre_ptr"}},
      {[](Assembler& a) { a.prfm(Prefetch::pldl1keep, ptr(x1, x2, lsl(2))); }, {"a64 prfm.reg", "shift 2"}},
      {[](Assembler& a) { a.prfum(Prefetch::pldl1keep, ptr(x1, 256)); }, {"a64 prfum", "offset 256"}},
      {[](Assembler& a) { a.prfum(Prefetch::pldl1keep, pre_ptr(x1, 8)); }, {"a64 prfum", "pre_ptr"}},
  };
  for (const ErrorCase& c : cases) {
    Assembler a;
    try {
      c.emit(a);
      ADD_FAILURE() << "no error for " << c.message_parts[0];
    } catch (const weft::Error& e) {
      for (const std::string& part : c.message_parts) {
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
      }
    }
    EXPECT_EQ(a.size_bytes(), 0u);
  }
}

}  // namespace

namespace {

using namespace weft::jit::a64;

// SVE: a governing predicate beyond p7 where the encoding has 3 bits, destructive forms whose
// first source is not the destination, indexed registers and indexes out of range, immediates and
// offsets out of range: each throws naming the form, and emits nothing.
TEST(A64AssemblerErrors, SveOperands) {
  const std::vector<ErrorCase> cases = {
      {[](Assembler& a) { a.ld1w(z0.s(), p8.z(), ptr_vl(x0)); }, {"a64 sve.ld1w.imm", "p8", "p0..p7"}},
      {[](Assembler& a) { a.st1d(z0.d(), p15, ptr(x0, x1, lsl(3))); }, {"a64 sve.st1d.reg", "p15", "p0..p7"}},
      {[](Assembler& a) { a.fmla(z0.s(), p8.m(), z1.s(), z2.s()); }, {"a64 sve.fmla.s", "p8"}},
      {[](Assembler& a) { a.fcmge(p0.s(), p9.z(), z1.s(), 0.0); }, {"a64 sve.fcmge.zero.s", "p9"}},
      {[](Assembler& a) { a.faddv(s0, p8, z1.s()); }, {"a64 sve.faddv.s", "p8"}},
      {[](Assembler& a) { a.bfcvt(z0.h(), p8.m(), z1.s()); }, {"a64 sve.bfcvt", "p8"}},
      {[](Assembler& a) { a.fadd(z0.d(), p0.m(), z1.d(), z2.d()); }, {"a64 sve.fadd.pred.d", "z1", "z0"}},
      {[](Assembler& a) { a.fdiv(z3.h(), p1.m(), z4.h(), z3.h()); }, {"a64 sve.fdiv.pred.h", "z4", "destination z3"}},
      {[](Assembler& a) { a.fmla(z0.s(), z1.s(), z8.s(0)); }, {"a64 sve.fmla.elem.s", "z8", "z0..z7"}},
      {[](Assembler& a) { a.fmla(z0.s(), z1.s(), z7.s(4)); }, {"a64 sve.fmla.elem.s", "index 4", "0..3"}},
      {[](Assembler& a) { a.fmla(z0.d(), z1.d(), z16.d(0)); }, {"a64 sve.fmla.elem.d", "z16", "z0..z15"}},
      {[](Assembler& a) { a.fmla(z0.d(), z1.d(), z15.d(2)); }, {"a64 sve.fmla.elem.d", "index 2", "0..1"}},
      {[](Assembler& a) { a.fmla(z0.h(), z1.h(), z7.h(8)); }, {"a64 sve.fmla.elem.h", "index 8", "0..7"}},
      {[](Assembler& a) { a.bfdot(z0.s(), z1.h(), z8.h(0)); }, {"a64 sve.bfdot.elem", "z8", "z0..z7"}},
      {[](Assembler& a) { a.bfdot(z0.s(), z1.h(), z2.h(4)); }, {"a64 sve.bfdot.elem", "index 4", "0..3"}},
      {[](Assembler& a) { a.ld1w(z0.s(), p0.z(), ptr_vl(x0, 8)); }, {"a64 sve.ld1w.imm", "offset 8", "-8..7"}},
      {[](Assembler& a) { a.st1h(z0.h(), p0, ptr_vl(x0, -9)); }, {"a64 sve.st1h.imm", "offset -9", "-8..7"}},
      {[](Assembler& a) { a.ld1d(z0.d(), p0.z(), ptr(x0, x1, lsl(2))); }, {"a64 sve.ld1d.reg", "shift 2", "lsl(3)"}},
      {[](Assembler& a) { a.ld1w(z0.s(), p0.z(), ptr(x0, x1)); }, {"a64 sve.ld1w.reg", "none", "lsl(2)"}},
      {[](Assembler& a) { a.ld1h(z0.h(), p0.z(), ptr(x0, w1, sxtw(1))); }, {"a64 sve.ld1h.reg", "x register"}},
      {[](Assembler& a) { a.ld1rw(z0.s(), p0.z(), ptr(x0, 256)); }, {"a64 sve.ld1rw", "offset 256", "0..252"}},
      {[](Assembler& a) { a.ld1rd(z0.d(), p0.z(), ptr(x0, 4)); }, {"a64 sve.ld1rd", "offset 4", "multiple of 8"}},
      {[](Assembler& a) { a.ld1rh(z0.h(), p0.z(), post_ptr(x0, 2)); }, {"a64 sve.ld1rh", "post-index"}},
      {[](Assembler& a) { a.ldr(z0, ptr_vl(x0, 256)); }, {"a64 sve.ldr.z", "offset 256", "-256..255"}},
      {[](Assembler& a) { a.str(z0, ptr_vl(sp, -257)); }, {"a64 sve.str.z", "offset -257"}},
      {[](Assembler& a) { a.cntw(x0, Pattern::all, 0); }, {"a64 sve.cntw", "multiplier 0", "1..16"}},
      {[](Assembler& a) { a.incd(x0, Pattern::vl4, 17); }, {"a64 sve.incd", "multiplier 17"}},
      {[](Assembler& a) { a.addvl(sp, sp, 32); }, {"a64 sve.addvl", "32", "-32..31"}},
      {[](Assembler& a) { a.addpl(x0, x1, -33); }, {"a64 sve.addpl", "-33"}},
      {[](Assembler& a) { a.rdvl(x0, 40); }, {"a64 sve.rdvl", "40"}},
      {[](Assembler& a) { a.dup(z0.b(), 128); }, {"a64 sve.dup.imm.b", "immediate 128", "-128..127"}},
      {[](Assembler& a) { a.dup(z0.s(), 257); }, {"a64 sve.dup.imm.s", "immediate 257", "multiple of 256"}},
      {[](Assembler& a) { a.dup(z0.h(), 32768); }, {"a64 sve.dup.imm.h", "immediate 32768"}},
      {[](Assembler& a) { a.fdup(z0.s(), 0.0); }, {"a64 sve.fdup.s", "value 0 is not"}},
      {[](Assembler& a) { a.fcmeq(p0.d(), p0.z(), z0.d(), 1.0); }, {"a64 sve.fcmeq.zero.d", "0.0 only"}},
      {[](Assembler& a) { a.lsl(z0.b(), z1.b(), 8); }, {"a64 sve.lsl.b", "shift 8", "0..7"}},
      {[](Assembler& a) { a.lsr(z0.d(), z1.d(), 0); }, {"a64 sve.lsr.d", "shift 0", "1..64"}},
      {[](Assembler& a) { a.asr(z0.h(), z1.h(), 17); }, {"a64 sve.asr.h", "shift 17", "1..16"}},
  };
  int index = 0;
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE("SVE error case " + std::to_string(index++) + " expecting \"" + c.message_parts.front() + "\"");
    Assembler a;
    try {
      c.emit(a);
      ADD_FAILURE() << "no weft::Error; emitted " << a.size_bytes() << " bytes";
    } catch (const weft::Error& e) {
      for (const std::string& part : c.message_parts) {
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
      }
    }
    EXPECT_EQ(a.size_bytes(), 0u);
    EXPECT_TRUE(a.forms_used().none());
  }
}

TEST(A64AssemblerErrors, SveRegistersOutOfRangeThrow) {
  EXPECT_THROW(ZReg(32), weft::Error);
  EXPECT_THROW(PReg(16), weft::Error);
  try {
    (void)PReg(16);
    FAIL();
  } catch (const weft::Error& e) {
    EXPECT_STREQ(e.what(), "a64: register p16 does not exist (p0..p15)");
  }
  EXPECT_NO_THROW(ZReg(31));
  EXPECT_NO_THROW(PReg(15));
}

}  // namespace
