#!/usr/bin/python3
"""Peers for bench/tensor/einsum_trees.cpp: the seed documents' three einsum trees evaluated by
PyTorch (torch.einsum, Debian python3-torch) and NumPy (numpy.einsum(optimize=True), python3-numpy),
whichever are installed, printing GFLOPS from the same flop count as the C++ benchmark (2 *
multiply-adds of every contraction node of the tree as written).

Each peer evaluates the tree node by node, as written: one two-operand einsum per contraction node
(permutation nodes are einsum permutations), so it performs exactly the contractions weft performs.
`--whole` also times numpy.einsum(optimize=True) on the whole expression at once (NumPy picks its
own contraction order; on trees 1 and 2 it did not finish within 10 minutes on our machine).

    /usr/bin/python3 bench/tensor/einsum_peers.py --threads 1
    /usr/bin/python3 bench/tensor/einsum_peers.py --threads 2

Debian's interpreter: apt installs python3-torch and python3-numpy for it, not for another python3
that may come first on PATH (pyenv, a virtualenv).
"""
import argparse
import os
import string
import sys
import time

TREES = [
    ("[[7,3,8],[8,4]->[7,3,4]],[[0,5],[[5,1,6],[6,2,7]->[5,1,2,7]]->[0,1,2,7]]->[0,1,2,3,4]",
     [100, 72, 128, 128, 3, 71, 305, 32, 3]),
    ("[1,4,7,8],[[0,4,5,6],[[2,5,7,9],[3,6,8,9]->[2,5,7,3,6,8]]->[0,4,2,7,3,8]]->[0,1,2,3]",
     [60, 60, 20, 20, 8, 8, 8, 8, 8, 8]),
    ("[[2,7,3],[3,8,4]->[2,7,8,4]],[[4,9,0],[[0,5,1],[1,6,2]->[0,5,6,2]]->[4,9,5,6,2]]->[5,6,7,8,9]",
     [40, 40, 40, 40, 40, 25, 25, 25, 25, 25]),
]



def parse(text):
    """Returns (root node, number of leaves). A node is ("leaf", ids, input index),
    ("contract", left, right, ids) or ("permute", child, ids)."""
    pos = 0
    leaves = 0

    def ids():
        nonlocal pos
        end = text.index("]", pos)
        out = [int(x) for x in text[pos:end].split(",") if x]
        pos = end
        return out

    def operand():
        nonlocal pos, leaves
        assert text[pos] == "["
        pos += 1
        if text[pos] == "[":
            node = tree()
        else:
            node = ("leaf", ids(), leaves)
            leaves += 1
        assert text[pos] == "]"
        pos += 1
        return node

    def tree():
        nonlocal pos
        first = operand()
        second = None
        if text[pos] == ",":
            pos += 1
            second = operand()
        assert text[pos:pos + 2] == "->"
        pos += 3
        out = ids()
        pos += 1
        if second is None:
            return ("permute", first, out)
        return ("contract", first, second, out)

    root = tree()
    return root, leaves


def node_ids(node):
    return node[1] if node[0] == "leaf" else node[-1]


def flops(node, sizes):
    """2 * multiply-adds of every contraction node, as the C++ benchmark counts them."""
    if node[0] == "leaf":
        return 0.0
    if node[0] == "permute":
        return flops(node[1], sizes)
    points = 2.0
    for d in set(node_ids(node[1])) | set(node_ids(node[2])) | set(node[3]):
        points *= sizes[d]
    return points + flops(node[1], sizes) + flops(node[2], sizes)


def leaves_of(node, found):
    if node[0] == "leaf":
        found.append(node)
    else:
        for child in node[1:-1]:
            leaves_of(child, found)
    return found


def subscript(ids):
    return "".join(string.ascii_letters[d] for d in ids)


def evaluate(node, inputs, einsum):
    """The tree node by node, as written."""
    if node[0] == "leaf":
        return inputs[node[2]]
    if node[0] == "permute":
        child = evaluate(node[1], inputs, einsum)
        return einsum(subscript(node_ids(node[1])) + "->" + subscript(node[2]), child)
    left = evaluate(node[1], inputs, einsum)
    right = evaluate(node[2], inputs, einsum)
    expr = subscript(node_ids(node[1])) + "," + subscript(node_ids(node[2])) + "->" + subscript(node[3])
    return einsum(expr, left, right)


def median_seconds(run, repetitions):
    run()  # warm up
    times = []
    for _ in range(repetitions):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--whole", action="store_true",
                        help="also numpy.einsum(optimize=True) on the whole expression")
    args = parser.parse_args()
    # The BLAS and OpenMP pools size themselves at import: set the thread count first.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)

    peers = []
    try:
        import torch
        torch.set_num_threads(args.threads)
        peers.append(("torch.einsum " + torch.__version__,
                      lambda arrays: [torch.from_numpy(a) for a in arrays],
                      lambda expr, *ops: torch.einsum(expr, *ops)))
    except ImportError:
        print(f"torch is not installed for {sys.executable} (apt-get install python3-torch, for /usr/bin/python3): skipping PyTorch", file=sys.stderr)
    try:
        import numpy as np
    except ImportError:
        print(f"numpy is not installed for {sys.executable}: apt-get install python3-numpy, for /usr/bin/python3", file=sys.stderr)
        sys.exit(1)
    peers.append(("numpy.einsum " + np.__version__, lambda arrays: arrays,
                  lambda expr, *ops: np.einsum(expr, *ops, optimize=True)))

    rng = np.random.default_rng(1)
    print(f"threads {args.threads}, median of {args.repetitions}")
    for index, (text, sizes) in enumerate(TREES):
        root, _ = parse(text)
        work = flops(root, sizes)
        leaves = sorted(leaves_of(root, []), key=lambda leaf: leaf[2])
        arrays = [rng.uniform(-1, 1, [sizes[d] for d in leaf[1]]).astype(np.float32) for leaf in leaves]
        for name, convert, einsum in peers:
            inputs = convert(arrays)
            seconds = median_seconds(lambda: evaluate(root, inputs, einsum), args.repetitions)
            print(f"tree {index}: {name} node by node {seconds * 1e3:.1f} ms, {work / seconds / 1e9:.1f} GFLOPS")
        if args.whole:
            expr = ",".join(subscript(leaf[1]) for leaf in leaves) + "->" + subscript(node_ids(root))
            seconds = median_seconds(lambda: np.einsum(expr, *arrays, optimize=True), args.repetitions)
            print(f"tree {index}: numpy.einsum(optimize=True) whole expression {seconds * 1e3:.1f} ms, "
                  f"{work / seconds / 1e9:.1f} GFLOPS")


if __name__ == "__main__":
    main()
