// SVE bfmmla in the Neon packed-B kernel's loop shape, 4 k per iteration (docs/mca/gen_bf16_loops.py)
loop:
ld1h {z0.h}, p0/z, [x0]
ld1h {z1.h}, p0/z, [x1]
zip1 z2.s, z0.s, z1.s
zip2 z3.s, z0.s, z1.s
ld1rqh {z4.h}, p0/z, [x2, #0]
bfmmla z8.s, z2.h, z4.h
bfmmla z9.s, z3.h, z4.h
ld1rqh {z5.h}, p0/z, [x2, #16]
bfmmla z10.s, z2.h, z5.h
bfmmla z11.s, z3.h, z5.h
ld1rqh {z6.h}, p0/z, [x2, #32]
bfmmla z12.s, z2.h, z6.h
bfmmla z13.s, z3.h, z6.h
ld1rqh {z7.h}, p0/z, [x2, #48]
bfmmla z14.s, z2.h, z7.h
bfmmla z15.s, z3.h, z7.h
ld1rqh {z4.h}, p0/z, [x2, #64]
bfmmla z16.s, z2.h, z4.h
bfmmla z17.s, z3.h, z4.h
ld1rqh {z5.h}, p0/z, [x2, #80]
bfmmla z18.s, z2.h, z5.h
bfmmla z19.s, z3.h, z5.h
ld1rqh {z6.h}, p0/z, [x2, #96]
bfmmla z20.s, z2.h, z6.h
bfmmla z21.s, z3.h, z6.h
ld1rqh {z7.h}, p0/z, [x2, #112]
bfmmla z22.s, z2.h, z7.h
bfmmla z23.s, z3.h, z7.h
ld1rqh {z4.h}, p0/z, [x3, #0]
bfmmla z24.s, z2.h, z4.h
bfmmla z25.s, z3.h, z4.h
ld1rqh {z5.h}, p0/z, [x3, #16]
bfmmla z26.s, z2.h, z5.h
bfmmla z27.s, z3.h, z5.h
ld1rqh {z6.h}, p0/z, [x3, #32]
bfmmla z28.s, z2.h, z6.h
bfmmla z29.s, z3.h, z6.h
ld1rqh {z7.h}, p0/z, [x3, #48]
bfmmla z30.s, z2.h, z7.h
bfmmla z31.s, z3.h, z7.h
add x0, x0, x5
add x1, x1, x5
add x2, x2, #192
add x3, x3, #192
subs x4, x4, #1
b.ne loop
