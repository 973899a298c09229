"""Tuning weft's operators from Python, as `weft-tune gemm` / `weft-tune conv` do: the tuner
measures candidate configurations for `seconds`, stores the best in the tuning database (the one
weft-tune writes: $WEFT_TUNING_DB, else ~/.cache/weft/tuning.jsonl, or `database=`), where the
operators' config="auto" finds it, and returns it. A progress bar is drawn when stderr is a terminal.
Each run clears weft.ops' cache of prepared operators (weft.ops.clear_cache()): one prepared before
the record existed would otherwise keep running the old choice. weft.torch's layers keep the passes
they prepared; new layers (or copies) prepare theirs again and find the record.

    best = weft.tune.gemm(1024, 256, 1024, seconds=30)
    best.config               # {'loop_string': 'aCB', 'bm': 64, ...}: usable as config=
    y = weft.ops.gemm(x, w, config=best)    # or config="auto", which now finds it

tiles= makes a tile-bound run: the best configuration with these weight tiles (GEMM bm and bk,
convolution bc and bk), stored apart from the free search's best, where config={"bm": .., "bk": ..}
(what weft.torch's layers ask for when their weight's layout fixes the tiles) finds it:

    weft.tune.conv2d(1, 64, 56, 56, 64, 3, 3, padding=1, direction="backward_data", tiles={"bc": 64, "bk": 64})
"""
from dataclasses import dataclass

from . import _weft, ops

__all__ = ["Tuned", "gemm", "conv2d"]

_PASSES = {"forward": "fwd", "backward_data": "bwd", "backward_weights": "upd"}


@dataclass(frozen=True)
class Tuned:
    """What a tuning run found: config (the dict the operators take as config=, as does this
    object), its GFLOPS and the default configuration's, the candidates measured, the database
    record's key and the database's path."""
    config: dict
    gflops: float
    default_gflops: float
    measured: int
    key: str
    database: str


def _pass_name(direction):
    if direction not in _PASSES:
        raise ValueError(f"argument 'direction': {direction!r} is none of {', '.join(_PASSES)}")
    return _PASSES[direction]


def _tuned(found):
    # A new record may change what config="auto" (or a tile-bound config) prepares, for this shape
    # and for the nearest-shape matches of others: every cached operator may be stale.
    ops.clear_cache()
    return Tuned(found["config"], found["gflops"], found["default_gflops"], found["measured"], found["key"],
                 found["database"])


def gemm(M, N, K, direction="forward", dtype="f32", layers=1, seconds=10.0, threads=None, caches="warm",
         database=None, tiles=None):
    """Tunes weft.ops.Gemm (direction 'forward'; layers > 1: the MLP), GemmBackwardData
    ('backward_data') or GemmBackwardWeights ('backward_weights') of this shape for `seconds`
    (a small search space may finish sooner) on `threads` (default: weft.get_num_threads()).
    caches: 'warm' (runs back to back) or 'cold' (the caches evicted before each run). dtype:
    'f32', 'bf16' or 'f64' (the records of each are apart). tiles: None, or {'bm': .., 'bk': ..}
    (a tile-bound run)."""
    return _tuned(_weft.tune_gemm(_pass_name(direction), M, N, K, layers, dtype, float(seconds), threads,
                                  caches, database or "", tiles))


def conv2d(N, C, H, W, K, R, S, stride=1, padding=0, direction="forward", dtype="f32", seconds=10.0, threads=None,
           caches="cold", database=None, tiles=None):
    """Tunes weft.ops.Conv2d (or its backward passes, by `direction`) of this shape for `seconds`.
    Cold caches by default, as weft-tune conv: a layer of a network starts with the previous layer's
    data in the caches, and evicting them takes time of its own, so a run may exceed `seconds`.
    tiles: None, or {'bc': .., 'bk': ..} (a tile-bound run)."""
    (stride_h, stride_w), (pad_h, pad_w) = ops._pair(stride, "stride"), ops._pair(padding, "padding")
    sizes = [N, H, W, C, K, R, S, stride_h, stride_w, pad_h, pad_w]
    return _tuned(_weft.tune_conv(_pass_name(direction), sizes, dtype, float(seconds), threads, caches,
                                  database or "", tiles))
