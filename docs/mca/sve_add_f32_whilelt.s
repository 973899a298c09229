// Hand-written SVE loop for llvm-mca (docs/tpp_eltwise.md, "Element-wise kernels on SVE CPUs: Neon
// or SVE"; written by docs/mca/gen_sve_loops.py): binary add, f32, predicated: 4 whilelt per iteration (element indices x9, x14-x16 against the count x8), the tail inside the loop. Vector-length agnostic (mul vl, addvl):
// 4 vectors per iteration as the Neon kernel's 4 q registers. p0 = ptrue, x11 / x13 inputs, x12
// output, x10 the constants, x8 the count.
// out: f32
.Lloop:
ld1w { z0.s }, p1/z, [x11, x9, lsl #2]
ld1w { z1.s }, p2/z, [x11, x14, lsl #2]
ld1w { z2.s }, p3/z, [x11, x15, lsl #2]
ld1w { z3.s }, p4/z, [x11, x16, lsl #2]
ld1w { z4.s }, p1/z, [x13, x9, lsl #2]
ld1w { z5.s }, p2/z, [x13, x14, lsl #2]
ld1w { z6.s }, p3/z, [x13, x15, lsl #2]
ld1w { z7.s }, p4/z, [x13, x16, lsl #2]
fadd z0.s, z0.s, z4.s
fadd z1.s, z1.s, z5.s
fadd z2.s, z2.s, z6.s
fadd z3.s, z3.s, z7.s
st1w { z0.s }, p1, [x12, x9, lsl #2]
st1w { z1.s }, p2, [x12, x14, lsl #2]
st1w { z2.s }, p3, [x12, x15, lsl #2]
st1w { z3.s }, p4, [x12, x16, lsl #2]
incw x9, all, mul #4
incw x14, all, mul #4
incw x15, all, mul #4
incw x16, all, mul #4
whilelt p4.s, x16, x8
whilelt p3.s, x15, x8
whilelt p2.s, x14, x8
whilelt p1.s, x9, x8
b.first .Lloop
