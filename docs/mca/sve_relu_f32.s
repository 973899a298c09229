// Hand-written SVE loop for llvm-mca (docs/tpp_eltwise.md, "Element-wise kernels on SVE CPUs: Neon
// or SVE"; written by docs/mca/gen_sve_loops.py): relu, f32 (fcmle into a predicate, mov #0 under it). Vector-length agnostic (mul vl, addvl):
// 4 vectors per iteration as the Neon kernel's 4 q registers. p0 = ptrue, x11 / x13 inputs, x12
// output, x10 the constants, x8 the count.
// out: f32
.Lloop:
ld1w { z0.s }, p0/z, [x11]
ld1w { z1.s }, p0/z, [x11, #1, mul vl]
ld1w { z2.s }, p0/z, [x11, #2, mul vl]
ld1w { z3.s }, p0/z, [x11, #3, mul vl]
fcmle p1.s, p0/z, z0.s, #0.0
mov z0.s, p1/m, #0
fcmle p1.s, p0/z, z1.s, #0.0
mov z1.s, p1/m, #0
fcmle p1.s, p0/z, z2.s, #0.0
mov z2.s, p1/m, #0
fcmle p1.s, p0/z, z3.s, #0.0
mov z3.s, p1/m, #0
st1w { z0.s }, p0, [x12]
st1w { z1.s }, p0, [x12, #1, mul vl]
st1w { z2.s }, p0, [x12, #2, mul vl]
st1w { z3.s }, p0, [x12, #3, mul vl]
addvl x11, x11, #4
addvl x12, x12, #4
subs x8, x8, #1
b.ne .Lloop
