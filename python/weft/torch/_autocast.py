"""weft.torch's float32 layers under torch.autocast("cpu", dtype=torch.bfloat16), as torch.nn's
Linear and Conv2d run there: the passes compute in bf16 on a bf16 copy of the fp32 weight (made
anew by each forward, as autocast casts a weight per forward), inputs are cast to bf16, the
output is bf16, and the weight and bias gradients come back in fp32.

An AutocastView stands in for the layer in its passes: it is the layer in bf16 (its own plans, the
bf16 operators prepared with the layer's tiles) with AutocastWeight in place of the layer's
WeightState. The parameter keeps the fp32 layer's blocked layout; the bf16 passes want their
weight in VNNI-2 tiles (pairs of the reduced dimension interleaved). With the same tiles that is
the fp32 layout with each tile's column pairs interleaved, so the bf16 copy is one pass
(weft::ops::pack_vnni2, as fast as a cast), the GEMM update writes its fp32 sums straight into the
fp32 layout (GemmBackwardWeights' dw_order='column_major'), and a convolution's come back in one
more pass (unpack_vnni2). A bf16 layout that is not that pairing (the bf16 operator refused the
layer's tiles) goes through the index maps of _layout.py: correct, but a gather each way.
"""
import torch

from .. import _weft
from . import _memory
from ._layout import BlockedLayout


def bf16_autocast_enabled():
    """Whether PyTorch's CPU autocast is on with bfloat16, the dtype it casts eligible ops to."""
    return torch.is_autocast_cpu_enabled() and torch.get_autocast_cpu_dtype() == torch.bfloat16


def autocast_input(layer, input):
    """The layer (or its bf16 view) that computes `input` under bf16 autocast, and the input cast
    as autocast casts an eligible op's: fp32 into bf16. Without autocast, or for a float64 layer
    (autocast leaves float64 alone), the layer itself and the input as it is."""
    if not bf16_autocast_enabled() or layer.dtype == torch.float64:
        return layer, input
    if isinstance(input, torch.Tensor) and input.dtype == torch.float32:
        input = input.to(torch.bfloat16)
    if layer.dtype == torch.bfloat16:
        return layer, input
    return layer._autocast_view(), input


def _vnni_pairing(fp32_layout, bf16_layout, tiles):
    """(pairs, rows) when the bf16 layout is the fp32 one with each tile's reduced dimension paired
    (tiles of `pairs` * 2 reduced elements by `rows` rows, rows fastest, become pairs x rows x 2),
    else None. Checked on the index maps: the tile knobs name the candidates, not which is which."""
    if fp32_layout.size != bf16_layout.size or not tiles:
        return None
    for rows in tiles.values():
        for reduced in tiles.values():
            tile = rows * reduced
            if reduced % 2 or fp32_layout.size % tile:
                continue
            paired = fp32_layout.index.view(-1, reduced // 2, 2, rows).transpose(2, 3).reshape(-1)
            if torch.equal(paired, bf16_layout.index):
                return reduced // 2, rows
    return None


class AutocastWeight:
    """The WeightState of an AutocastView: the fp32 parameter (in the fp32 layer's layout) read by
    bf16 passes whose layer layout is `layout` (the bf16 one), and their gradients moved back."""

    def __init__(self, fp32_layout, layout, tiles):
        self.layout = layout
        self.fp32_layout = fp32_layout
        self.dtype = torch.bfloat16
        self.pairing = _vnni_pairing(fp32_layout, layout, tiles)
        if self.pairing is None:
            self._to_bf16 = layout.gather_from(fp32_layout)
            self._to_fp32 = fp32_layout.gather_from(layout)
        self._copy = None
        self._copy_key = None

    def compute_copy(self, weight, refresh=False):
        """The bf16 copy in the bf16 layout, made anew by each forward (refresh) and reused by its
        backward while the parameter is unchanged (as WeightState's)."""
        data = weight.detach()
        key = (data.data_ptr(), weight._version)
        if refresh or self._copy_key != key:
            self._copy = self._bf16_copy(data)
            self._copy_key = key
        return self._copy

    def _bf16_copy(self, data):
        if self.pairing is None:
            return self.layout.move_from(self._to_bf16, data.to(torch.bfloat16))
        # Each tile's reduced elements are its columns (rows fastest), back to back over the tiles:
        # one column-major matrix of `rows` rows whose column pairs the pack interleaves.
        copy = _memory.empty((self.layout.size,), torch.bfloat16)
        _weft.vnni2_pack(data.reshape(-1), copy, self.pairing[1])
        return copy

    def for_pass(self, passw, weight, refresh=False):
        w = self.compute_copy(weight, refresh)
        if passw.straight:
            return w
        return passw.layout.move_from(passw.to_op, w)

    @property
    def takes_column_major_f32(self):
        """Whether a bf16 update may write the fp32 sums in this weight's own column-major tiles
        (GemmBackwardWeights' dw_order='column_major'): where the bf16 layout pairs them."""
        return self.pairing is not None

    def gradient(self, passw, dw, master):
        """A pass's dW (bf16, or fp32 written in the bf16 tile order) as the fp32 parameter's
        gradient, in the fp32 layer's layout, its padding zero. (A GEMM update that wrote the
        fp32 layout itself, padding zero, is the gradient as it is: the Function takes it so.)"""
        if not passw.straight:
            dw = self.layout.move_from(passw.to_weight, dw)
        if self.pairing is None:
            out = self.fp32_layout.move_from(self._to_fp32, dw.to(master))
        else:
            out = _memory.empty((self.fp32_layout.size,), master)
            _weft.vnni2_unpack(dw.reshape(-1).to(master), out, self.pairing[1])
        if self.fp32_layout.padding.numel():
            out[self.fp32_layout.padding] = 0
        return out


class AutocastView:
    """A float32 layer as bf16 autocast runs it: what BlockedWeightFunction and the plans read of a
    layer (dtype, the weight state, the plans), bf16; everything else is the layer's."""

    def __init__(self, layer, reference):
        """reference: the bf16 forward operator of the layer's layout shape, prepared with the
        layer's tiles (or its own where it refuses them)."""
        self._layer = layer
        self.dtype = torch.bfloat16
        self._weft_dtype = "bf16"
        self._plans = {}
        fp32_layout = layer._weight.layout
        layout = BlockedLayout(reference, "w", fp32_layout.shape, torch.bfloat16)
        self._weight = AutocastWeight(fp32_layout, layout, layer._tiles)

    def __getattr__(self, name):
        return getattr(self._layer, name)
