#!/usr/bin/python3
"""The weft Python package's speed (a script, not a test):

1. the per-call overhead of weft.tpp.brgemm on one 32x32x32 fp32 block: the median time of a
   Python call minus the median time of the C++ kernel alone (_weft.brgemm_kernel_seconds, the same
   kernel called in a C++ loop), each per call over batches of calls, the batches interleaved;
2. weft.einsum (and weft.einsum_tree) next to numpy.einsum(optimize=True) and torch.einsum, in one
   process, the calls interleaved round by round, on the seed's einsum trees and a matrix chain.
   torch.einsum (1.13) contracts its operands left to right, so it is given the tree's nodes one
   by one (a torch.einsum per node), as weft is; on the matrix chain it gets the plain expression
   (left to right, as its users would call it); NumPy finds its own path.

    PYTHONPATH=build/python /usr/bin/python3 bench/python/bench_python.py [--rounds 5] [--quick]

--quick divides every einsum dimension by 2 (a smoke run). --threads (default: every core) is given
to weft.set_num_threads and torch.set_num_threads (importing torch sets the calling thread's
OpenMP count to PyTorch's own default); OpenBLAS keeps its default, all cores.
"""
import argparse
import os
import statistics
import subprocess
import time

import numpy as np

import weft
from weft import _weft

try:
    import torch
except ImportError:  # the torch column is left out
    torch = None

SEED_TREES = [
    ("[[8,4],[7,3,8]->[7,3,4]],[[[2,6,7],[1,5,6]->[1,2,5,7]],[0,5]->[0,1,2,7]]->[0,1,2,3,4]",
     [100, 72, 128, 128, 3, 71, 305, 32, 3]),
    ("[1,4,7,8],[[0,4,5,6],[[2,5,7,9],[3,6,8,9]->[2,5,7,3,6,8]]->[0,4,2,7,3,8]]->[0,1,2,3]",
     [60, 60, 20, 20, 8, 8, 8, 8, 8, 8]),
    ("[[2,7,3],[3,8,4]->[2,7,8,4]],[[4,9,0],[[0,5,1],[1,6,2]->[0,5,6,2]]->[4,9,5,6,2]]->[5,6,7,8,9]",
     [40, 40, 40, 40, 40, 25, 25, 25, 25, 25]),
]
# A chain whose cheap order (middle first) differs from left to right.
MATRIX_CHAIN = ("ab,bc,cd,de->ae", {"a": 1024, "b": 64, "c": 1024, "d": 64, "e": 1024})


def cpu_name():
    for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return weft.cpu()["model"]


def brgemm_overhead(batches=41, calls=2000):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((1, 32, 32)).astype(np.float32), rng.standard_normal((1, 32, 32)).astype(np.float32)
    c = np.zeros((32, 32), np.float32)
    brgemm = weft.tpp.brgemm
    brgemm(a, b, c, beta=1)  # generates the kernel
    python_times, kernel_times = [], []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(calls):
            brgemm(a, b, c, 1)
        python_times.append((time.perf_counter() - start) / calls)
        kernel_times.append(_weft.brgemm_kernel_seconds(a, b, c, 1, calls))
    python, kernel = statistics.median(python_times), statistics.median(kernel_times)
    return python, kernel


def tree_signature(tree):
    return _weft.einsum_tree_signature(tree)


def letters(ids):
    return "".join(chr(ord("a") + i) for i in ids)


def run_torch_tree(tree, operands):
    """Evaluates the tree with one torch.einsum per contraction, in the tree's post order."""
    def parse(text, position):
        # An operand at text[position] == '[': a leaf '[ids]' or a subtree '[expression]'.
        if text[position + 1] == "[":  # a subtree: '[' subtree ']'
            value, ids, position = parse_expression(text, position + 1)
            assert text[position] == "]"
            return value, ids, position + 1
        end = text.index("]", position)
        ids = [int(i) for i in text[position + 1:end].split(",")]
        return next(leaves), ids, end + 1

    def parse_expression(text, position):
        left, left_ids, position = parse(text, position)
        if text.startswith("->", position):
            end = text.index("]", position)
            ids = [int(i) for i in text[position + 3:end].split(",")]
            return torch.einsum(f"{letters(left_ids)}->{letters(ids)}", left), ids, end + 1
        assert text[position] == ","
        right, right_ids, position = parse(text, position + 1)
        assert text.startswith("->", position)
        end = text.index("]", position)
        ids = [int(i) for i in text[position + 3:end].split(",")]
        return torch.einsum(f"{letters(left_ids)},{letters(right_ids)}->{letters(ids)}", left, right), ids, end + 1

    leaves = iter(operands)
    value, _, _ = parse_expression(tree, 0)
    return value


