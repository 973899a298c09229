"""TPP kernels on row-major (C-contiguous) arrays: BRGEMM, unary and binary.

weft's kernels are column-major; these functions give them the row-major meaning NumPy users
expect (the extension maps each call onto the transposed problem, without copies). Kernels are
generated once per shape and type and then come from the library's caches.

    c = np.zeros((32, 32), np.float32)
    weft.tpp.brgemm(a, b, c, beta=1)          # c += sum_i a[i] @ b[i]
    y = weft.tpp.unary("gelu", x)
    z = weft.tpp.binary("add", x, bias)       # bias of shape (cols,) added to every row
"""
import math

import numpy as np

from . import _arrays, _weft

UNARY_OPS = ("zero", "copy", "relu", "square", "reciprocal", "sqrt", "exp", "sigmoid", "tanh", "gelu",
             "increment", "decrement", "scale", "transpose",
             "reduce_rows_sum", "reduce_rows_max", "reduce_cols_sum", "reduce_cols_max")
BINARY_OPS = ("add", "sub", "mul", "div", "min", "max")
_OPS_WITH_ALPHA = ("increment", "decrement", "scale")


def brgemm(a, b, c=None, beta=1, activation=None, dtype=None):
    """c = activation(beta * c + sum_i a[i] @ b[i]), in place; returns c.

    a: (count, M, K) or (M, K); b: (count, K, N) or (K, N), or in bf16 VNNI-2 packed, (count, K/2,
    N, 2) (see vnni2); c: (M, N). beta is 0 (c is written, never read) or 1 (accumulated into), as
    in the library's BrgemmDesc. activation: None or 'relu'. Types: all float32, all float64, or a
    and b bfloat16 with c float32 or bfloat16 (fp32 accumulation); dtype='bf16' reads uint16 arrays
    as bfloat16. Without c, a new one is made and beta must be 0.
    """
    if beta not in (0, 1) or isinstance(beta, bool):
        raise ValueError(f"argument 'beta' must be 0 or 1 (the library's BrgemmDesc::beta), got {beta!r}")
    if c is None:
        if beta != 0:
            raise ValueError("argument 'c' is needed with beta=1 (pass beta=0 for a new c)")
        kind = _arrays.dtype_name(a, "a", dtype)
        a_shape, b_shape = _arrays.shape_of(a, "a"), _arrays.shape_of(b, "b")
        n = b_shape[-2] if kind == "bf16" else b_shape[-1]
        c = _arrays.empty_like_kind(a, (a_shape[-2], n), "f32" if kind == "bf16" else kind)
    _weft.brgemm(a, b, c, int(beta), activation or "none", dtype)
    return c


def unary(op, x, out=None, alpha=None, dtype=None):
    """out = op(x); returns out (a new array of x's kind and type when not given).

    Element-wise ops keep x's shape. 'transpose' needs a 2-D x. Seen as rows x cols (the last
    dimension, the others flattened): 'reduce_cols_sum'/'_max' give one value per row of x
    (x.sum(axis=-1)), 'reduce_rows_sum'/'_max' one per column (x.sum(axis=0) for 2-D x): the
    library's columns are NumPy's rows. alpha: the constant of increment, decrement and scale.
    """
    if op not in UNARY_OPS:
        raise ValueError(f"argument 'op': {op!r} is none of {', '.join(UNARY_OPS)}")
    if alpha is not None and op not in _OPS_WITH_ALPHA:
        raise ValueError(f"argument 'alpha': op {op!r} takes none")
    if alpha is None and op in _OPS_WITH_ALPHA:
        raise ValueError(f"argument 'alpha': op {op!r} needs one")
    if out is None:
        shape = _arrays.shape_of(x, "x")
        if op == "transpose":
            if len(shape) != 2:
                raise ValueError(f"argument 'x' of a transpose must be 2-D, got shape {shape}")
            shape = shape[::-1]
        elif op.startswith("reduce_rows"):
            shape = shape[-1:] or (1,)
        elif op.startswith("reduce_cols"):
            shape = shape[:-1] or (1,)
        out = _arrays.empty_like_kind(x, shape, _arrays.dtype_name(x, "x", dtype))
    _weft.unary(op, x, out, float(alpha or 0.0), dtype)
    return out


def _infer_broadcast(shape, full):
    if shape == full:
        return "none"
    cols = full[-1] if full else 1
    if math.prod(shape) == 1:
        return "scalar"
    if shape in ((cols,), (1, cols)):
        return "row"
    if len(full) >= 2 and shape == full[:-1] + (1,):
        return "col"
    raise ValueError(f"shape {shape} broadcasts against {full} neither as a row, a column nor a scalar")


def binary(op, a, b, out=None, broadcast=None, dtype=None):
    """out = a op b; returns out.

    broadcast (row-major terms, the output seen as rows x cols): 'none', 'row' (the input is one row
    of cols values, repeated down the rows: shape (cols,) or (1, cols)), 'col' (one column of rows
    values: shape (rows, 1)) or 'scalar'. A string applies to b; a pair (for a, for b) to both;
    None infers both from the shapes.
    """
    if op not in BINARY_OPS:
        raise ValueError(f"argument 'op': {op!r} is none of {', '.join(BINARY_OPS)}")
    a_shape, b_shape = _arrays.shape_of(a, "a"), _arrays.shape_of(b, "b")
    if isinstance(broadcast, str):
        kinds = ("none", broadcast)
    elif broadcast is None:
        full = a_shape if len(a_shape) >= len(b_shape) and math.prod(a_shape) >= math.prod(b_shape) else b_shape
        if out is not None:
            full = _arrays.shape_of(out, "out")
        try:
            kinds = (_infer_broadcast(a_shape, full), _infer_broadcast(b_shape, full))
        except ValueError as error:
            raise ValueError(f"arguments 'a' {a_shape} and 'b' {b_shape}: {error}") from None
    else:
        kinds = tuple(broadcast)
        if len(kinds) != 2:
            raise ValueError("argument 'broadcast' must be a string, a pair of strings or None")
    if out is None:
        full = a_shape if kinds[0] == "none" else b_shape if kinds[1] == "none" else None
        if full is None:
            raise ValueError("argument 'out' is needed when both inputs are broadcast")
        out = _arrays.empty_like_kind(a, full, _arrays.dtype_name(a, "a", dtype))
    _weft.binary(op, a, b, out, kinds[0], kinds[1], dtype)
    return out


def vnni2(b):
    """B (..., K, N) -> its VNNI-2 packing (..., K/2, N, 2), the layout bf16 brgemm reads b in:
    packed[..., k // 2, n, k % 2] = b[..., k, n]. A copy; works on NumPy arrays and torch tensors."""
    shape = _arrays.shape_of(b, "b")
    if len(shape) < 2 or shape[-2] % 2 != 0:
        raise ValueError(f"argument 'b' must be (..., K, N) with K even, got shape {shape}")
    pairs = b.reshape(shape[:-2] + (shape[-2] // 2, 2, shape[-1]))
    swapped = pairs.swapaxes(-1, -2) if hasattr(pairs, "swapaxes") else pairs.transpose(-1, -2)
    if hasattr(swapped, "contiguous"):
        return swapped.contiguous()
    return np.ascontiguousarray(swapped)
