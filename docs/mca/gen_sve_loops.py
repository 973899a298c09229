#!/usr/bin/python3
"""Writes the hand-written SVE loops of docs/tpp_eltwise.md ("Element-wise kernels on SVE CPUs: Neon or
SVE") into this folder: `docs/mca/gen_sve_loops.py` (run from anywhere; the .s files are committed).

They are llvm-mca input only (scripts/mca_kernels.py --eltwise --kernel "asm PATH VL"): assembled
with llvm-mc-19 -mattr=+sve,+bf16, never run. Each is the steady-state loop of weft's Neon kernel
for the same op, as SVE would write it: 4 vectors per iteration (the Neon kernel's step of 4 q
registers), full vectors under p0 = ptrue, addressed with `mul vl` and advanced with `addvl`, so one
file serves every vector length.
"""
import os

V = range(4)
HERE = os.path.dirname(os.path.abspath(__file__))


def vl(i):
    return f", #{i}, mul vl]" if i else "]"


def ld_f32(base, first):
    return [f"ld1w {{ z{first + i}.s }}, p0/z, [{base}{vl(i)}" for i in V]


def st_f32(base, first):
    return [f"st1w {{ z{first + i}.s }}, p0, [{base}{vl(i)}" for i in V]


def ld_bf16(base, first):
    """bf16 -> f32: halfwords zero-extended into 32-bit lanes (ld1h { z.s }), shifted up."""
    return [f"ld1h {{ z{first + i}.s }}, p0/z, [{base}{vl(i)}" for i in V] + \
           [f"lsl z{first + i}.s, z{first + i}.s, #16" for i in V]


def round_bf16(i, t):
    """jit::to_bfloat16 of z_i (f32) into the low half of each lane (NaN quieted and kept, denormals
    to signed zero, round to nearest even); z_t scratch; z29 = 0x7f800000, z30 = 0x80000000,
    z31 = 0x7fff."""
    return [f"fcmuo p2.s, p0/z, z{i}.s, z{i}.s", f"and z{t}.d, z{i}.d, z29.d", f"cmpeq p1.s, p0/z, z{t}.s, #0",
            f"fmax z{i}.s, p0/m, z{i}.s, z{i}.s", f"and z{i}.s, p1/m, z{i}.s, z30.s", f"lsr z{t}.s, z{i}.s, #16",
            f"and z{t}.s, z{t}.s, #0x1", f"add z{t}.s, z{t}.s, z31.s", f"mov z{t}.s, p2/m, #0",
            f"add z{i}.s, z{i}.s, z{t}.s", f"lsr z{i}.s, z{i}.s, #16"]


def st_bf16(base, first, rounding):
    """rounding: "exact" (round_bf16), "bits" (the upper half kept: ops that select an input) or
    "bfcvt" (the instruction: not weft's bits)."""
    out = []
    for i in V:
        if rounding == "bits":
            out.append(f"lsr z{first + i}.s, z{first + i}.s, #16")
        elif rounding == "exact":
            out += round_bf16(first + i, 24 + i)
        else:
            out.append(f"bfcvt z{first + i}.h, p0/m, z{first + i}.s")
        out.append(f"st1h {{ z{first + i}.s }}, p0, [{base}{vl(i)}")
    return out


def loop(body, pointers, step):
    return [".Lloop:"] + body + [f"addvl {p}, {p}, #{step}" for p in pointers] + ["subs x8, x8, #1", "b.ne .Lloop"]


HEAD = """// Hand-written SVE loop for llvm-mca (docs/tpp_eltwise.md, "Element-wise kernels on SVE CPUs: Neon
// or SVE"; written by docs/mca/gen_sve_loops.py): {what}. Vector-length agnostic (mul vl, addvl):
// 4 vectors per iteration as the Neon kernel's 4 q registers. p0 = ptrue, x11 / x13 inputs, x12
// output, x10 the constants, x8 the count{extra}.
// out: {out}
"""
BF16 = "; bf16: z29 = 0x7f800000, z30 = 0x80000000, z31 = 0x7fff (set before the loop)"


def const(offset, reg):
    return f"ld1rw {{ z{reg}.s }}, p0/z, [x10" + (f", #{offset}]" if offset else "]")


