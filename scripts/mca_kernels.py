#!/usr/bin/python3
"""Predicts the speed of weft's generated kernels with llvm-mca's models of real cores.

For each kernel: weft-kernel-code writes its machine code, binutils' objdump disassembles it, the
hottest innermost loop (the backward branch whose body holds the most FMAs and no other loop) is
handed to llvm-mca, and the FMAs per cycle it predicts are compared with the peak the same model
predicts for a block of independent FMAs of the same form. The share is the kernel's steady state:
C's loads and stores, the batch loop and the call are outside it (docs/tpp_brgemm.md, "Predicted
speed on AArch64").

  scripts/mca_kernels.py --kernel-code build/tpp/weft-kernel-code --cpus znver3,znver4 \\
      --kernel "avx2 brgemm 64 64 64" --kernel "avx512 brgemm 32 32 32"
  scripts/mca_kernels.py --arch aarch64 --kernel-code "qemu-aarch64 -L /usr/aarch64-linux-gnu \\
      build-aarch64/tpp/weft-kernel-code" --cpus neoverse-v1,neoverse-v2,apple-m1 --kernel "neon brgemm 64 64 64"

With --eltwise (element-wise kernels: unary, binary), the loop is the innermost one with the most
instructions, and its speed is compared with three bounds the same model gives: the loop's own
resource bound (llvm-mca's "Block RThroughput": the busiest pipe's cycles with perfect scheduling),
the loop without its data dependencies (the same instructions, each result in a fresh register and
each source a register nothing writes, simulated: what the pipes allow when latency does not
matter), and the load/store pipes' peak (a block of the loop's loads and stores alone,
independent). Block RThroughput can be below what any schedule reaches: it divides a group of pipes'
load by the group's size without the uops that only one pipe of the group takes (on the Neoverse N2
model llvm-mca 16 uses for neoverse-v1 and neoverse-v2: frintn, fcvtzs, fdiv on V0, vector shifts on
V1, which occupy the same two pipes as the rest). The dependency-free simulation counts them; where
the two differ, it is the bound to compare with.

  scripts/mca_kernels.py --arch aarch64 --eltwise --kernel-code ... --cpus neoverse-v1 \
      --kernel "neon unary exp 64 64" --kernel "neon binary add 64 64"

Each element-wise row also gives the elements one iteration stores (its stores' bytes over the
output element's: the kernel's --types, "bf16" and "bf16:f32" as given) and elements per cycle,
the figure that compares kernels of different vector lengths. A kernel "asm PATH VL" is a loop
written by hand in assembler (a label, the body, the backward branch; docs/mca/ has the SVE loops
of docs/tpp_eltwise.md) for a vector length of VL bits: SVE's stores count VL bits per vector, and
a line "// out: bf16" (or f64) in the file names the output type (default f32). llvm-mca runs
with -mattr=+sve,+bf16 for every AArch64 kernel:

  WEFT_LLVM_MCA=llvm-mca-19 scripts/mca_kernels.py --arch aarch64 --eltwise --kernel-code ... \
      --cpus neoverse-v1 --kernel "neon unary exp 64 64" --kernel "asm docs/mca/sve_exp_f32.s 256"

--flops GHZ (aarch64) compares kernels of different instructions (fmla on widened bf16, bfdot,
bfmmla) by flops: a multiply-add is 2 flops, a bfmmla 32 (2x2 results of 4 products), a bfdot 4 per
fp32 lane; the shares are of the model's flops per cycle for independent bfmmla (4s) and fmla (4s).

A kernel "file PATH" is code a test wrote (e.g. tests/tpp/arch/aarch64/neon_brgemm_mmla_test.cpp with
WEFT_BF16_CODE_DUMP=DIR: the bf16 BRGEMM on bfdot, on bfmmla with the plan's tiling and on bfmmla in
registers, for the shapes of docs/tpp_brgemm.md's "Which path" table); SVE code goes to
llvm-mca with -mattr=+sve. "file PATH N" analyses its N-th innermost loop with FMAs in code order instead of the hottest (the
bfmmla kernel's packed-B path comes first, its in-register path after it):

  WEFT_LLVM_MCA=llvm-mca-19 scripts/mca_kernels.py --arch aarch64 --kernel-code ... \
      --cpus neoverse-v1,neoverse-v2 --flops 2.6 --kernel "neon brgemm 64 64 64 --types bf16:f32" \
      --kernel "file /tmp/mmla64.bin 1" --kernel "file /tmp/mmla64.bin"

WEFT_LLVM_MCA names another llvm-mca (llvm-mca-19: LLVM 19 models the Neoverse V1 and V2 cores
themselves, where LLVM 16 gives both names its Neoverse N2 model).

Prints a Markdown table. Needs llvm-mca-16 (package llvm-16) and objdump (binutils; for AArch64
code binutils-aarch64-linux-gnu).
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

MCA = os.environ.get("WEFT_LLVM_MCA", "llvm-mca-16")
ITERATIONS = 400

ARCHES = {
    "x64": {
        "objdump": ["objdump", "-D", "-b", "binary", "-m", "i386:x86-64"],
        "triple": "x86_64",
        "mattr": [],
        "comment": "#",
        "fma": re.compile(r"^(vfn?m(add|sub)\d+[ps][sd]|vdpbf16ps)\b"),
        "branch": re.compile(r"^(j[a-z]+|loop[a-z]*)$"),
    },
    "aarch64": {
        "objdump": ["aarch64-linux-gnu-objdump", "-D", "-b", "binary", "-m", "aarch64"],
        "triple": "aarch64",
        "mattr": ["-mattr=+sve,+bf16"],
        "comment": "//",
        "fma": re.compile(r"^(fmla|fmls|bfdot|bfmmla|bfmlal[bt])\b"),
        "branch": re.compile(r"^(b\.[a-z]+|b|cbn?z|tbn?z)$"),
    },
}

TARGET = re.compile(r"(0x)?([0-9a-f]+)(\s+<[^>]*>)?\s*$")


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"mca_kernels: {' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}")
    return r.stdout


def disassemble(arch, code_file):
    """[(address, mnemonic, operands)] of the code, comments stripped."""
    out = []
    for line in run(ARCHES[arch]["objdump"] + [code_file]).splitlines():
        # "  addr:<TAB>bytes<TAB>instruction"; a long instruction's last bytes continue on a line
        # without the instruction.
        fields = line.split("\t")
        if len(fields) < 3 or not re.fullmatch(r"\s*[0-9a-f]+:", fields[0]):
            continue
        text = "\t".join(fields[2:]).split(ARCHES[arch]["comment"])[0].strip()
        parts = text.split(None, 1)
        if not parts:
            continue
        out.append((int(fields[0].strip()[:-1], 16), parts[0], parts[1].strip() if len(parts) > 1 else ""))
    return out


def loops(arch, code):
    """(first index, branch index) of every backward branch's body."""
    found = []
    index_of = {addr: i for i, (addr, _, _) in enumerate(code)}
    for i, (addr, mnemonic, operands) in enumerate(code):
        if not ARCHES[arch]["branch"].match(mnemonic):
            continue
        m = TARGET.search(operands)
        if not m:
            continue
        target = int(m.group(2), 16)
        if target <= addr and target in index_of:
            found.append((index_of[target], i))
    return found