def interleaved(functions, rounds):
    """Median seconds per call of each function, called in turn round by round (after a warm-up)."""
    for function in functions.values():
        function()
    times = {name: [] for name in functions}
    for _ in range(rounds):
        for name, function in functions.items():
            start = time.perf_counter()
            function()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def einsum_cases(quick):
    scale = 2 if quick else 1
    for tree, sizes in SEED_TREES:
        sizes = [max(1, s // scale) for s in sizes]
        leaves, root = tree_signature(tree)
        subscripts = ",".join(letters(ids) for ids in leaves) + "->" + letters(root)
        yield tree, subscripts, [[sizes[i] for i in ids] for ids in leaves]
    subscripts, extents = MATRIX_CHAIN
    terms = subscripts.split("->")[0].split(",")
    yield None, subscripts, [[max(1, extents[c] // scale) for c in term] for term in terms]


def flops_of(subscripts, shapes):
    """2 * multiply-adds of NumPy's optimal path (its own report)."""
    operands = [np.empty(shape, np.float32) for shape in shapes]
    info = np.einsum_path(subscripts, *operands, optimize="optimal")[1]
    for line in info.splitlines():
        if "Optimized FLOP count" in line:
            return float(line.split(":")[1])
    return float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    args = parser.parse_args()
    weft.set_num_threads(args.threads)
    if torch is not None:
        torch.set_num_threads(args.threads)
    print(f"CPU: {cpu_name()}; weft ISA {weft.isa()}, {weft.get_num_threads()} threads; NumPy {np.__version__}"
          + (f"; PyTorch {torch.__version__} ({torch.get_num_threads()} threads)" if torch else "; no PyTorch"))

    python, kernel = brgemm_overhead()
    print(f"brgemm 32x32x32 fp32: Python call {python * 1e6:.2f} us, C++ kernel {kernel * 1e6:.2f} us, "
          f"overhead {(python - kernel) * 1e6:.2f} us per call (medians)")

    rng = np.random.default_rng(2)
    header = f"{'case':<44} {'GFLOP':>7} {'weft.einsum':>12} {'einsum_tree':>12} {'numpy':>10} {'torch':>10} {'vs best peer':>12}"
    print(header)
    for tree, subscripts, shapes in einsum_cases(args.quick):
        operands = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
        functions = {"weft": lambda: weft.einsum(subscripts, *operands)}
        if tree:
            functions["weft_tree"] = lambda: weft.einsum_tree(tree, *operands)
        functions["numpy"] = lambda: np.einsum(subscripts, *operands, optimize=True)
        if torch is not None:
            tensors = [torch.from_numpy(o) for o in operands]
            if tree:
                functions["torch"] = lambda: run_torch_tree(tree, tensors)
            else:
                functions["torch"] = lambda: torch.einsum(subscripts, *tensors)
        medians = interleaved(functions, args.rounds)
        peers = [medians[name] for name in ("numpy", "torch") if name in medians]
        ours = min(medians[name] for name in ("weft", "weft_tree") if name in medians)
        name = (subscripts if len(subscripts) <= 44 else subscripts[:41] + "...")
        fmt = lambda key: f"{medians[key] * 1e3:.1f} ms" if key in medians else "-"  # noqa: E731
        print(f"{name:<44} {flops_of(subscripts, shapes) / 1e9:>7.2f} {fmt('weft'):>12} {fmt('weft_tree'):>12} "
              f"{fmt('numpy'):>10} {fmt('torch'):>10} {min(peers) / ours:>11.2f}x")
        del operands, functions


if __name__ == "__main__":
    main()
