// Hand-written Neon loop for llvm-mca (docs/tpp_eltwise.md, "Element-wise kernels on SVE CPUs: Neon
// or SVE"): binary add, bf16, rounded with bfcvtn (not weft's bits: denormals flushed), the
// counterpart of sve_add_bf16_bfcvt.s. 4 vectors of 4 per iteration, as weft's Neon kernel.
// out: bf16
.Lloop:
ldr d0, [x11, #0]
shll v0.4s, v0.4h, #16
ldr d1, [x11, #8]
shll v1.4s, v1.4h, #16
ldr d2, [x11, #16]
shll v2.4s, v2.4h, #16
ldr d3, [x11, #24]
shll v3.4s, v3.4h, #16
ldr d4, [x13, #0]
shll v4.4s, v4.4h, #16
ldr d5, [x13, #8]
shll v5.4s, v5.4h, #16
ldr d6, [x13, #16]
shll v6.4s, v6.4h, #16
ldr d7, [x13, #24]
shll v7.4s, v7.4h, #16
fadd v0.4s, v0.4s, v4.4s
bfcvtn v0.4h, v0.4s
str d0, [x12, #0]
fadd v1.4s, v1.4s, v5.4s
bfcvtn v1.4h, v1.4s
str d1, [x12, #8]
fadd v2.4s, v2.4s, v6.4s
bfcvtn v2.4h, v2.4s
str d2, [x12, #16]
fadd v3.4s, v3.4s, v7.4s
bfcvtn v3.4h, v3.4s
str d3, [x12, #24]
add x11, x11, #32
add x13, x13, #32
add x12, x12, #32
subs x8, x8, #1
b.ne .Lloop