def innermost_loops(arch, code):
    spans = loops(arch, code)
    return [s for s in spans if not any(o != s and s[0] <= o[0] and o[1] <= s[1] for o in spans)]


def hottest_loop(arch, code):
    fma = ARCHES[arch]["fma"]
    innermost = innermost_loops(arch, code)
    if not innermost:
        return None
    return max(innermost, key=lambda s: sum(1 for _, mn, _ in code[s[0]:s[1] + 1] if fma.match(mn)))


# An SVE operand (z register or predicate): its FMA form is an SVE one.
SVE_REGISTER = re.compile(r"\b(z\d+\.[bhsdq]|p\d+/[mz])\b")


class Unsupported(Exception):
    """The model has no instruction of the ISA (llvm-mca: "found an unsupported instruction")."""


def mca_figure(arch, cpu, body, pattern):
    """The number `pattern` captures in llvm-mca's report for `body` (assembly lines) on `cpu`."""
    r = subprocess.run([MCA, f"-mtriple={ARCHES[arch]['triple']}", f"-mcpu={cpu}", f"-iterations={ITERATIONS}"]
                       + ARCHES[arch]["mattr"],
                       input="\n".join(body) + "\n", capture_output=True, text=True)
    if r.returncode != 0 and "unsupported instruction" in r.stderr:
        raise Unsupported(cpu)
    m = re.search(pattern, r.stdout)
    if r.returncode != 0 or not m:
        sys.exit(f"mca_kernels: llvm-mca failed for {cpu} ({r.returncode}):\n{r.stderr[:2000]}")
    return float(m.group(1))


