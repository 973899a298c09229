// Hand-written SVE loop for llvm-mca (docs/tpp_eltwise.md, "Element-wise kernels on SVE CPUs: Neon
// or SVE"; written by docs/mca/gen_sve_loops.py): binary add, bf16 (rounded as jit::to_bfloat16). Vector-length agnostic (mul vl, addvl):
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
fcmuo p2.s, p0/z, z0.s, z0.s
and z24.d, z0.d, z29.d
cmpeq p1.s, p0/z, z24.s, #0
fmax z0.s, p0/m, z0.s, z0.s
and z0.s, p1/m, z0.s, z30.s
lsr z24.s, z0.s, #16
and z24.s, z24.s, #0x1
add z24.s, z24.s, z31.s
mov z24.s, p2/m, #0
add z0.s, z0.s, z24.s
lsr z0.s, z0.s, #16
st1h { z0.s }, p0, [x12]
fcmuo p2.s, p0/z, z1.s, z1.s
and z25.d, z1.d, z29.d
cmpeq p1.s, p0/z, z25.s, #0
fmax z1.s, p0/m, z1.s, z1.s
and z1.s, p1/m, z1.s, z30.s
lsr z25.s, z1.s, #16
and z25.s, z25.s, #0x1
add z25.s, z25.s, z31.s
mov z25.s, p2/m, #0
add z1.s, z1.s, z25.s
lsr z1.s, z1.s, #16
st1h { z1.s }, p0, [x12, #1, mul vl]
fcmuo p2.s, p0/z, z2.s, z2.s
and z26.d, z2.d, z29.d
cmpeq p1.s, p0/z, z26.s, #0
fmax z2.s, p0/m, z2.s, z2.s
and z2.s, p1/m, z2.s, z30.s
lsr z26.s, z2.s, #16
and z26.s, z26.s, #0x1
add z26.s, z26.s, z31.s
mov z26.s, p2/m, #0
add z2.s, z2.s, z26.s
lsr z2.s, z2.s, #16
st1h { z2.s }, p0, [x12, #2, mul vl]
fcmuo p2.s, p0/z, z3.s, z3.s
and z27.d, z3.d, z29.d
cmpeq p1.s, p0/z, z27.s, #0
fmax z3.s, p0/m, z3.s, z3.s
and z3.s, p1/m, z3.s, z30.s
lsr z27.s, z3.s, #16
and z27.s, z27.s, #0x1
add z27.s, z27.s, z31.s
mov z27.s, p2/m, #0
add z3.s, z3.s, z27.s
lsr z3.s, z3.s, #16
st1h { z3.s }, p0, [x12, #3, mul vl]
addvl x11, x11, #2
addvl x13, x13, #2
addvl x12, x12, #2
subs x8, x8, #1
b.ne .Lloop
