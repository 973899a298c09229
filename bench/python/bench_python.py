#!/usr/bin/python3
"""The weft Python package's speed (a script, not a test):

1. the per-call overhead of weft.tpp.brgemm on one 32x32x32 fp32 block: the median time of a
   Python call minus the median time of the C++ kernel alone (_weft.brgemm_kernel_seconds, the same
   kernel called in a C++ loop), each per call over batches of calls, the batches interleaved;
2. weft.einsum (NumPy's notation: weft picks the tree) and weft.einsum_tree (the tree as written)
   next to numpy.einsum(optimize=True) and torch.einsum, in one process, the calls interleaved
   round by round, on the seed's einsum trees and a matrix chain. On the trees the peers evaluate
   the tree node by node, one two-operand einsum per node (bench/tensor/einsum_peers.py's
   evaluation: the contractions weft performs; NumPy on a whole tree took minutes there); on the
   chain they get the whole expression (NumPy picks its path, torch 1.13 goes left to right);
3. weft.ops.gemm (a linear layer, y = x @ w.T) on 1024^3 and 2048^3 next to NumPy (x @ w.T,
   OpenBLAS) and torch.nn.functional.linear, and weft.ops.conv2d on ResNet-50 layers
   (samples/conv/resnet50_layers.txt, batch N = the threads) next to torch.nn.functional.conv2d
   (oneDNN), fp32, interleaved the same way. weft runs twice: on plain arrays ("plain": the
   conversions into and out of its blocked layouts included, what weft.ops.gemm(x, w) costs) and
   on blocked ones ("blocked": the prepared operator alone, for callers who keep tensors blocked).

    PYTHONPATH=build/python /usr/bin/python3 bench/python/bench_python.py [--rounds 5] [--quick] [--only ops]

--quick divides every einsum dimension by 2 (a smoke run). --threads (default: every core) is given
to weft.set_num_threads and torch.set_num_threads (importing torch sets the calling thread's
OpenMP count to PyTorch's own default); OpenBLAS keeps its default, all cores, but its idle threads
sleep at once (OPENBLAS_THREAD_TIMEOUT=4, below). OpenBLAS picks its kernels by CPU; where it picks
AVX2 kernels on an AVX-512 CPU (Debian's 0.3.21 on Zen 4 and Zen 5), OPENBLAS_CORETYPE=SkylakeX
gives the AVX-512 peer.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

# OpenBLAS's idle threads spin for about 2^28 cycles after each call (its THREAD_TIMEOUT), and on a
# small machine they take the cores from whatever runs next in the interleaved rounds: weft's call
# after NumPy's ran at half speed. 2^4 cycles lets them sleep at once, as weft's and oneDNN's OpenMP
# threads do after their short spin. Set before NumPy loads OpenBLAS; a value given outside wins.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import numpy as np  # noqa: E402

import weft
from weft import _weft

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tensor"))
import einsum_peers  # noqa: E402  (the seed's trees, their parser and the node-by-node peers)
from resnet50_layers import RESNET_LAYERS, resnet_layers  # noqa: E402

try:
    import torch
except ImportError:  # the torch column is left out
    torch = None

# A chain whose cheapest order (b-c-d first: 2.7 GFLOP) is not left to right (6.4 GFLOP).
MATRIX_CHAIN = ("ab,bc,cd,de->ae", {"a": 2048, "b": 256, "c": 2048, "d": 256, "e": 2048})


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
    return statistics.median(python_times), statistics.median(kernel_times), min(python_times) - min(kernel_times)


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
    """(name, tree text, its parsed root, NumPy subscripts, operand shapes, GFLOP): on the trees the
    GFLOP of the tree as written (einsum_peers.flops, the C++ benchmark's count)."""
    scale = 2 if quick else 1
    for index, (tree, sizes) in enumerate(einsum_peers.TREES):
        sizes = [max(1, s // scale) for s in sizes]
        root, _ = einsum_peers.parse(tree)
        leaves = sorted(einsum_peers.leaves_of(root, []), key=lambda leaf: leaf[2])
        subscripts = ",".join(einsum_peers.subscript(leaf[1]) for leaf in leaves) + "->" + \
            einsum_peers.subscript(einsum_peers.node_ids(root))
        yield (f"seed tree {index}", tree, root, subscripts, [[sizes[d] for d in leaf[1]] for leaf in leaves],
               einsum_peers.flops(root, sizes) / 1e9)
    subscripts, extents = MATRIX_CHAIN
    terms = subscripts.split("->")[0].split(",")
    shapes = [[max(1, extents[c] // scale) for c in term] for term in terms]
    yield ("matrix chain " + ",".join(f"{r}x{c}" for r, c in shapes), None, None, subscripts, shapes,
           cheapest_flops(subscripts, shapes) / 1e9)


def cheapest_flops(subscripts, shapes):
    """NumPy's count for its optimal order (numpy.einsum_path)."""
    report = np.einsum_path(subscripts, *[np.empty(shape, np.float32) for shape in shapes], optimize="optimal")[1]
    return next(float(line.split(":")[1]) for line in report.splitlines() if "Optimized FLOP count" in line)


def report_ops(rows, rounds):
    """weft.ops next to NumPy and torch: one line per case, medians of interleaved calls."""
    print(f"{'case':<44} {'GFLOP':>7} {'weft plain':>11} {'weft blocked':>13} {'numpy':>10} {'torch':>10} "
          f"{'best peer / weft (plain, blocked)':>34}  weft config")
    for name, gflop, op, plain_args, peers in rows:
        blocked_args = [op.to_blocked(o["name"], a) for o, a in zip(op.operands, plain_args)]
        functions = {"plain": lambda: op(*plain_args), "blocked": lambda: op(*blocked_args, layout="blocked")}
        functions.update(peers)
        medians = interleaved(functions, rounds)
        best = min(medians[key] for key in peers)
        fmt = lambda key: f"{medians[key] * 1e3:.2f} ms" if key in medians else "-"  # noqa: E731
        print(f"{name:<44} {gflop:>7.2f} {fmt('plain'):>11} {fmt('blocked'):>13} {fmt('numpy'):>10} {fmt('torch'):>10} "
              f"{best / medians['plain']:>24.2f}x, {best / medians['blocked']:.2f}x  {op.source}")


def ops_rows(threads, rng):
    for size in (1024, 2048):
        x, w = (rng.uniform(-1, 1, (size, size)).astype(np.float32) for _ in range(2))
        peers = {"numpy": lambda x=x, w=w: x @ w.T}
        if torch is not None:
            xt, wt = torch.from_numpy(x), torch.from_numpy(w)
            peers["torch"] = lambda xt=xt, wt=wt: torch.nn.functional.linear(xt, wt)
        yield (f"ops.gemm {size}^3", 2 * size ** 3 / 1e9, weft.ops.Gemm(size, size, size), [x, w], peers)
    if torch is None:
        return
    for name, H, W, C, K, R, S, stride, pad in resnet_layers(RESNET_LAYERS):
        x = rng.uniform(-1, 1, (threads, C, H, W)).astype(np.float32)
        w = rng.uniform(-1, 1, (K, C, R, S)).astype(np.float32)
        op = weft.ops.Conv2d(threads, C, H, W, K, R, S, stride, pad)
        P, Q = (H + 2 * pad - R) // stride + 1, (W + 2 * pad - S) // stride + 1
        xt, wt = torch.from_numpy(x), torch.from_numpy(w)
        peers = {"torch": lambda xt=xt, wt=wt, s=stride, p=pad: torch.nn.functional.conv2d(xt, wt, stride=s, padding=p)}
        yield (f"ops.conv2d {name} {C}x{H}x{W} {K}x{R}x{S}/{stride}", 2 * threads * K * C * R * S * P * Q / 1e9, op,
               [x, w], peers)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--only", choices=("einsum", "ops"), help="run one part (the overhead line always)")
    args = parser.parse_args()
    weft.set_num_threads(args.threads)
    if torch is not None:
        torch.set_num_threads(args.threads)
    print(f"CPU: {cpu_name()}; weft ISA {weft.isa()}, {weft.get_num_threads()} threads; NumPy {np.__version__}"
          + (f"; PyTorch {torch.__version__} ({torch.get_num_threads()} threads)" if torch else "; no PyTorch"))

    python, kernel, least = brgemm_overhead()
    print(f"brgemm 32x32x32 fp32: Python call {python * 1e6:.2f} us, C++ kernel {kernel * 1e6:.2f} us, "
          f"overhead {(python - kernel) * 1e6:.2f} us per call (medians; of the fastest batches {least * 1e6:.2f} us)")

    rng = np.random.default_rng(2)
    if args.only != "einsum":
        report_ops(list(ops_rows(args.threads, rng)), args.rounds)
    if args.only == "ops":
        return
    print(f"{'case':<40} {'GFLOP':>7} {'weft.einsum':>12} {'einsum_tree':>12} {'numpy':>10} {'torch':>10} {'best peer / weft':>16}")
    for name, tree, root, subscripts, shapes, gflop in einsum_cases(args.quick):
        operands = [rng.uniform(-1, 1, shape).astype(np.float32) for shape in shapes]
        functions = {"weft": lambda: weft.einsum(subscripts, *operands)}
        if tree:
            functions["weft_tree"] = lambda: weft.einsum_tree(tree, *operands)
            functions["numpy"] = lambda: einsum_peers.evaluate(
                root, operands, lambda expr, *ops: np.einsum(expr, *ops, optimize=True))
        else:
            functions["numpy"] = lambda: np.einsum(subscripts, *operands, optimize=True)
        if torch is not None:
            tensors = [torch.from_numpy(o) for o in operands]
            if tree:
                functions["torch"] = lambda: einsum_peers.evaluate(root, tensors, torch.einsum)
            else:
                functions["torch"] = lambda: torch.einsum(subscripts, *tensors)
        medians = interleaved(functions, args.rounds)
        peers = min(medians[key] for key in ("numpy", "torch") if key in medians)
        fmt = lambda key: f"{medians[key] * 1e3:.1f} ms" if key in medians else "-"  # noqa: E731
        print(f"{name:<40} {gflop:>7.2f} {fmt('weft'):>12} {fmt('weft_tree'):>12} {fmt('numpy'):>10} {fmt('torch'):>10} "
              f"{peers / medians['weft']:>8.2f}x" + (f" / {peers / medians['weft_tree']:.2f}x" if tree else ""))
        del operands, functions


if __name__ == "__main__":
    main()