def mca_cycles(arch, cpu, body):
    """Cycles per iteration llvm-mca predicts for `body` on `cpu`."""
    return mca_figure(arch, cpu, body, r"Total Cycles:\s+(\d+)") / ITERATIONS


def mca_block_rthroughput(arch, cpu, body):
    """The model's resource bound for one iteration of `body` (llvm-mca "Block RThroughput")."""
    return mca_figure(arch, cpu, body, r"Block RThroughput:\s+([0-9.]+)")


def memory_ops(arch, body):
    """(vector loads, vector stores) among the loop's instructions (constant loads included)."""
    loads = stores = 0
    for line in body:
        mnemonic, operands = (line.split(None, 1) + [""])[:2]
        if arch == "aarch64":
            if re.match(r"^ld1", mnemonic) or \
                    re.match(r"^(ldr|ldur|ldp)$", mnemonic) and re.match(r"\s*[qdshbz]\d", operands):
                loads += 1
            elif re.match(r"^(stnp|st1)", mnemonic) or \
                    re.match(r"^(str|stur|stp)$", mnemonic) and re.match(r"\s*[qdshbz]\d", operands):
                stores += 1
        elif "(%" in operands:
            # AT&T: the destination is the last operand.
            if re.search(r"\([^)]*\)\s*$", operands) and not mnemonic.startswith("prefetch"):
                stores += 1
            else:
                loads += 1
    return loads, stores


def memory_peak_cycles(arch, cpu, loads, stores, sve=False):
    """The model's cycles for `loads` vector loads and `stores` vector stores, all independent
    (SVE's ld1w / st1w where the loop is SVE's)."""
    if arch == "aarch64" and sve:
        block = [f"ld1w {{ z{i % 24}.s }}, p0/z, [x1, #{i % 8}, mul vl]" for i in range(loads)]
        block += [f"st1w {{ z{24 + i % 8}.s }}, p0, [x2, #{i % 8}, mul vl]" for i in range(stores)]
    elif arch == "aarch64":
        block = [f"ldr q{i % 24}, [x1, #{16 * i}]" for i in range(loads)]
        block += [f"str q{24 + i % 8}, [x2, #{16 * i}]" for i in range(stores)]
    else:
        block = [f"vmovups {32 * i}(%rsi), %ymm{i % 12}" for i in range(loads)]
        block += [f"vmovups %ymm{12 + i % 4}, {32 * i}(%rdx)" for i in range(stores)]
    return mca_cycles(arch, cpu, block) if block else 0.0


# Vector registers: aarch64 v/q/d/s/h/b n (a lane or an arrangement may follow); x86 %xmm/%ymm/%zmm n.
VECTOR_REGISTER = {
    "aarch64": re.compile(r"\b([vqdshbz])(\d+)\b"),
    "x64": re.compile(r"%([xyz]mm)(\d+)\b"),
}


