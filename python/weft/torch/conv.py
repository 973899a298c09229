"""weft.torch.Conv2d: y = relu?(conv2d(x, w, b, stride, padding)) on weft's convolution passes.

As weft.torch.Linear: the filter is a Parameter holding the blocked copy (flat), in the layout of
a forward operator prepared at construction; the passes of each input shape read it in place when
their filter layouts agree (a pass whose own choice blocks the channels otherwise is prepared again
with the layer's channel blocks, bc and bk, where it takes them), else through one gather.
state_dict() holds nn.Conv2d's plain (out, in, kh, kw) weight.
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

# The image the filter's layout is chosen for at construction (one image, this size unless
# input_size= says): the forward operator of that shape fixes the channel blocks.
LAYOUT_IMAGE = 28


def _pair(value, name):
    if isinstance(value, int) and not isinstance(value, bool):
        return (value, value)
    if (isinstance(value, (tuple, list)) and len(value) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        return tuple(value)
    raise TypeError(f"argument '{name}' must be an int or a pair of ints, got {value!r}")


class _ConvPlan:
    def __init__(self, layer, shape, threads):
        N, C, H, W = shape
        K, (R, S) = layer.out_channels, layer.kernel_size
        sizes = (N, C, H, W, K, R, S, layer.stride, layer.padding)
        common = dict(dtype=layer._weft_dtype, threads=threads)
        bias = layer.bias is not None

        def prepared(make, key, name):
            return _common.prepared_pass(make, key, name, layer._weight.layout, layer._tiles)

        key = sizes + (layer._weft_dtype, threads)
        self.fwd = prepared(lambda config: ops.Conv2d(*sizes, bias=bias, relu=layer.relu, config=config, **common),
                            ("conv_fwd", bias, layer.relu) + key, "w")
        self.bwd = prepared(lambda config: ops.Conv2dBackwardData(*sizes, config=config, **common), ("conv_bwd",) + key,
                            "w")
        # The update reads dy with the rims the backward by data gives it: one blocked dy for both.
        dy_rim = next(o["rim"] for o in self.bwd.op.operands if o["name"] == "dy")
        self.upd = prepared(lambda config: ops.Conv2dBackwardWeights(*sizes, config=config, dy_rim=dy_rim, **common),
                            ("conv_upd", dy_rim) + key, "dw")
        self.x_shared = _common.operands_alike(self.fwd, "x", self.upd, "x", shape, layer.dtype)
        output = (N, K) + tuple(self.fwd.op.operands[-1]["shape"][2:])
        self.dy_shared = _common.operands_alike(self.bwd, "dy", self.upd, "dy", output, layer.dtype)
        self.bias_plain = bias and is_plain(self.fwd.op, "b", (K,), layer.dtype)
        # The forward writes y plain, and the backward by data dx, where their configurations pay
        # for it (ConvFwd's plain_output, ConvBwd's plain_grad_input); the rest is converted.
        self.y_plain = next(o["plain"] for o in self.fwd.op.operands if o["name"] == "y")
        self.dx_plain = next(o["plain"] for o in self.bwd.op.operands if o["name"] == "dx")
        self.x_plain = self.upd_x_plain = self.bwd_dy_plain = self.upd_dy_plain = False


class Conv2d(_common.BlockedWeightModule):
    """nn.Conv2d's y = conv2d(x, weight, bias, stride, padding) (NCHW, zero padding, no groups or
    dilation), relu=True fusing a ReLU, on weft's convolution passes; dtype torch.float32 or
    torch.bfloat16 (fp32 master weights, or bf16 ones with master_dtype=torch.bfloat16, as in
    Linear). weft's convolutions have no float64.

    input_size: the (H, W) the filter's blocked layout is chosen for (default 28 x 28); other
    sizes run too, reading the filter through a gather where their passes block it otherwise."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, bias=True, relu=False,
                 dtype=torch.float32, threads=None, input_size=None, master_dtype=None):
        super().__init__()
        for name, value in (("in_channels", in_channels), ("out_channels", out_channels)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"argument '{name}' must be a positive int, got {value!r}")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.stride = _pair(stride, "stride")
        self.padding = _pair(padding, "padding")
        if min(self.kernel_size) < 1 or min(self.stride) < 1 or min(self.padding) < 0:
            raise ValueError(f"kernel_size {self.kernel_size} and stride {self.stride} must be >= 1, padding "
                             f"{self.padding} >= 0")
        if dtype == torch.float64:
            raise TypeError("argument 'dtype': weft's convolutions compute in float32 and bfloat16, not float64")
        self.dtype = _common.compute_dtype(dtype)
        self.master_dtype = _common.master_dtype(self.dtype, master_dtype)
        self._weft_dtype = _common.WEFT_DTYPES[self.dtype]
        self.relu = bool(relu)
        self.threads = _common.check_threads(threads)
        self._plans = {}
        R, S = self.kernel_size
        H, W = _pair(input_size, "input_size") if input_size is not None else (max(LAYOUT_IMAGE, R), max(LAYOUT_IMAGE, S))
        team = self.threads or _common.default_threads()
        sizes = self._layout_sizes = (1, in_channels, H, W, out_channels, R, S, self.stride, self.padding)
        reference = ops.Conv2d(*sizes, dtype=self._weft_dtype, bias=bias, relu=self.relu, threads=team)
        layout = _common.layout_of(("conv_fwd", bias, self.relu) + sizes + (self._weft_dtype, team), reference, "w",
                                   (out_channels, in_channels, R, S), self.dtype)
        self._weight = WeightState(layout, self.dtype)
        self._tiles = _common.description_knobs(reference.description, ("bc", "bk"))
        # nn.Conv2d's initialization, in its order.
        plain = torch.empty(out_channels, in_channels, R, S, dtype=self.master_dtype)
        nn.init.kaiming_uniform_(plain, a=math.sqrt(5))
        self.weight = nn.Parameter(layout.to_blocked(plain))
        if bias:
            bound = 1 / math.sqrt(in_channels * R * S)
            self.bias = nn.Parameter(torch.empty(out_channels, dtype=self.master_dtype).uniform_(-bound, bound))
        else:
            self.register_parameter("bias", None)

    def _plan(self, shape, layer=None):
        try:
            return self._cached_plan(shape, _ConvPlan, layer)
        except ValueError as error:
            raise ValueError(f"weft.torch.Conv2d: weft's convolution does not take input {shape} with "
                             f"{self.extra_repr()}: {error}") from error

    def _bf16_reference(self):
        team = self.threads or _common.default_threads()
        return _common.bf16_reference(
            lambda config: ops.Conv2d(*self._layout_sizes, dtype="bf16", bias=self.bias is not None, relu=self.relu,
                                      threads=team, config=config),
            self._tiles)

    def forward(self, input):
        _common.check_parameter_dtype(self.weight, self.master_dtype, "weft.torch.Conv2d")
        # Under torch.autocast (CPU, bf16) a float32 layer computes in bf16, as nn.Conv2d there.
        layer, input = autocast_input(self, input)
        _common.check_input(input, "input", layer.dtype, f"(N, {self.in_channels}, H, W)", lambda rank: rank == 4)
        if input.shape[1] != self.in_channels:
            raise ValueError(f"argument 'input' has shape {tuple(input.shape)}: dimension 1 must be "
                             f"in_channels = {self.in_channels}")
        return BlockedWeightFunction.apply(input, self.weight, self.bias, layer, self._plan(tuple(input.shape), layer))

    def extra_repr(self):
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, bias={self.bias is not None}, relu={self.relu}, dtype={self.dtype}"
                f"{_common.master_repr(self)}, threads={self.threads}")
