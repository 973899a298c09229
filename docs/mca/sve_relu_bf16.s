// Hand-written SVE loop for llvm-mca (docs/tpp_eltwise.md, "Element-wise kernels on SVE CPUs: Neon
// or SVE"; written by docs/mca/gen_sve_loops.py): relu, bf16 in and out (widened, relu, the bits kept: lsr #16). Vector-length agnostic (mul vl, addvl):
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
fcmle p1.s, p0/z, z0.s, #0.0
mov z0.s, p1/m, #0
fcmle p1.s, p0/z, z1.s, #0.0
mov z1.s, p1/m, #0
fcmle p1.s, p0/z, z2.s, #0.0
mov z2.s, p1/m, #0
fcmle p1.s, p0/z, z3.s, #0.0
mov z3.s, p1/m, #0
lsr z0.s, z0.s, #16
st1h { z0.s }, p0, [x12]
lsr z1.s, z1.s, #16
st1h { z1.s }, p0, [x12, #1, mul vl]
lsr z2.s, z2.s, #16
st1h { z2.s }, p0, [x12, #2, mul vl]
lsr z3.s, z3.s, #16
st1h { z3.s }, p0, [x12, #3, mul vl]
addvl x11, x11, #2
addvl x12, x12, #2
subs x8, x8, #1
b.ne .Lloop