def without_dependencies(arch, body):
    """`body` with its vector data dependencies removed: each instruction's result goes to the next
    register of a rotation, every vector source is one of two registers no instruction writes (an
    instruction that also reads its result, as fmla, depends only on the write one rotation earlier).
    Stores only read. General registers (addresses, the loop counter) are left as they are."""
    pattern = VECTOR_REGISTER[arch]
    out = []
    fresh = 0
    for line in body:
        mnemonic, operands = (line.split(None, 1) + [""])[:2]
        if line.endswith(":") or not pattern.search(operands):
            out.append(line)
            continue
        registers = 32 if arch == "aarch64" or "%zmm" in operands else 16
        sources = [registers - 2, registers - 1]
        if arch == "aarch64":
            # Only reads vector registers: a store, or a result in a general register (fmov w, s).
            first = pattern.match(operands.lstrip("{ "))
            is_store = re.match(r"^(str|stur|stp|stnp|st1|st2|st3|st4)", mnemonic) is not None or first is None
            # The destination: the first register, or the whole first {...} list (ld1, ld4r).
            m = re.match(r"\s*\{([^}]*)\}", operands)
            dest_end = m.end() if m else pattern.search(operands).end()
        else:
            last = operands.rsplit(",", 1)[-1]
            is_store = not pattern.search(last) or "(" in last
            dest_end = None
        count = [0]
        # SVE's destructive forms (fmax zd, pg/m, zd, zm; and zd, zd, #imm) must name the
        # destination again: that source becomes the renamed destination.
        tied = pattern.search(operands).group(0) if arch == "aarch64" and not is_store else None

        def rename(match, is_destination):
            nonlocal fresh
            if is_destination:
                fresh = (fresh + 1) % (registers - 2)
                return f"{'%' if arch == 'x64' else ''}{match.group(1)}{fresh}"
            if match.group(1) == "z" and match.group(0) == tied:
                return f"z{fresh}"
            count[0] += 1
            return f"{'%' if arch == 'x64' else ''}{match.group(1)}{sources[count[0] % 2]}"

        if is_store:
            renamed = pattern.sub(lambda m: rename(m, False), operands)
        elif arch == "aarch64":
            renamed = (pattern.sub(lambda m: rename(m, True), operands[:dest_end]) +
                       pattern.sub(lambda m: rename(m, False), operands[dest_end:]))
        else:
            head, tail = operands.rsplit(",", 1) if "," in operands else ("", operands)
            renamed = ((pattern.sub(lambda m: rename(m, False), head) + ",") if head else "") + \
                pattern.sub(lambda m: rename(m, True), tail)
        out.append(f"{mnemonic} {renamed}")
    return out


STORE_BYTES = {"q": 16, "d": 8, "s": 4, "h": 2, "b": 1}
SVE_ELEMENT_BYTES = {"b": 1, "h": 2, "w": 4, "d": 8}


def stored_bytes(body, vl_bits):
    """Bytes the AArch64 loop body stores per iteration; an SVE vector is vl_bits wide."""
    total = 0
    for line in body:
        mnemonic, operands = (line.split(None, 1) + [""])[:2]
        if re.match(r"^(str|stur|stp|stnp)$", mnemonic):
            m = re.match(r"\s*([qdshb])\d", operands)
            if m:
                total += STORE_BYTES[m.group(1)] * (1 if mnemonic in ("str", "stur") else 2)
        elif re.match(r"^st1[bhwd]$", mnemonic):
            # st1h { z0.s }: one halfword per 32-bit element, VL/32 of them.
            lane = re.search(r"z\d+\.([bhsd])", operands).group(1)
            total += vl_bits // 8 * SVE_ELEMENT_BYTES[mnemonic[-1]] // {"b": 1, "h": 2, "s": 4, "d": 8}[lane]
    return total


def biggest_loop(arch, code):
    spans = loops(arch, code)
    innermost = [s for s in spans if not any(o != s and s[0] <= o[0] and o[1] <= s[1] for o in spans)]
    return max(innermost, key=lambda s: s[1] - s[0]) if innermost else None