def exp_steps(x, r, n, t, c=20, c2=21, offset=0):
    """exp of z_x..z_x+3 (clobbered) into z_r..: the Neon kernel's steps (clamp, n = rint(x log2 e),
    x - n ln2hi - n ln2lo, degree-7 Horner, times 2^(n/2) 2^(n - n/2)), Horner with fmad (a
    coefficient loaded once per step, not once per vector), the scaling with two fscale (the same
    bits as Neon's two fmul by powers of two built with shl + add: they are normal here). n: the
    integer exponents, t: scratch, z_c / z_c2 the shared constants."""
    b = [const(offset, c)] + [f"fmax z{x + i}.s, p0/m, z{x + i}.s, z{c}.s" for i in V]
    b += [const(offset + 4, c)] + [f"fmin z{x + i}.s, p0/m, z{x + i}.s, z{c}.s" for i in V]
    b += [const(offset + 8, c)] + [f"fmul z{n + i}.s, z{x + i}.s, z{c}.s" for i in V]
    b += [f"frintn z{n + i}.s, p0/m, z{n + i}.s" for i in V]
    b += [const(offset + 12, c)] + [f"fmls z{x + i}.s, p0/m, z{n + i}.s, z{c}.s" for i in V]
    b += [const(offset + 16, c)] + [f"fmls z{x + i}.s, p0/m, z{n + i}.s, z{c}.s" for i in V]
    b += [f"fcvtzs z{n + i}.s, p0/m, z{n + i}.s" for i in V]
    b += [const(offset + 20, c)] + [const(offset + 24, r + i) for i in V]
    b += [f"fmla z{r + i}.s, p0/m, z{c}.s, z{x + i}.s" for i in V]
    for k in range(6):
        b += [const(offset + 28 + 4 * k, c2)] + [f"fmad z{r + i}.s, p0/m, z{x + i}.s, z{c2}.s" for i in V]
    b += [f"asr z{t + i}.s, z{n + i}.s, #1" for i in V]
    b += [f"sub z{n + i}.s, z{n + i}.s, z{t + i}.s" for i in V]
    b += [f"fscale z{r + i}.s, p0/m, z{r + i}.s, z{t + i}.s" for i in V]
    b += [f"fscale z{r + i}.s, p0/m, z{r + i}.s, z{n + i}.s" for i in V]
    return b


def tanh_steps():
    """tanh of z8..z11 into z16..z19, the Neon kernel's mix: |x|; for large |x| (e - 1) / (e + 1)
    with e = exp(2|x|) (fdiv); for small |x| |x| + |x| s p(s), s = x^2, p of degree 3 (Horner
    with fmla / fmad); the sign put back on both; the choice by |x| < threshold (fcmgt, sel)."""
    b = [f"fabs z{12 + i}.s, p0/m, z{8 + i}.s" for i in V]
    b += [f"fadd z{i}.s, z{12 + i}.s, z{12 + i}.s" for i in V]
    b += exp_steps(0, 4, 16, 24)
    b += ["fmov z20.s, #1.0"]
    b += [f"fsub z{16 + i}.s, z{4 + i}.s, z20.s" for i in V]
    b += [f"fadd z{4 + i}.s, z{4 + i}.s, z20.s" for i in V]
    b += [f"fdiv z{16 + i}.s, p0/m, z{16 + i}.s, z{4 + i}.s" for i in V]
    b += [f"fmul z{i}.s, z{12 + i}.s, z{12 + i}.s" for i in V]
    b += [const(52, 20)] + [const(56, 4 + i) for i in V] + [f"fmla z{4 + i}.s, p0/m, z20.s, z{i}.s" for i in V]
    for k in range(2):
        b += [const(60 + 4 * k, 21)] + [f"fmad z{4 + i}.s, p0/m, z{i}.s, z21.s" for i in V]
    b += [f"fmul z{4 + i}.s, z{4 + i}.s, z{i}.s" for i in V]
    b += [f"fmad z{4 + i}.s, p0/m, z{12 + i}.s, z{12 + i}.s" for i in V]
    b += ["mov z22.s, #0x80000000"] + [f"and z{24 + i}.d, z{8 + i}.d, z22.d" for i in V]
    b += [f"orr z{16 + i}.d, z{16 + i}.d, z{24 + i}.d" for i in V]
    b += [f"orr z{4 + i}.d, z{4 + i}.d, z{24 + i}.d" for i in V]
    b += [const(68, 20)] + [f"fcmgt p{1 + i}.s, p0/z, z20.s, z{12 + i}.s" for i in V]
    b += [f"sel z{16 + i}.s, p{1 + i}, z{4 + i}.s, z{16 + i}.s" for i in V]
    return b


def relu(i):
    # fcmle + zeroing: a signalling NaN's bits kept, as Neon's fcmle + bic
    return [f"fcmle p1.s, p0/z, z{i}.s, #0.0", f"mov z{i}.s, p1/m, #0"]


