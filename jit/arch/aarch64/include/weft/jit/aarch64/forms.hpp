// Every instruction form the A64 assembler can emit, and its name. A form is a mnemonic with one
// operand shape and arrangement ("fmla.4s.elem", "ldr.q.post"): each Assembler records the forms it
// emitted, so that an emitter's test can check that it used only forms the golden test covers
// (tests/jit/arch/aarch64/assembler_golden_test.cpp checks every form bit for bit against GNU as):
//
//   weft::jit::a64::Assembler a;
//   a.fmla(v0.s4(), v1.s4(), v2.s(3));
//   a.used(Form::fmla_4s_elem);    // true (forms_used() is the whole bitset)
//   form_name(Form::fmla_4s_elem);  // "fmla.4s.elem"
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

// The list is one X-macro so that the enumerators and their names cannot drift apart. The family
// macros keep each family's members in a fixed order: the assembler picks a member by adding the
// arrangement's position to the family's first enumerator.
//   XW, XWS: .x .w                       (general registers; XWS adds a shape)
//   FPV(S):  .2s .4s .2d                 (floating-point vector arrangements)
//   INTV:    .16b .8h .4s .2d            (integer vector arrangements)
//   LOGV:    .8b .16b                    (bitwise vector operations)
//   LONGV:   .8h .4s .2d                 (destination of widening, source of narrowing operations)
//   LDST:    .uimm .unscaled(ldur) .pre .post .reg
//   PAIR:    .off .pre .post
//   VLIST:   .off .post_imm .post_reg    (ld1/st1 structure addressing)
#define WEFT_A64_XW(X, id, name) X(id##_x, name ".x") X(id##_w, name ".w")
#define WEFT_A64_XWS(X, id, name, shape)                                                                               \
  X(id##_x_##shape, name ".x." #shape) X(id##_w_##shape, name ".w." #shape)
#define WEFT_A64_FPV(X, id, name) X(id##_2s, name ".2s") X(id##_4s, name ".4s") X(id##_2d, name ".2d")
#define WEFT_A64_FPVS(X, id, name, shape)                                                                              \
  X(id##_2s_##shape, name ".2s." #shape) X(id##_4s_##shape, name ".4s." #shape)                                        \
  X(id##_2d_##shape, name ".2d." #shape)
#define WEFT_A64_INTV(X, id, name)                                                                                     \
  X(id##_16b, name ".16b") X(id##_8h, name ".8h") X(id##_4s, name ".4s") X(id##_2d, name ".2d")
#define WEFT_A64_LOGV(X, id, name) X(id##_8b, name ".8b") X(id##_16b, name ".16b")
#define WEFT_A64_LONGV(X, id, name) X(id##_8h, name ".8h") X(id##_4s, name ".4s") X(id##_2d, name ".2d")
#define WEFT_A64_LDST(X, id, name, uid, uname)                                                                         \
  X(id##_uimm, name ".uimm") X(uid, uname) X(id##_pre, name ".pre") X(id##_post, name ".post")                         \
  X(id##_reg, name ".reg")
#define WEFT_A64_PAIR(X, id, name) X(id##_off, name ".off") X(id##_pre, name ".pre") X(id##_post, name ".post")
#define WEFT_A64_VLIST(X, id, name)                                                                                    \
  X(id##_off, name ".off") X(id##_post_imm, name ".post_imm") X(id##_post_reg, name ".post_reg")
#define WEFT_A64_VLIST_N(X, id, name, arr)                                                                             \
  WEFT_A64_VLIST(X, id##_##arr##_x1, name "." #arr ".x1") WEFT_A64_VLIST(X, id##_##arr##_x2, name "." #arr ".x2")      \
  WEFT_A64_VLIST(X, id##_##arr##_x3, name "." #arr ".x3") WEFT_A64_VLIST(X, id##_##arr##_x4, name "." #arr ".x4")
#define WEFT_A64_VLIST_ARR(X, id, name)                                                                                \
  WEFT_A64_VLIST_N(X, id, name, 16b) WEFT_A64_VLIST_N(X, id, name, 8h) WEFT_A64_VLIST_N(X, id, name, 4s)               \
  WEFT_A64_VLIST_N(X, id, name, 2d)

// SVE families, by element size (the member's position is the encodings' size field, minus one
// for the floating-point ones):
//   SVE_BHSD: .b .h .s .d        SVE_HSD: .h .s .d
#define WEFT_A64_SVE_BHSD(X, id, name)                                                                                 \
  X(sve_##id##_b, "sve." name ".b") X(sve_##id##_h, "sve." name ".h") X(sve_##id##_s, "sve." name ".s")                \
  X(sve_##id##_d, "sve." name ".d")
#define WEFT_A64_SVE_HSD(X, id, name)                                                                                  \
  X(sve_##id##_h, "sve." name ".h") X(sve_##id##_s, "sve." name ".s") X(sve_##id##_d, "sve." name ".d")
#define WEFT_A64_SVE_LDST(X, id, name) X(sve_##id##_imm, "sve." name ".imm") X(sve_##id##_reg, "sve." name ".reg")

#define WEFT_A64_FORM_LIST(X)                                                                                          \
  /* integer arithmetic: immediate (optionally lsl #12), shifted register, extended register */                        \
  WEFT_A64_XWS(X, add, "add", imm) WEFT_A64_XWS(X, add, "add", shift) WEFT_A64_XWS(X, add, "add", ext)                 \
  WEFT_A64_XWS(X, adds, "adds", imm) WEFT_A64_XWS(X, adds, "adds", shift) WEFT_A64_XWS(X, adds, "adds", ext)           \
  WEFT_A64_XWS(X, sub, "sub", imm) WEFT_A64_XWS(X, sub, "sub", shift) WEFT_A64_XWS(X, sub, "sub", ext)                 \
  WEFT_A64_XWS(X, subs, "subs", imm) WEFT_A64_XWS(X, subs, "subs", shift) WEFT_A64_XWS(X, subs, "subs", ext)           \
  WEFT_A64_XWS(X, cmp, "cmp", imm) WEFT_A64_XWS(X, cmp, "cmp", shift)                                                  \
  WEFT_A64_XWS(X, cmn, "cmn", imm) WEFT_A64_XWS(X, cmn, "cmn", shift)                                                  \
  WEFT_A64_XWS(X, tst, "tst", imm) WEFT_A64_XWS(X, tst, "tst", shift)                                                  \
  /* logical: shifted register and bitmask immediate */                                                                \
  X(and_x_shift, "and.x.shift") X(and_w_shift, "and.w.shift") WEFT_A64_XWS(X, ands, "ands", shift)                     \
  WEFT_A64_XWS(X, orr, "orr", shift) WEFT_A64_XWS(X, eor, "eor", shift)                                                \
  WEFT_A64_XWS(X, bic, "bic", shift) WEFT_A64_XWS(X, orn, "orn", shift)                                                \
  X(and_x_imm, "and.x.imm") X(and_w_imm, "and.w.imm") WEFT_A64_XWS(X, ands, "ands", imm)                               \
  WEFT_A64_XWS(X, orr, "orr", imm) WEFT_A64_XWS(X, eor, "eor", imm)                                                    \
  /* moves */                                                                                                          \
  WEFT_A64_XWS(X, mov, "mov", reg) X(mov_x_sp, "mov.x.sp") X(mov_w_sp, "mov.w.sp")                                     \
  WEFT_A64_XW(X, movz, "movz") WEFT_A64_XW(X, movn, "movn") WEFT_A64_XW(X, movk, "movk")                               \
  /* shifts, multiply, divide, conditional select */                                                                   \
  WEFT_A64_XWS(X, lsl, "lsl", imm) WEFT_A64_XWS(X, lsr, "lsr", imm) WEFT_A64_XWS(X, asr, "asr", imm)                   \
  WEFT_A64_XWS(X, lsl, "lsl", reg) WEFT_A64_XWS(X, lsr, "lsr", reg) WEFT_A64_XWS(X, asr, "asr", reg)                   \
  WEFT_A64_XW(X, mul, "mul") WEFT_A64_XW(X, madd, "madd") WEFT_A64_XW(X, msub, "msub")                                 \
  WEFT_A64_XW(X, udiv, "udiv") WEFT_A64_XW(X, sdiv, "sdiv")                                                            \
  WEFT_A64_XW(X, csel, "csel") WEFT_A64_XW(X, csinc, "csinc") WEFT_A64_XW(X, cset, "cset")                             \
  /* branches and system */                                                                                            \
  X(b, "b") X(bl, "bl") X(b_cond, "b.cond") WEFT_A64_XW(X, cbz, "cbz") WEFT_A64_XW(X, cbnz, "cbnz")                    \
  WEFT_A64_XW(X, tbz, "tbz") WEFT_A64_XW(X, tbnz, "tbnz") X(br, "br") X(blr, "blr") X(ret, "ret")                      \
  X(adr, "adr") X(nop, "nop") X(udf, "udf") X(dmb, "dmb") X(dsb, "dsb") X(isb, "isb")                                  \
  /* integer loads and stores */                                                                                       \
  WEFT_A64_LDST(X, ldr_x, "ldr.x", ldur_x, "ldur.x") WEFT_A64_LDST(X, ldr_w, "ldr.w", ldur_w, "ldur.w")                \
  WEFT_A64_LDST(X, ldrb, "ldrb", ldurb, "ldurb") WEFT_A64_LDST(X, ldrh, "ldrh", ldurh, "ldurh")                        \
  WEFT_A64_LDST(X, ldrsw, "ldrsw", ldursw, "ldursw")                                                                   \
  WEFT_A64_LDST(X, str_x, "str.x", stur_x, "stur.x") WEFT_A64_LDST(X, str_w, "str.w", stur_w, "stur.w")                \
  WEFT_A64_LDST(X, strb, "strb", sturb, "sturb") WEFT_A64_LDST(X, strh, "strh", sturh, "sturh")                        \
  WEFT_A64_PAIR(X, ldp_x, "ldp.x") WEFT_A64_PAIR(X, ldp_w, "ldp.w")                                                    \
  WEFT_A64_PAIR(X, stp_x, "stp.x") WEFT_A64_PAIR(X, stp_w, "stp.w")                                                    \
  /* atomics and exclusives */                                                                                         \
  WEFT_A64_XW(X, ldar, "ldar") WEFT_A64_XW(X, stlr, "stlr") WEFT_A64_XW(X, ldxr, "ldxr")                               \
  WEFT_A64_XW(X, stxr, "stxr") WEFT_A64_XW(X, ldaxr, "ldaxr") WEFT_A64_XW(X, stlxr, "stlxr")                           \
  WEFT_A64_XW(X, ldaddal, "ldaddal")                                                                                   \
  /* SIMD&FP loads and stores */                                                                                       \
  WEFT_A64_LDST(X, ldr_q, "ldr.q", ldur_q, "ldur.q") WEFT_A64_LDST(X, ldr_d, "ldr.d", ldur_d, "ldur.d")                \
  WEFT_A64_LDST(X, ldr_s, "ldr.s", ldur_s, "ldur.s") WEFT_A64_LDST(X, ldr_h, "ldr.h", ldur_h, "ldur.h")                \
  WEFT_A64_LDST(X, str_q, "str.q", stur_q, "stur.q") WEFT_A64_LDST(X, str_d, "str.d", stur_d, "stur.d")                \
  WEFT_A64_LDST(X, str_s, "str.s", stur_s, "stur.s") WEFT_A64_LDST(X, str_h, "str.h", stur_h, "stur.h")                \
  WEFT_A64_PAIR(X, ldp_q, "ldp.q") WEFT_A64_PAIR(X, ldp_d, "ldp.d") WEFT_A64_PAIR(X, ldp_s, "ldp.s")                   \
  WEFT_A64_PAIR(X, stp_q, "stp.q") WEFT_A64_PAIR(X, stp_d, "stp.d") WEFT_A64_PAIR(X, stp_s, "stp.s")                   \
  WEFT_A64_VLIST_ARR(X, ld1, "ld1") WEFT_A64_VLIST_ARR(X, st1, "st1")                                                  \
  WEFT_A64_VLIST(X, ld1_s_lane, "ld1.s.lane") WEFT_A64_VLIST(X, ld1_d_lane, "ld1.d.lane")                              \
  WEFT_A64_VLIST(X, st1_s_lane, "st1.s.lane") WEFT_A64_VLIST(X, st1_d_lane, "st1.d.lane")                              \
  WEFT_A64_VLIST(X, ld1r_4s, "ld1r.4s") WEFT_A64_VLIST(X, ld1r_2d, "ld1r.2d")                                          \
  /* floating-point vector: three registers, by element, two registers, compare with zero */                           \
  WEFT_A64_FPV(X, fadd, "fadd") WEFT_A64_FPV(X, fsub, "fsub") WEFT_A64_FPV(X, fmul, "fmul")                            \
  WEFT_A64_FPV(X, fdiv, "fdiv") WEFT_A64_FPV(X, fmax, "fmax") WEFT_A64_FPV(X, fmin, "fmin")                            \
  WEFT_A64_FPV(X, fmaxnm, "fmaxnm") WEFT_A64_FPV(X, fminnm, "fminnm") WEFT_A64_FPV(X, fabd, "fabd")                    \
  WEFT_A64_FPV(X, faddp, "faddp") WEFT_A64_FPV(X, fmla, "fmla") WEFT_A64_FPV(X, fmls, "fmls")                          \
  WEFT_A64_FPV(X, frecps, "frecps") WEFT_A64_FPV(X, frsqrts, "frsqrts")                                                \
  WEFT_A64_FPV(X, fcmeq, "fcmeq") WEFT_A64_FPV(X, fcmge, "fcmge") WEFT_A64_FPV(X, fcmgt, "fcmgt")                      \
  WEFT_A64_FPVS(X, fmla, "fmla", elem) WEFT_A64_FPVS(X, fmls, "fmls", elem) WEFT_A64_FPVS(X, fmul, "fmul", elem)       \
  WEFT_A64_FPV(X, fsqrt, "fsqrt") WEFT_A64_FPV(X, fabs, "fabs") WEFT_A64_FPV(X, fneg, "fneg")                          \
  WEFT_A64_FPV(X, frintn, "frintn") WEFT_A64_FPV(X, frintm, "frintm") WEFT_A64_FPV(X, frintp, "frintp")                \
  WEFT_A64_FPV(X, frintz, "frintz") WEFT_A64_FPV(X, frecpe, "frecpe") WEFT_A64_FPV(X, frsqrte, "frsqrte")              \
  WEFT_A64_FPV(X, fcvtzs, "fcvtzs") WEFT_A64_FPV(X, fcvtns, "fcvtns")                                                  \
  WEFT_A64_FPV(X, scvtf, "scvtf") WEFT_A64_FPV(X, ucvtf, "ucvtf")                                                      \
  WEFT_A64_FPVS(X, fcmeq, "fcmeq", zero) WEFT_A64_FPVS(X, fcmge, "fcmge", zero) WEFT_A64_FPVS(X, fcmgt, "fcmgt", zero) \
  WEFT_A64_FPVS(X, fcmle, "fcmle", zero) WEFT_A64_FPVS(X, fcmlt, "fcmlt", zero)                                        \
  WEFT_A64_FPVS(X, fmov, "fmov", imm)                                                                                  \
  X(fcvtn_2s, "fcvtn.2s") X(fcvtn2_4s, "fcvtn2.4s") X(fcvtl_2d, "fcvtl.2d") X(fcvtl2_2d, "fcvtl2.2d")                  \
  X(faddp_s, "faddp.s") X(faddp_d, "faddp.d") X(fmaxv_4s, "fmaxv.4s") X(fminv_4s, "fminv.4s")                          \
  X(fmaxnmv_4s, "fmaxnmv.4s") X(fminnmv_4s, "fminnmv.4s")                                                              \
  /* integer vector */                                                                                                 \
  WEFT_A64_INTV(X, add, "add") WEFT_A64_INTV(X, sub, "sub") WEFT_A64_INTV(X, shl, "shl")                               \
  WEFT_A64_INTV(X, sshr, "sshr") WEFT_A64_INTV(X, ushr, "ushr")                                                        \
  WEFT_A64_INTV(X, trn1, "trn1") WEFT_A64_INTV(X, trn2, "trn2") WEFT_A64_INTV(X, zip1, "zip1")                         \
  WEFT_A64_INTV(X, zip2, "zip2") WEFT_A64_INTV(X, uzp1, "uzp1") WEFT_A64_INTV(X, uzp2, "uzp2")                         \
  WEFT_A64_LONGV(X, sshll, "sshll") WEFT_A64_LONGV(X, sshll2, "sshll2")                                                \
  WEFT_A64_LONGV(X, ushll, "ushll") WEFT_A64_LONGV(X, ushll2, "ushll2")                                                \
  WEFT_A64_LONGV(X, shrn, "shrn") WEFT_A64_LONGV(X, shrn2, "shrn2")                                                    \
  WEFT_A64_LONGV(X, xtn, "xtn") WEFT_A64_LONGV(X, xtn2, "xtn2")                                                        \
  /* bitwise vector, immediates, element moves, permutes */                                                            \
  X(and_8b, "and.8b") X(and_16b, "and.16b") WEFT_A64_LOGV(X, bic, "bic") WEFT_A64_LOGV(X, orr, "orr")                  \
  WEFT_A64_LOGV(X, orn, "orn") WEFT_A64_LOGV(X, eor, "eor") WEFT_A64_LOGV(X, bsl, "bsl")                               \
  WEFT_A64_LOGV(X, bit, "bit") WEFT_A64_LOGV(X, bif, "bif") X(not_8b, "not.8b") X(not_16b, "not.16b")                  \
  WEFT_A64_LOGV(X, mov, "mov") WEFT_A64_LOGV(X, ext, "ext")                                                            \
  X(movi_8b, "movi.8b") X(movi_16b, "movi.16b") X(movi_4h, "movi.4h") X(movi_8h, "movi.8h")                            \
  X(movi_2s, "movi.2s") X(movi_4s, "movi.4s") X(movi_2d, "movi.2d") X(movi_d, "movi.d")                                \
  X(mvni_8h, "mvni.8h") X(mvni_4s, "mvni.4s")                                                                          \
  WEFT_A64_INTV(X, dup_elem, "dup.elem") WEFT_A64_INTV(X, dup_gen, "dup.gen")                                          \
  X(dup_elem_2s, "dup.elem.2s") X(dup_gen_2s, "dup.gen.2s")                                                            \
  X(ins_elem_b, "ins.elem.b") X(ins_elem_h, "ins.elem.h") X(ins_elem_s, "ins.elem.s") X(ins_elem_d, "ins.elem.d")      \
  X(ins_gen_b, "ins.gen.b") X(ins_gen_h, "ins.gen.h") X(ins_gen_s, "ins.gen.s") X(ins_gen_d, "ins.gen.d")              \
  X(umov_b, "umov.b") X(umov_h, "umov.h") X(umov_s, "umov.s") X(umov_d, "umov.d")                                      \
  X(fmov_s_w, "fmov.s.w") X(fmov_w_s, "fmov.w.s") X(fmov_d_x, "fmov.d.x") X(fmov_x_d, "fmov.x.d")                      \
  /* scalar floating point */                                                                                          \
  X(fadd_s, "fadd.s") X(fadd_d, "fadd.d") X(fsub_s, "fsub.s") X(fsub_d, "fsub.d")                                      \
  X(fmul_s, "fmul.s") X(fmul_d, "fmul.d") X(fdiv_s, "fdiv.s") X(fdiv_d, "fdiv.d")                                      \
  X(fmax_s, "fmax.s") X(fmax_d, "fmax.d") X(fmin_s, "fmin.s") X(fmin_d, "fmin.d")                                      \
  X(fmaxnm_s, "fmaxnm.s") X(fmaxnm_d, "fmaxnm.d") X(fminnm_s, "fminnm.s") X(fminnm_d, "fminnm.d")                      \
  X(fmov_s, "fmov.s") X(fmov_d, "fmov.d") X(fabs_s, "fabs.s") X(fabs_d, "fabs.d")                                      \
  X(fneg_s, "fneg.s") X(fneg_d, "fneg.d") X(fsqrt_s, "fsqrt.s") X(fsqrt_d, "fsqrt.d")                                  \
  X(fmadd_s, "fmadd.s") X(fmadd_d, "fmadd.d") X(fmsub_s, "fmsub.s") X(fmsub_d, "fmsub.d")                              \
  X(fcvt_d_s, "fcvt.d.s") X(fcvt_s_d, "fcvt.s.d") X(fmov_s_imm, "fmov.s.imm") X(fmov_d_imm, "fmov.d.imm")              \
  /* brgemm emitter: prefetch hints (unsigned offset, unscaled prfum, register offset) */                              \
  X(prfm_uimm, "prfm.uimm") X(prfum, "prfum") X(prfm_reg, "prfm.reg")                                                  \
  /* unary emitter: lane tests (a bitmask's bits spread over lanes), sums across lanes (lanes packed into bits) */      \
  WEFT_A64_INTV(X, cmtst, "cmtst") X(addv_16b, "addv.16b") X(addv_8h, "addv.8h") X(addv_4s, "addv.4s")  \
  /* SVE: predicates, counts, loads and stores */                                                                      \
  WEFT_A64_SVE_BHSD(X, ptrue, "ptrue") X(sve_pfalse, "sve.pfalse") X(sve_ptest, "sve.ptest")                           \
  WEFT_A64_SVE_BHSD(X, whilelt_w, "whilelt.w") WEFT_A64_SVE_BHSD(X, whilelt_x, "whilelt.x")                            \
  X(sve_cntb, "sve.cntb") X(sve_cnth, "sve.cnth") X(sve_cntw, "sve.cntw") X(sve_cntd, "sve.cntd")                      \
  X(sve_incb, "sve.incb") X(sve_inch, "sve.inch") X(sve_incw, "sve.incw") X(sve_incd, "sve.incd")                      \
  X(sve_addvl, "sve.addvl") X(sve_addpl, "sve.addpl") X(sve_rdvl, "sve.rdvl")                                          \
  WEFT_A64_SVE_LDST(X, ld1h, "ld1h") WEFT_A64_SVE_LDST(X, ld1w, "ld1w") WEFT_A64_SVE_LDST(X, ld1d, "ld1d")             \
  WEFT_A64_SVE_LDST(X, st1h, "st1h") WEFT_A64_SVE_LDST(X, st1w, "st1w") WEFT_A64_SVE_LDST(X, st1d, "st1d")             \
  X(sve_ld1rh, "sve.ld1rh") X(sve_ld1rw, "sve.ld1rw") X(sve_ld1rd, "sve.ld1rd")                                        \
  X(sve_ldr_z, "sve.ldr.z") X(sve_str_z, "sve.str.z")                                                                  \
  /* SVE: floating point (fused, by element, unpredicated, predicated, unary, compares, reductions) */                 \
  WEFT_A64_SVE_HSD(X, fmla, "fmla") WEFT_A64_SVE_HSD(X, fmls, "fmls") WEFT_A64_SVE_HSD(X, fmad, "fmad")                \
  WEFT_A64_SVE_HSD(X, fmla_elem, "fmla.elem")                                                                          \
  WEFT_A64_SVE_HSD(X, fadd, "fadd") WEFT_A64_SVE_HSD(X, fsub, "fsub") WEFT_A64_SVE_HSD(X, fmul, "fmul")                \
  WEFT_A64_SVE_HSD(X, fadd_pred, "fadd.pred") WEFT_A64_SVE_HSD(X, fsub_pred, "fsub.pred")                              \
  WEFT_A64_SVE_HSD(X, fmul_pred, "fmul.pred") WEFT_A64_SVE_HSD(X, fmaxnm_pred, "fmaxnm.pred")                          \
  WEFT_A64_SVE_HSD(X, fminnm_pred, "fminnm.pred") WEFT_A64_SVE_HSD(X, fmax_pred, "fmax.pred")                          \
  WEFT_A64_SVE_HSD(X, fmin_pred, "fmin.pred") WEFT_A64_SVE_HSD(X, fdiv_pred, "fdiv.pred")                              \
  WEFT_A64_SVE_HSD(X, fsqrt, "fsqrt") WEFT_A64_SVE_HSD(X, fneg, "fneg") WEFT_A64_SVE_HSD(X, fabs, "fabs")              \
  WEFT_A64_SVE_HSD(X, frintn, "frintn") X(sve_fcvtzs_s, "sve.fcvtzs.s") X(sve_scvtf_s, "sve.scvtf.s")                  \
  WEFT_A64_SVE_HSD(X, fcmge, "fcmge") WEFT_A64_SVE_HSD(X, fcmgt, "fcmgt") WEFT_A64_SVE_HSD(X, fcmeq, "fcmeq")          \
  WEFT_A64_SVE_HSD(X, fcmle, "fcmle") WEFT_A64_SVE_HSD(X, fcmlt, "fcmlt")                                              \
  WEFT_A64_SVE_HSD(X, fcmge_zero, "fcmge.zero") WEFT_A64_SVE_HSD(X, fcmgt_zero, "fcmgt.zero")                          \
  WEFT_A64_SVE_HSD(X, fcmeq_zero, "fcmeq.zero") WEFT_A64_SVE_HSD(X, fcmle_zero, "fcmle.zero")                          \
  WEFT_A64_SVE_HSD(X, fcmlt_zero, "fcmlt.zero")                                                                        \
  WEFT_A64_SVE_HSD(X, faddv, "faddv") WEFT_A64_SVE_HSD(X, fmaxv, "fmaxv")                                              \
  /* SVE: selects, moves, broadcasts, bitwise, shifts, integer add/sub, permutes */                                    \
  WEFT_A64_SVE_BHSD(X, sel, "sel") X(sve_mov, "sve.mov") WEFT_A64_SVE_BHSD(X, mov_pred, "mov.pred")                   \
  WEFT_A64_SVE_BHSD(X, dup_gen, "dup.gen") WEFT_A64_SVE_BHSD(X, dup_imm, "dup.imm") WEFT_A64_SVE_HSD(X, fdup, "fdup")  \
  X(sve_and, "sve.and") X(sve_orr, "sve.orr") X(sve_eor, "sve.eor") X(sve_bic, "sve.bic")                              \
  WEFT_A64_SVE_BHSD(X, asr, "asr") WEFT_A64_SVE_BHSD(X, lsr, "lsr") WEFT_A64_SVE_BHSD(X, lsl, "lsl")                   \
  WEFT_A64_SVE_BHSD(X, add, "add") WEFT_A64_SVE_BHSD(X, sub, "sub")                                                    \
  WEFT_A64_SVE_BHSD(X, zip1, "zip1") WEFT_A64_SVE_BHSD(X, zip2, "zip2") WEFT_A64_SVE_BHSD(X, uzp1, "uzp1")             \
  WEFT_A64_SVE_BHSD(X, uzp2, "uzp2") WEFT_A64_SVE_BHSD(X, trn1, "trn1") WEFT_A64_SVE_BHSD(X, trn2, "trn2")             \
  /* SVE: bf16 */                                                                                                      \
  X(sve_bfdot, "sve.bfdot") X(sve_bfdot_elem, "sve.bfdot.elem") X(sve_bfmmla, "sve.bfmmla")                            \
  X(sve_bfcvt, "sve.bfcvt") X(sve_bfcvtnt, "sve.bfcvtnt")                                                              \
  /* FEAT_BF16 (Neon) */                                                                                               \
  /* bf16 pair dot products, 2x4 by 4x2 matrix multiply, widening multiply-add of the even (b) or odd (t) lanes, */    \
  /* fp32 -> bf16 narrowing (vector halves, scalar) */                                                                 \
  X(bfdot_2s, "bfdot.2s") X(bfdot_4s, "bfdot.4s") X(bfdot_2s_elem, "bfdot.2s.elem") X(bfdot_4s_elem, "bfdot.4s.elem")  \
  X(bfmmla_4s, "bfmmla.4s") X(bfmlalb_4s, "bfmlalb.4s") X(bfmlalt_4s, "bfmlalt.4s")                                    \
  X(bfmlalb_4s_elem, "bfmlalb.4s.elem") X(bfmlalt_4s_elem, "bfmlalt.4s.elem")                                          \
  X(bfcvtn_4h, "bfcvtn.4h") X(bfcvtn2_8h, "bfcvtn2.8h") X(bfcvt_h_s, "bfcvt.h.s")                                      \
  /* SVE BRGEMM (issue 28, sve-brgemm): load and replicate a quadword (4 words / 2 doublewords into every */           \
  /* 128-bit segment), for fmla by element */                                                                          \
  X(sve_ld1rqw, "sve.ld1rqw") X(sve_ld1rqd, "sve.ld1rqd")                                                               \
  /* SVE activation (issue 28, sve-activation): fscale (d = d * 2^m, m's lanes signed integers) */                      \
  WEFT_A64_SVE_HSD(X, fscale_pred, "fscale.pred")

namespace weft::jit::a64 {

#define WEFT_A64_FORM_ENUMERATOR(id, name) id,
enum class Form : unsigned short { WEFT_A64_FORM_LIST(WEFT_A64_FORM_ENUMERATOR) };
#undef WEFT_A64_FORM_ENUMERATOR

#define WEFT_A64_FORM_COUNT_ONE(id, name) +1
inline constexpr std::size_t kFormCount = 0 WEFT_A64_FORM_LIST(WEFT_A64_FORM_COUNT_ONE);
#undef WEFT_A64_FORM_COUNT_ONE

#define WEFT_A64_FORM_NAME(id, name) std::string_view(name),
inline constexpr std::array<std::string_view, kFormCount> kFormNames = {WEFT_A64_FORM_LIST(WEFT_A64_FORM_NAME)};
#undef WEFT_A64_FORM_NAME

constexpr std::string_view form_name(Form form) { return kFormNames[static_cast<std::size_t>(form)]; }

// The member `offset` places after `first` in its family (see the family macros above).
constexpr Form form_at(Form first, unsigned offset) {
  return static_cast<Form>(static_cast<unsigned>(first) + offset);
}

}  // namespace weft::jit::a64
