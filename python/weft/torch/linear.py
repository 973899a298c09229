"""weft.torch.Linear and weft.torch.MLP: y = relu?(x @ w.T + b) on weft's GEMM operators.

The weight is a Parameter holding the blocked copy (flat, weft's layout of the forward pass),
blocked once at construction or load; the three passes read it in place when their layouts agree
(the backward passes are prepared with the forward's tiles when their own choice differs), else
through one gather. state_dict() and load_state_dict() speak nn.Linear's plain (out, in) weight.
"""
import math

import torch
from torch import nn

from .. import ops
from . import _common
from ._common import WeightState
from ._autocast import autocast_input
from ._function import BlockedWeightFunction
from ._layout import is_plain

# The batch the weight's layout is chosen for at construction: the forward operator of that shape
# fixes the tiles (bm, bk); other batches run with the same tiles (bn follows the batch).
LAYOUT_BATCH = 256


class _LinearPlan:
    """The three passes of one batch size on one team."""

    def __init__(self, layer, batch, threads):
        M, K, dtype = layer.out_features, layer.in_features, layer._weft_dtype
        tiles = layer._tiles
        common = dict(dtype=dtype, threads=threads)

        def prepared(make, key, name):
            return _common.prepared_pass(make, key, name, layer._weight.layout, tiles)

        key = (M, batch, K, dtype, threads)
        self.fwd = prepared(lambda config: ops.Gemm(M, batch, K, bias=layer.bias is not None, relu=layer.relu,
                                                     config=config, **common),
                            ("fwd", layer.bias is not None, layer.relu) + key, "w")
        self.upd = prepared(lambda config: ops.GemmBackwardWeights(M, batch, K, config=config, **common),
                            ("upd",) + key, "dw")
        # The backward by data reads dy plain only where the update does too: then one masked
        # plain dy serves both; else both read one blocked copy, when they lay it out alike.
        self.upd_dy_plain = plain_dy = is_plain(self.upd.op, "dy", (batch, M), layer.dtype)
        self.bwd = prepared(lambda config: ops.GemmBackwardData(M, batch, K, config=config, plain_dy=plain_dy,
                                                                 **common),
                            ("bwd", plain_dy) + key, "w")
        self.x_shared = _common.operands_alike(self.fwd, "x", self.upd, "x", (batch, K), layer.dtype)
        self.dy_shared = _common.operands_alike(self.bwd, "dy", self.upd, "dy", (batch, M), layer.dtype)
        self.bias_plain = layer.bias is not None and is_plain(self.fwd.op, "b", (M,), layer.dtype)
        # The forward reads x and writes y, the backward passes read dy, the backward by data
        # writes dx and the backward by weights reads x, as PyTorch's tensors where the passes
        # take them plain (weft.ops: tiles that divide the reduced sizes, docs/ops.md).
        self.x_plain = is_plain(self.fwd.op, "x", (batch, K), layer.dtype)
        self.y_plain = is_plain(self.fwd.op, "y", (batch, M), layer.dtype)
        self.dx_plain = is_plain(self.bwd.op, "dx", (batch, K), layer.dtype)
        self.upd_x_plain = is_plain(self.upd.op, "x", (batch, K), layer.dtype)
        self.bwd_dy_plain = is_plain(self.bwd.op, "dy", (batch, M), layer.dtype)


