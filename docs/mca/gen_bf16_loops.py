#!/usr/bin/python3
"""Writes the hand-written bf16 loops of docs/tpp_brgemm.md ("bf16 with bfdot and bfmmla", SVE's own
BF16 instructions) into this folder: `docs/mca/gen_bf16_loops.py` (the .s files are committed).

llvm-mca input only (llvm-mca-19 -mtriple=aarch64 -mcpu=neoverse-v1|neoverse-v2 -mattr=+sve,+bf16),
never run: the peaks of each form (24 independent instructions) and SVE bfmmla in the shape of the
Neon kernel's packed-B loop (the instruction mix, not the data layout an SVE kernel would need).
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))

PEAKS = {
    "neon_bfmmla_peak": lambda i: f"bfmmla v{8 + i}.4s, v0.8h, v1.8h",
    "neon_bfdot_idx_peak": lambda i: f"bfdot v{8 + i}.4s, v0.8h, v1.2h[{i % 4}]",
    "sve_bfmmla_peak": lambda i: f"bfmmla z{8 + i}.s, z0.h, z1.h",
    "sve_bfdot_peak": lambda i: f"bfdot z{8 + i}.s, z0.h, z1.h",
    "sve_bfdot_idx_peak": lambda i: f"bfdot z{8 + i}.s, z0.h, z1.h[{i % 4}]",
}


def packed_loop():
    """Per 4 k: A's pairs p and p + 1 (ld1h) zipped into the two row operands, then 12 column pairs of
    the packed B (ld1rqh: a 128-bit pair replicated into each segment), two bfmmla each."""
    body = ["loop:", "ld1h {z0.h}, p0/z, [x0]", "ld1h {z1.h}, p0/z, [x1]", "zip1 z2.s, z0.s, z1.s",
            "zip2 z3.s, z0.s, z1.s"]
    for c in range(12):
        b = 4 + c % 4
        base, offset = ("x2", 16 * c) if c < 8 else ("x3", 16 * (c - 8))  # ld1rqh reaches #112
        body += [f"ld1rqh {{z{b}.h}}, p0/z, [{base}, #{offset}]", f"bfmmla z{8 + 2 * c}.s, z2.h, z{b}.h",
                 f"bfmmla z{9 + 2 * c}.s, z3.h, z{b}.h"]
    body += ["add x0, x0, x5", "add x1, x1, x5", "add x2, x2, #192", "add x3, x3, #192", "subs x4, x4, #1",
             "b.ne loop"]
    return body


def write(name, comment, lines):
    with open(os.path.join(HERE, name + ".s"), "w") as f:
        f.write(f"// {comment} (docs/mca/gen_bf16_loops.py)\n" + "\n".join(lines) + "\n")


for name, form in PEAKS.items():
    write(name, "24 independent instructions: the model's peak for the form", [form(i) for i in range(24)])
write("sve_bfmmla_packed", "SVE bfmmla in the Neon packed-B kernel's loop shape, 4 k per iteration", packed_loop())
