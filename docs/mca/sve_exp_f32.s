// Hand-written SVE loop for llvm-mca (docs/tpp_eltwise.md, "Element-wise kernels on SVE CPUs: Neon
// or SVE"; written by docs/mca/gen_sve_loops.py): exp, f32 (the Neon kernel's steps; Horner with fmad, the scaling with fscale). Vector-length agnostic (mul vl, addvl):
// 4 vectors per iteration as the Neon kernel's 4 q registers. p0 = ptrue, x11 / x13 inputs, x12
// output, x10 the constants, x8 the count.
// out: f32
.Lloop:
ld1w { z0.s }, p0/z, [x11]
ld1w { z1.s }, p0/z, [x11, #1, mul vl]
ld1w { z2.s }, p0/z, [x11, #2, mul vl]
ld1w { z3.s }, p0/z, [x11, #3, mul vl]
ld1rw { z20.s }, p0/z, [x10]
fmax z0.s, p0/m, z0.s, z20.s
fmax z1.s, p0/m, z1.s, z20.s
fmax z2.s, p0/m, z2.s, z20.s
fmax z3.s, p0/m, z3.s, z20.s
ld1rw { z20.s }, p0/z, [x10, #4]
fmin z0.s, p0/m, z0.s, z20.s
fmin z1.s, p0/m, z1.s, z20.s
fmin z2.s, p0/m, z2.s, z20.s
fmin z3.s, p0/m, z3.s, z20.s
ld1rw { z20.s }, p0/z, [x10, #8]
fmul z16.s, z0.s, z20.s
fmul z17.s, z1.s, z20.s
fmul z18.s, z2.s, z20.s
fmul z19.s, z3.s, z20.s
frintn z16.s, p0/m, z16.s
frintn z17.s, p0/m, z17.s
frintn z18.s, p0/m, z18.s
frintn z19.s, p0/m, z19.s
ld1rw { z20.s }, p0/z, [x10, #12]
fmls z0.s, p0/m, z16.s, z20.s
fmls z1.s, p0/m, z17.s, z20.s
fmls z2.s, p0/m, z18.s, z20.s
fmls z3.s, p0/m, z19.s, z20.s
ld1rw { z20.s }, p0/z, [x10, #16]
fmls z0.s, p0/m, z16.s, z20.s
fmls z1.s, p0/m, z17.s, z20.s
fmls z2.s, p0/m, z18.s, z20.s
fmls z3.s, p0/m, z19.s, z20.s
fcvtzs z16.s, p0/m, z16.s
fcvtzs z17.s, p0/m, z17.s
fcvtzs z18.s, p0/m, z18.s
fcvtzs z19.s, p0/m, z19.s
ld1rw { z20.s }, p0/z, [x10, #20]
ld1rw { z4.s }, p0/z, [x10, #24]
ld1rw { z5.s }, p0/z, [x10, #24]
ld1rw { z6.s }, p0/z, [x10, #24]
ld1rw { z7.s }, p0/z, [x10, #24]
fmla z4.s, p0/m, z20.s, z0.s
fmla z5.s, p0/m, z20.s, z1.s
fmla z6.s, p0/m, z20.s, z2.s
fmla z7.s, p0/m, z20.s, z3.s
ld1rw { z21.s }, p0/z, [x10, #28]
fmad z4.s, p0/m, z0.s, z21.s
fmad z5.s, p0/m, z1.s, z21.s
fmad z6.s, p0/m, z2.s, z21.s
fmad z7.s, p0/m, z3.s, z21.s
ld1rw { z21.s }, p0/z, [x10, #32]
fmad z4.s, p0/m, z0.s, z21.s
fmad z5.s, p0/m, z1.s, z21.s
fmad z6.s, p0/m, z2.s, z21.s
fmad z7.s, p0/m, z3.s, z21.s
ld1rw { z21.s }, p0/z, [x10, #36]
fmad z4.s, p0/m, z0.s, z21.s
fmad z5.s, p0/m, z1.s, z21.s
fmad z6.s, p0/m, z2.s, z21.s
fmad z7.s, p0/m, z3.s, z21.s
ld1rw { z21.s }, p0/z, [x10, #40]
fmad z4.s, p0/m, z0.s, z21.s
fmad z5.s, p0/m, z1.s, z21.s
fmad z6.s, p0/m, z2.s, z21.s
fmad z7.s, p0/m, z3.s, z21.s
ld1rw { z21.s }, p0/z, [x10, #44]
fmad z4.s, p0/m, z0.s, z21.s
fmad z5.s, p0/m, z1.s, z21.s
fmad z6.s, p0/m, z2.s, z21.s
fmad z7.s, p0/m, z3.s, z21.s
ld1rw { z21.s }, p0/z, [x10, #48]
fmad z4.s, p0/m, z0.s, z21.s
fmad z5.s, p0/m, z1.s, z21.s
fmad z6.s, p0/m, z2.s, z21.s
fmad z7.s, p0/m, z3.s, z21.s
asr z24.s, z16.s, #1
asr z25.s, z17.s, #1
asr z26.s, z18.s, #1
asr z27.s, z19.s, #1
sub z16.s, z16.s, z24.s
sub z17.s, z17.s, z25.s
sub z18.s, z18.s, z26.s
sub z19.s, z19.s, z27.s
fscale z4.s, p0/m, z4.s, z24.s
fscale z5.s, p0/m, z5.s, z25.s
fscale z6.s, p0/m, z6.s, z26.s
fscale z7.s, p0/m, z7.s, z27.s
fscale z4.s, p0/m, z4.s, z16.s
fscale z5.s, p0/m, z5.s, z17.s
fscale z6.s, p0/m, z6.s, z18.s
fscale z7.s, p0/m, z7.s, z19.s
st1w { z4.s }, p0, [x12]
st1w { z5.s }, p0, [x12, #1, mul vl]
st1w { z6.s }, p0, [x12, #2, mul vl]
st1w { z7.s }, p0, [x12, #3, mul vl]
addvl x11, x11, #4
addvl x12, x12, #4
subs x8, x8, #1
b.ne .Lloop