class Linear(_common.BlockedWeightModule):
    """y = relu?(x @ weight.T + bias) as nn.Linear (x (*, in_features) -> (*, out_features)), on
    weft's GEMM passes. relu=True fuses a ReLU into the forward (and its mask into the backward).

    dtype: torch.float32, torch.bfloat16 (bf16 inputs and outputs, fp32 master weights; the
    gradients of the parameters in fp32) or torch.float64 (weft's float64 GEMM). master_dtype:
    the parameters' dtype, torch.float32 by default for bf16; torch.bfloat16 keeps them (and
    their gradients) in bf16, as a torch.nn model in bf16 does. threads: the team
    (default: weft.set_num_threads' count if set, else torch.get_num_threads()).

    self.weight is the blocked copy (flat); plain_weight() gives the (out, in) tensor; state_dict()
    holds the plain one, as nn.Linear's."""

    def __init__(self, in_features, out_features, bias=True, relu=False, dtype=torch.float32, threads=None,
                 master_dtype=None):
        super().__init__()
        for name, value in (("in_features", in_features), ("out_features", out_features)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"argument '{name}' must be a positive int, got {value!r}")
        self.in_features, self.out_features = in_features, out_features
        self.relu = bool(relu)
        self.dtype = _common.compute_dtype(dtype)
        self.master_dtype = _common.master_dtype(self.dtype, master_dtype)
        self._weft_dtype = _common.WEFT_DTYPES[self.dtype]
        self.threads = _common.check_threads(threads)
        self._plans = {}
        # The layout: the forward operator of LAYOUT_BATCH rows on the construction's team.
        team = self.threads or _common.default_threads()
        reference = ops.Gemm(out_features, LAYOUT_BATCH, in_features, dtype=self._weft_dtype, bias=bias,
                             relu=self.relu, threads=team)
        layout = _common.layout_of(("fwd", bias, self.relu, out_features, LAYOUT_BATCH, in_features, self._weft_dtype,
                                    team, "auto"), reference, "w", (out_features, in_features), self.dtype)
        self._weight = WeightState(layout, self.dtype)
        self._tiles = _common.description_knobs(reference.description, ("bm", "bk"))
        # nn.Linear's initialization (and its order: weight, then bias), on the plain weight.
        plain = torch.empty(out_features, in_features, dtype=self.master_dtype)
        nn.init.kaiming_uniform_(plain, a=math.sqrt(5))
        self.weight = nn.Parameter(layout.to_blocked(plain))
        if bias:
            bound = 1 / math.sqrt(in_features)
            self.bias = nn.Parameter(torch.empty(out_features, dtype=self.master_dtype).uniform_(-bound, bound))
        else:
            self.register_parameter("bias", None)

    def _plan(self, batch, layer=None):
        return self._cached_plan(batch, _LinearPlan, layer)

    def _bf16_reference(self):
        team = self.threads or _common.default_threads()
        return _common.bf16_reference(
            lambda config: ops.Gemm(self.out_features, LAYOUT_BATCH, self.in_features, dtype="bf16",
                                    bias=self.bias is not None, relu=self.relu, threads=team, config=config),
            self._tiles)

    def forward(self, input):
        _common.check_parameter_dtype(self.weight, self.master_dtype, "weft.torch.Linear")
        # Under torch.autocast (CPU, bf16) a float32 layer computes in bf16, as nn.Linear there.
        layer, input = autocast_input(self, input)
        _common.check_input(input, "input", layer.dtype, f"(*, {self.in_features})",
                            lambda rank: rank >= 1)
        if input.shape[-1] != self.in_features:
            raise ValueError(f"argument 'input' has shape {tuple(input.shape)}: its last dimension must be "
                             f"in_features = {self.in_features}")
        rows = input.reshape(-1, self.in_features)
        if rows.shape[0] == 0:
            raise ValueError(f"argument 'input' has shape {tuple(input.shape)}: no rows")
        y = BlockedWeightFunction.apply(rows, self.weight, self.bias, layer, self._plan(rows.shape[0], layer))
        return y.reshape(*input.shape[:-1], self.out_features)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}, "
                f"relu={self.relu}, dtype={self.dtype}{_common.master_repr(self)}, threads={self.threads}")


class MLP(nn.Sequential):
    """Linear layers sizes[0] -> sizes[1] -> ... -> sizes[-1], each followed by a fused ReLU but the
    last (relu_last=True: it too). An nn.Sequential of weft.torch.Linear: state_dict keys
    '0.weight', '0.bias', '1.weight', ... as nn.Sequential(nn.Linear, nn.Linear, ...) (the ReLUs
    hold no state)."""

    def __init__(self, sizes, bias=True, relu_last=False, dtype=torch.float32, threads=None, master_dtype=None):
        sizes = list(sizes)
        if len(sizes) < 2:
            raise ValueError(f"argument 'sizes' needs at least 2 sizes (input, output), got {sizes}")
        layers = [Linear(sizes[i], sizes[i + 1], bias=bias, relu=relu_last or i + 2 < len(sizes), dtype=dtype,
                         threads=threads, master_dtype=master_dtype) for i in range(len(sizes) - 1)]
        super().__init__(*layers)