def as_mca_input(arch, code, span):
    """The loop body for llvm-mca: the branch goes to a label instead of an address."""
    lines = [".Lloop:"]
    for addr, mnemonic, operands in code[span[0]:span[1] + 1]:
        if ARCHES[arch]["branch"].match(mnemonic):
            operands = TARGET.sub(".Lloop", operands)
        lines.append(f"{mnemonic} {operands}".strip())
    return lines


def peak_fma_per_cycle(arch, cpu, fma_lines):
    """The model's FMAs per cycle for blocks of 24 independent FMAs of each form the kernel uses."""
    forms = set()
    for line in fma_lines:
        mnemonic, operands = (line.split(None, 1) + [""])[:2]
        if arch == "x64":
            reg = re.search(r"%([xyz]mm)", operands)
            forms.add((mnemonic, reg.group(1) if reg else "ymm"))
        elif SVE_REGISTER.search(operands):
            lane = re.search(r"z\d+\.([hsd])", operands)
            forms.add((mnemonic, "sve." + (lane.group(1) if lane else "s"), "[" in operands))
        else:
            arrangement = re.search(r"v\d+\.(\d+[sdhb])", operands)
            by_element = "[" in operands
            forms.add((mnemonic, arrangement.group(1) if arrangement else "4s", by_element))
    best = 0.0
    for form in forms:
        if arch == "x64":
            mnemonic, reg = form
            count = 24 if reg == "zmm" else 12
            block = [f"{mnemonic} %{reg}{30 if reg == 'zmm' else 14}, %{reg}{31 if reg == 'zmm' else 15}, %{reg}{i}"
                     for i in range(count)]
        elif form[1].startswith("sve."):
            # SVE: predicated (d += n * m under p0) or by element (m one of z0..z7).
            mnemonic, lane, by_element = form[0], form[1][4:], form[2]
            count = 24
            if by_element:
                block = [f"{mnemonic} z{8 + i}.{lane}, z30.{lane}, z7.{lane}[1]" for i in range(count)]
            else:
                block = [f"{mnemonic} z{i}.{lane}, p0/m, z30.{lane}, z31.{lane}" for i in range(count)]
        else:
            mnemonic, arrangement, by_element = form
            lane = arrangement[-1]
            count = 24
            source = f"v31.{lane}[1]" if by_element else f"v31.{arrangement}"
            first = f"v30.{arrangement}"
            if mnemonic.startswith("bf"):  # bf16 sources: 8h (4h for a 2s result), m by element .2h / .h
                halves = "8h" if arrangement == "4s" else "4h"
                first = f"v30.{halves}"
                index = "2h[1]" if mnemonic == "bfdot" else "h[1]"
                source = f"v31.{index}" if by_element else f"v31.{halves}"
            block = [f"{mnemonic} v{i}.{arrangement}, {first}, {source}" for i in range(count)]
        best = max(best, count / mca_cycles(arch, cpu, block))
    return best


def flops(line):
    """Floating-point operations of one AArch64 FMA-like instruction (a multiply-add is 2)."""
    mnemonic, operands = (line.split(None, 1) + [""])[:2]
    arrangement = re.search(r"v\d+\.(\d+)([sdh])", operands)
    lanes = int(arrangement.group(1)) if arrangement else 4
    if mnemonic == "bfmmla":
        return 2 * 16  # 2x2 results of 4 products each
    if mnemonic == "bfdot":
        return 2 * 2 * lanes  # each fp32 lane: a pair of products
    return 2 * lanes  # fmla / fmls / bfmlal[bt]: one product per result lane


def model_peak_flops(arch, cpu, mnemonic_form):
    """The model's flops per cycle for a block of independent instructions of one form."""
    line = {"bfmmla": "bfmmla v0.4s, v30.8h, v31.8h", "fmla": "fmla v0.4s, v30.4s, v31.s[1]"}[mnemonic_form]
    return peak_fma_per_cycle(arch, cpu, [line]) * flops(line)


