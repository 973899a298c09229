// Hand-written SVE loop for llvm-mca (docs/tpp_eltwise.md, "Element-wise kernels on SVE CPUs: Neon
// or SVE"; written by docs/mca/gen_sve_loops.py): binary add, bf16 (rounded with bfcvt: not weft's bits, denormals flushed). Vector-length agnostic (mul vl, addvl):
// 4 vectors per iteration as the Neon kernel's 4 q registers. p0 = ptrue, x11 / x13 inputs, x12
// output, x10 the constants, x8 the count; bf16: z29 = 0x7f800000, z30 = 0x80000000, z31 = 0x7fff (set before the loop).
// out: bf16
.Lloop:
ld1h { z0.s }, p0/z, [x11]
ld1h { z1.s }, p0/z, [x11, #1, mul vl]
ld1h { z2.s }, p0/z, [x11, #2, mul vl]
ld1h { z3.s }, p0/z, [x11, #3, mul vl]
lsl z0.s, z0.s, #16
lsl z1.s, z1.s, #16
lsl z2.s, z2.s, #16
lsl z3.s, z3.s, #16
ld1h { z4.s }, p0/z, [x13]
ld1h { z5.s }, p0/z, [x13, #1, mul vl]
ld1h { z6.s }, p0/z, [x13, #2, mul vl]
ld1h { z7.s }, p0/z, [x13, #3, mul vl]
lsl z4.s, z4.s, #16
lsl z5.s, z5.s, #16
lsl z6.s, z6.s, #16
lsl z7.s, z7.s, #16
fadd z0.s, z0.s, z4.s
fadd z1.s, z1.s, z5.s
fadd z2.s, z2.s, z6.s
fadd z3.s, z3.s, z7.s
bfcvt z0.h, p0/m, z0.s
st1h { z0.s }, p0, [x12]
bfcvt z1.h, p0/m, z1.s
st1h { z1.s }, p0, [x12, #1, mul vl]
bfcvt z2.h, p0/m, z2.s
st1h { z2.s }, p0, [x12, #2, mul vl]
bfcvt z3.h, p0/m, z3.s
st1h { z3.s }, p0, [x12, #3, mul vl]
addvl x11, x11, #2
addvl x13, x13, #2
addvl x12, x12, #2
subs x8, x8, #1
b.ne .Lloop