def main():
    files = {}

    def unary(name, what, op, types="f32", rounding="exact"):
        body = (ld_f32("x11", 0) if types == "f32" else ld_bf16("x11", 0)) + [l for i in V for l in op(i)]
        body += st_f32("x12", 0) if types == "f32" else st_bf16("x12", 0, rounding)
        files[name] = HEAD.format(what=what, out=types, extra="" if types == "f32" else BF16) + \
            "\n".join(loop(body, ["x11", "x12"], 4 if types == "f32" else 2)) + "\n"

    unary("sve_copy_f32", "copy, f32", lambda i: [])
    unary("sve_relu_f32", "relu, f32 (fcmle into a predicate, mov #0 under it)", relu)
    unary("sve_square_f32", "square (x2), f32", lambda i: [f"fmul z{i}.s, z{i}.s, z{i}.s"])
    unary("sve_sqrt_f32", "sqrt, f32", lambda i: [f"fsqrt z{i}.s, p0/m, z{i}.s"])
    unary("sve_relu_bf16", "relu, bf16 in and out (widened, relu, the bits kept: lsr #16)", relu, "bf16", "bits")
    files["sve_copy_bf16"] = HEAD.format(what="copy, bf16 (the bits, 16-bit lanes)", out="bf16", extra="") + "\n".join(
        loop([f"ld1h {{ z{i}.h }}, p0/z, [x11{vl(i)}" for i in V] + [f"st1h {{ z{i}.h }}, p0, [x12{vl(i)}" for i in V],
             ["x11", "x12"], 4)) + "\n"

    for types in ("f32", "bf16"):
        body = (ld_f32("x11", 0) if types == "f32" else ld_bf16("x11", 0)) + exp_steps(0, 4, 16, 24)
        body += st_f32("x12", 4) if types == "f32" else \
            [l for i in V for l in round_bf16(4 + i, 24 + i) + [f"st1h {{ z{4 + i}.s }}, p0, [x12{vl(i)}"]]
        files[f"sve_exp_{types}"] = HEAD.format(
            what=f"exp, {types} (the Neon kernel's steps; Horner with fmad, the scaling with fscale)", out=types,
            extra="" if types == "f32" else BF16) + "\n".join(loop(body, ["x11", "x12"], 4 if types == "f32" else 2)) + "\n"

    body = ld_f32("x11", 8) + tanh_steps() + st_f32("x12", 16)
    files["sve_tanh_f32"] = HEAD.format(what="tanh, f32 (the Neon kernel's instruction mix: tanh_steps in\n// gen_sve_loops.py)",
                                        out="f32", extra="") + "\n".join(loop(body, ["x11", "x12"], 4)) + "\n"

    for op in ("add", "mul"):
        for types, rounding in (("f32", ""), ("bf16", "exact"), ("bf16", "bfcvt")):
            if op == "mul" and rounding == "bfcvt":
                continue
            load = ld_f32 if types == "f32" else ld_bf16
            body = load("x11", 0) + load("x13", 4) + [f"f{op} z{i}.s, z{i}.s, z{4 + i}.s" for i in V]
            body += st_f32("x12", 0) if types == "f32" else st_bf16("x12", 0, rounding)
            what = f"binary {op}, {types}" + {"": "", "exact": " (rounded as jit::to_bfloat16)",
                                              "bfcvt": " (rounded with bfcvt: not weft's bits, denormals flushed)"}[rounding]
            name = f"sve_{op}_{types}" + ("_bfcvt" if rounding == "bfcvt" else "")
            files[name] = HEAD.format(what=what, out=types, extra="" if types == "f32" else BF16) + \
                "\n".join(loop(body, ["x11", "x13", "x12"], 4 if types == "f32" else 2)) + "\n"

    # The predicated form: whilelt on the element indices (x9, x14-x16) against the count (x8), the
    # tail inside the loop (p1 last: b.first continues while its first lane is active); its steady
    # state against the full-vector body above.
    body = [".Lloop:"]
    body += [f"ld1w {{ z{i}.s }}, p{1 + i}/z, [x11, x{[9, 14, 15, 16][i]}, lsl #2]" for i in V]
    body += [f"ld1w {{ z{4 + i}.s }}, p{1 + i}/z, [x13, x{[9, 14, 15, 16][i]}, lsl #2]" for i in V]
    body += [f"fadd z{i}.s, z{i}.s, z{4 + i}.s" for i in V]
    body += [f"st1w {{ z{i}.s }}, p{1 + i}, [x12, x{[9, 14, 15, 16][i]}, lsl #2]" for i in V]
    body += [f"incw x{r}, all, mul #4" for r in (9, 14, 15, 16)]
    body += ["whilelt p4.s, x16, x8", "whilelt p3.s, x15, x8", "whilelt p2.s, x14, x8", "whilelt p1.s, x9, x8", "b.first .Lloop"]
    files["sve_add_f32_whilelt"] = HEAD.format(
        what="binary add, f32, predicated: 4 whilelt per iteration (element indices x9, x14-x16 against the count "
             "x8), the tail inside the loop", out="f32", extra="") + "\n".join(body) + "\n"

    for name, text in files.items():
        with open(os.path.join(HERE, name + ".s"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