def kernel_loop(arch, kernel_code, kernel, pick_loop):
    """(weft-kernel-code's summary, the llvm-mca input of the loop pick_loop(arch, code) chooses).
    A kernel "file PATH" is machine code already written to PATH (a test's, for an emitter option
    no ISA selects yet), not weft-kernel-code's."""
    isa, kind, *args = kernel.split()
    if isa == "file":
        code = disassemble(arch, kind)
        if args:  # "file PATH N": the N-th (from 1) innermost loop with FMAs, in code order
            fma = ARCHES[arch]["fma"]
            spans = [s for s in innermost_loops(arch, code) if any(fma.match(mn) for _, mn, _ in code[s[0]:s[1] + 1])]
            return f"code of {kind}, loop {args[0]}", as_mca_input(arch, code, spans[int(args[0]) - 1])
        return f"code of {kind}", as_mca_input(arch, *picked(arch, code, pick_loop, kernel))
    if not kernel_code:
        sys.exit(f"mca_kernels: {kernel}: needs --kernel-code")
    with tempfile.TemporaryDirectory() as tmp:
        code_file = os.path.join(tmp, "kernel.bin")
        summary = run(shlex.split(kernel_code) + ["--isa", isa, "--out", code_file, kind] + args).strip()
        code = disassemble(arch, code_file)
    return summary, as_mca_input(arch, *picked(arch, code, pick_loop, kernel))


def picked(arch, code, pick_loop, kernel):
    """(code, the span pick_loop chooses in it)."""
    span = pick_loop(arch, code)
    if span is None:
        sys.exit(f"mca_kernels: {kernel}: no loop found in the code")
    return code, span


def analyse(arch, kernel_code, kernel, cpus):
    summary, body = kernel_loop(arch, kernel_code, kernel, hottest_loop)
    fmas = [line for line in body if ARCHES[arch]["fma"].match(line)]
    rows = []
    for cpu in cpus:
        try:
            cycles = mca_cycles(arch, cpu, body)
        except Unsupported:
            rows.append((kernel, cpu, len(body) - 1, len(fmas), None, None, None, None))
            continue
        peak = peak_fma_per_cycle(arch, cpu, fmas) if fmas else 0.0
        achieved = len(fmas) / cycles
        share = achieved / peak if peak else 0.0
        rows.append((kernel, cpu, len(body) - 1, len(fmas), cycles, achieved, peak, share,
                     sum(flops(f) for f in fmas) / cycles if arch == "aarch64" else None))
    return summary, rows


OUT_BYTES = {"f32": 4, "bf16": 2, "f64": 8}


def asm_loop(path):
    """The loop of a hand-written assembler file: its lines without comments and blank lines."""
    with open(path) as f:
        text = f.read()
    out = re.search(r"//\s*out:\s*(\w+)", text)
    lines = [line.split("//")[0].strip() for line in text.splitlines()]
    return [line for line in lines if line], OUT_BYTES[out.group(1) if out else "f32"]


def analyse_eltwise(arch, kernel_code, kernel, cpus):
    words = kernel.split()
    if words[0] == "asm":  # "asm PATH VL"
        body, out_bytes = asm_loop(words[1])
        summary, vl_bits = f"assembler {words[1]} at {words[2]} bits", int(words[2])
    else:
        summary, body = kernel_loop(arch, kernel_code, kernel, biggest_loop)
        types = words[words.index("--types") + 1] if "--types" in words else "f32"
        # A generated kernel of an SVE ISA (sve256, sve512_bf16...) runs at that vector length.
        isa_vl = re.match(r"sve(\d+)", words[0])
        out_bytes, vl_bits = OUT_BYTES[types.split(":")[-1]], int(isa_vl.group(1)) if isa_vl else 128
    elements = stored_bytes(body, vl_bits) / out_bytes if arch == "aarch64" else 0
    sve = any(re.search(r"\bz\d+\.", line) for line in body)
    loads, stores = memory_ops(arch, body[1:])
    rows = []
    for cpu in cpus:
        try:
            cycles = mca_cycles(arch, cpu, body)
            bound = mca_block_rthroughput(arch, cpu, body)
            free = mca_cycles(arch, cpu, without_dependencies(arch, body))
            memory = memory_peak_cycles(arch, cpu, loads, stores, sve)
        except Unsupported:
            rows.append((kernel, cpu, len(body) - 1, loads, stores, None, None, None, None, elements))
            continue
        rows.append((kernel, cpu, len(body) - 1, loads, stores, cycles, bound, free, memory, elements))
    return summary, rows


