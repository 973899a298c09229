"""weft from Python: loop nests, TPP kernels, einsum trees and operators on NumPy arrays and torch tensors.

    import numpy as np, weft
    weft.isa()                                   # 'avx512', 'avx2', ...
    print(weft.explain("bcaBCb", [(0, 4, 1), (0, 8, 1, [4, 2]), (0, 4, 1, [2])]))
    c = weft.einsum("ik,kj->ij", a, b)           # a, b float32 or float64 arrays
    weft.tpp.brgemm(a_blocks, b_blocks, c, beta=1)
    y = weft.ops.gemm(x, w, b, relu=True)        # y = relu(x @ w.T + b), prepared once and cached
    best = weft.tune.gemm(1024, 256, 1024, seconds=30)   # stored: config="auto" now finds it

PyTorch is optional: torch tensors are read through DLPack when given. `import weft.torch` (on
demand; `import weft` never imports torch) adds torch.nn layers on the operators. See docs/python.md.
"""
from . import _weft
from . import ops, tpp, tune
from ._einsum import einsum, einsum_tree

__all__ = ["isa", "cpu", "set_num_threads", "get_num_threads", "explain", "trace", "einsum", "einsum_tree", "tpp", "ops", "tune"]


def isa():
    """The instruction set weft generates code for, e.g. 'avx512_bf16' (WEFT_ISA overrides it)."""
    return _weft.isa()


def cpu():
    """The detected CPU: a dict of features ('avx2', 'avx512f', 'sve', ...), 'model', cache sizes."""
    return _weft.cpu()


def set_num_threads(n):
    """Threads of weft's parallel work (einsum, trace's default), for every Python thread; n >= 1."""
    _weft.set_num_threads(n)


def get_num_threads():
    """The threads set by set_num_threads, or OpenMP's default."""
    return _weft.get_num_threads()


def explain(loop_string, specs):
    """The loop nest of `loop_string` over `specs` as C-like text (what weft-explain prints).

    specs: one (start, end, step[, block sizes]) per loop a, b, c, ...; block sizes as a list or as
    further ints. A malformed loop string raises ValueError with the library's caret message.
    """
    return _weft.explain(loop_string, specs)


def trace(loop_string, specs, threads=None):
    """Runs the nest on `threads` threads (default: get_num_threads()) and returns, per thread, the
    index tuples (one index per loop, a first) of its body calls in the order it ran them."""
    return _weft.trace(loop_string, specs, threads)
