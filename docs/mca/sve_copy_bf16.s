// Hand-written SVE loop for llvm-mca (docs/tpp_eltwise.md, "Element-wise kernels on SVE CPUs: Neon
// or SVE"; written by docs/mca/gen_sve_loops.py): copy, bf16 (the bits, 16-bit lanes). Vector-length agnostic (mul vl, addvl):
// 4 vectors per iteration as the Neon kernel's 4 q registers. p0 = ptrue, x11 / x13 inputs, x12
// output, x10 the constants, x8 the count.
// out: bf16
.Lloop:
ld1h { z0.h }, p0/z, [x11]
ld1h { z1.h }, p0/z, [x11, #1, mul vl]
ld1h { z2.h }, p0/z, [x11, #2, mul vl]
ld1h { z3.h }, p0/z, [x11, #3, mul vl]
st1h { z0.h }, p0, [x12]
st1h { z1.h }, p0, [x12, #1, mul vl]
st1h { z2.h }, p0, [x12, #2, mul vl]
st1h { z3.h }, p0, [x12, #3, mul vl]
addvl x11, x11, #4
addvl x12, x12, #4
subs x8, x8, #1
b.ne .Lloop
