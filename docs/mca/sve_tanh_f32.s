// Hand-written SVE loop for llvm-mca (docs/tpp_eltwise.md, "Element-wise kernels on SVE CPUs: Neon
// or SVE"; written by docs/mca/gen_sve_loops.py): tanh, f32 (the Neon kernel's instruction mix: tanh_steps in
// gen_sve_loops.py). Vector-length agnostic (mul vl, addvl):
// 4 vectors per iteration as the Neon kernel's 4 q registers. p0 = ptrue, x11 / x13 inputs, x12
// output, x10 the constants, x8 the count.
// out: f32
.Lloop:
ld1w { z8.s }, p0/z, [x11]
ld1w { z9.s }, p0/z, [x11, #1, mul vl]
ld1w { z10.s }, p0/z, [x11, #2, mul vl]
ld1w { z11.s }, p0/z, [x11, #3, mul vl]
fabs z12.s, p0/m, z8.s
fabs z13.s, p0/m, z9.s
fabs z14.s, p0/m, z10.s
fabs z15.s, p0/m, z11.s
fadd z0.s, z12.s, z12.s
fadd z1.s, z13.s, z13.s
fadd z2.s, z14.s, z14.s
fadd z3.s, z15.s, z15.s
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
fmov z20.s, #1.0
fsub z16.s, z4.s, z20.s
fsub z17.s, z5.s, z20.s
fsub z18.s, z6.s, z20.s
fsub z19.s, z7.s, z20.s
fadd z4.s, z4.s, z20.s
fadd z5.s, z5.s, z20.s
fadd z6.s, z6.s, z20.s
fadd z7.s, z7.s, z20.s
fdiv z16.s, p0/m, z16.s, z4.s
fdiv z17.s, p0/m, z17.s, z5.s
fdiv z18.s, p0/m, z18.s, z6.s
fdiv z19.s, p0/m, z19.s, z7.s
fmul z0.s, z12.s, z12.s
fmul z1.s, z13.s, z13.s
fmul z2.s, z14.s, z14.s
fmul z3.s, z15.s, z15.s
ld1rw { z20.s }, p0/z, [x10, #52]
ld1rw { z4.s }, p0/z, [x10, #56]
ld1rw { z5.s }, p0/z, [x10, #56]
ld1rw { z6.s }, p0/z, [x10, #56]
ld1rw { z7.s }, p0/z, [x10, #56]
fmla z4.s, p0/m, z20.s, z0.s
fmla z5.s, p0/m, z20.s, z1.s
fmla z6.s, p0/m, z20.s, z2.s
fmla z7.s, p0/m, z20.s, z3.s
ld1rw { z21.s }, p0/z, [x10, #60]
fmad z4.s, p0/m, z0.s, z21.s
fmad z5.s, p0/m, z1.s, z21.s
fmad z6.s, p0/m, z2.s, z21.s
fmad z7.s, p0/m, z3.s, z21.s
ld1rw { z21.s }, p0/z, [x10, #64]
fmad z4.s, p0/m, z0.s, z21.s
fmad z5.s, p0/m, z1.s, z21.s
fmad z6.s, p0/m, z2.s, z21.s
fmad z7.s, p0/m, z3.s, z21.s
fmul z4.s, z4.s, z0.s
fmul z5.s, z5.s, z1.s
fmul z6.s, z6.s, z2.s
fmul z7.s, z7.s, z3.s
fmad z4.s, p0/m, z12.s, z12.s
fmad z5.s, p0/m, z13.s, z13.s
fmad z6.s, p0/m, z14.s, z14.s
fmad z7.s, p0/m, z15.s, z15.s
mov z22.s, #0x80000000
and z24.d, z8.d, z22.d
and z25.d, z9.d, z22.d
and z26.d, z10.d, z22.d
and z27.d, z11.d, z22.d
orr z16.d, z16.d, z24.d
orr z17.d, z17.d, z25.d
orr z18.d, z18.d, z26.d
orr z19.d, z19.d, z27.d
orr z4.d, z4.d, z24.d
orr z5.d, z5.d, z25.d
orr z6.d, z6.d, z26.d
orr z7.d, z7.d, z27.d
ld1rw { z20.s }, p0/z, [x10, #68]
fcmgt p1.s, p0/z, z20.s, z12.s
fcmgt p2.s, p0/z, z20.s, z13.s
fcmgt p3.s, p0/z, z20.s, z14.s
fcmgt p4.s, p0/z, z20.s, z15.s
sel z16.s, p1, z4.s, z16.s
sel z17.s, p2, z5.s, z17.s
sel z18.s, p3, z6.s, z18.s
sel z19.s, p4, z7.s, z19.s
st1w { z16.s }, p0, [x12]
st1w { z17.s }, p0, [x12, #1, mul vl]
st1w { z18.s }, p0, [x12, #2, mul vl]
st1w { z19.s }, p0, [x12, #3, mul vl]
addvl x11, x11, #4
addvl x12, x12, #4
subs x8, x8, #1
b.ne .Lloop
