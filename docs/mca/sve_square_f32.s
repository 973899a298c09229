// Hand-written SVE loop for llvm-mca (docs/tpp_eltwise.md, "Element-wise kernels on SVE CPUs: Neon
// or SVE"; written by docs/mca/gen_sve_loops.py): square (x2), f32. Vector-length agnostic (mul vl, addvl):
// 4 vectors per iteration as the Neon kernel's 4 q registers. p0 = ptrue, x11 / x13 inputs, x12
// output, x10 the constants, x8 the count.
// out: f32
.Lloop:
ld1w { z0.s }, p0/z, [x11]
ld1w { z1.s }, p0/z, [x11, #1, mul vl]
ld1w { z2.s }, p0/z, [x11, #2, mul vl]
ld1w { z3.s }, p0/z, [x11, #3, mul vl]
fmul z0.s, z0.s, z0.s
fmul z1.s, z1.s, z1.s
fmul z2.s, z2.s, z2.s
fmul z3.s, z3.s, z3.s
st1w { z0.s }, p0, [x12]
st1w { z1.s }, p0, [x12, #1, mul vl]
st1w { z2.s }, p0, [x12, #2, mul vl]
st1w { z3.s }, p0, [x12, #3, mul vl]
addvl x11, x11, #4
addvl x12, x12, #4
subs x8, x8, #1
b.ne .Lloop