def main_eltwise(args, cpus):
    print("| kernel | -mcpu | loop instructions | loads + stores | cycles / iteration | resource bound | "
          "share of bound | dependency-free cycles | share of them | load/store peak cycles | share of load/store peak | "
          "elements / iteration | elements / cycle |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for kernel in args.kernel:
        summary, rows = analyse_eltwise(args.arch, args.kernel_code, kernel, cpus)
        print(f"<!-- {summary} -->", file=sys.stderr)
        for kernel_name, cpu, n, loads, stores, cycles, bound, free, memory, elements in rows:
            if cycles is None:
                print(f"| {kernel_name} | {cpu} | {n} | {loads} + {stores} | the model lacks the ISA | | | | | | | | |")
                continue
            print(f"| {kernel_name} | {cpu} | {n} | {loads} + {stores} | {cycles:.2f} | {bound:.2f} | "
                  f"{100 * bound / cycles:.1f} % | {free:.2f} | {100 * free / cycles:.1f} % | {memory:.2f} | "
                  f"{100 * memory / cycles:.1f} % | {elements:g} | {elements / cycles:.2f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", choices=sorted(ARCHES), default="x64")
    parser.add_argument("--kernel-code", default="", help="the weft-kernel-code command (with an emulator); not "
                        "needed when every --kernel is a \"file PATH\" or an \"asm PATH VL\"")
    parser.add_argument("--cpus", required=True, help="llvm-mca -mcpu names, comma-separated")
    parser.add_argument("--kernel", action="append", required=True,
                        help='"ISA KIND ARGS", e.g. "avx2 brgemm 64 64 64" or "neon unary relu 64 64"')
    parser.add_argument("--flops", type=float, metavar="GHZ",
                        help="aarch64: add the loop's flops per cycle, its share of the model's BFMMLA and fp32 "
                             "FMA peaks (flops per cycle of independent bfmmla / fmla), and GFLOPS at GHZ")
    parser.add_argument("--eltwise", action="store_true",
                        help="element-wise kernels: compare with the resource and load/store bounds")
    args = parser.parse_args()
    cpus = args.cpus.split(",")
    if args.eltwise:
        main_eltwise(args, cpus)
        return
    extra = args.flops is not None
    print("| kernel | -mcpu | loop instructions | FMAs | cycles / iteration | FMAs / cycle | model's peak | share of peak |"
          + (f" flops / cycle | share of the BFMMLA peak | share of the fp32 FMA peak | GFLOPS at {args.flops} GHz |"
             if extra else ""))
    print("|---|---|---|---|---|---|---|---|" + ("---|---|---|---|" if extra else ""))
    for kernel in args.kernel:
        summary, rows = analyse(args.arch, args.kernel_code, kernel, cpus)
        print(f"<!-- {summary} -->", file=sys.stderr)
        for kernel_name, cpu, n, fmas, cycles, achieved, peak, share, rate in rows:
            if cycles is None:
                print(f"| {kernel_name} | {cpu} | {n} | {fmas} | the model lacks the ISA | | | |" + (" | | | |" if extra else ""))
                continue
            line = (f"| {kernel_name} | {cpu} | {n} | {fmas} | {cycles:.2f} | {achieved:.2f} | {peak:.2f} | "
                    f"{100 * share:.1f} % |")
            if extra:
                mmla, fma = model_peak_flops(args.arch, cpu, "bfmmla"), model_peak_flops(args.arch, cpu, "fmla")
                line += (f" {rate:.1f} | {100 * rate / mmla:.1f} % | {100 * rate / fma:.1f} % | "
                         f"{rate * args.flops:.1f} |")
            print(line)


if __name__ == "__main__":
    main()
