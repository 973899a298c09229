"""What weft.torch's layers share: dtypes, the thread team, argument checks, and the weights of one
layer as the passes read them (the blocked parameter, its bf16 copy, moves between layouts)."""
import re

import torch

from .. import _weft
from . import _memory
from ._autocast import AutocastView
from ._layout import BlockedLayout, same_layout

# The compute dtypes and what weft.ops calls them. float64: weft's GEMM operators in float64
# (gradcheck); the convolutions have none, and weft.ops says so when asked.
WEFT_DTYPES = {torch.float32: "f32", torch.bfloat16: "bf16", torch.float64: "f64"}


def compute_dtype(dtype):
    if dtype not in WEFT_DTYPES:
        raise TypeError(f"argument 'dtype' must be torch.float32, torch.bfloat16 or torch.float64, not {dtype}")
    return dtype


def master_dtype(dtype, requested=None):
    """The parameters' dtype for compute dtype `dtype`: `requested`, or by default the compute dtype
    itself, but fp32 masters for bf16 compute (the optimizer steps in fp32). bf16 compute takes
    requested=torch.bfloat16 too: bf16 parameters and gradients, as a torch.nn model in bf16."""
    default = torch.float32 if dtype == torch.bfloat16 else dtype
    if requested is None:
        return default
    if requested not in (dtype, default):
        allowed = "torch.float32 or torch.bfloat16" if dtype == torch.bfloat16 else str(dtype)
        raise TypeError(f"argument 'master_dtype' must be {allowed} for dtype={dtype}, not {requested}")
    return requested


def master_repr(layer):
    """', master_dtype=...' for a layer's repr when it is not its dtype's default."""
    return "" if layer.master_dtype == master_dtype(layer.dtype) else f", master_dtype={layer.master_dtype}"


def default_threads():
    """weft.set_num_threads(n) if it was called, else PyTorch's own team (torch.get_num_threads()):
    `import torch` resets OpenMP's count of the importing thread (to 1 with Debian's build), so
    OpenMP's default would follow torch anyway, but only on that thread."""
    requested = _weft.requested_num_threads()
    return requested if requested > 0 else torch.get_num_threads()


def check_threads(threads):
    if threads is None:
        return None
    if not isinstance(threads, int) or isinstance(threads, bool):
        raise TypeError(f"argument 'threads' must be an int or None, not {type(threads).__name__}")
    if threads < 1:
        raise ValueError(f"argument 'threads' must be >= 1, got {threads}")
    return threads


def check_input(x, name, dtype, rank_text, ok_rank):
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"argument '{name}' must be a torch.Tensor, not {type(x).__name__}")
    if x.dtype != dtype:
        raise TypeError(f"argument '{name}' is a tensor of {x.dtype}, but the layer computes in {dtype}")
    if x.device.type != "cpu":
        raise ValueError(f"argument '{name}' is on {x.device}: weft runs on the CPU")
    if not ok_rank(x.dim()):
        raise ValueError(f"argument '{name}' must be {rank_text}, got shape {tuple(x.shape)}")
    if not x.is_contiguous():
        raise ValueError(f"argument '{name}' is not contiguous: weft reads C-contiguous tensors (call .contiguous())")


def description_knobs(description, names):
    """The knobs `names` of a prepared operator's one-line description ('... bm=64 bn=48 bk=64 ...')."""
    found = {}
    for name in names:
        match = re.search(rf"\b{name}=(\d+)\b", description)
        if match is None:
            return None
        found[name] = int(match.group(1))
    return found


def tile_bound_config(tiles):
    """The config= that asks a pass for its best configuration with the layer's tiles ({'bm': ..,
    'bk': ..} or {'bc': .., 'bk': ..}): a tile-bound tuning record (weft-tune --tile-bound), else a
    free one with these tiles, else the untuned choice with them; None without tiles."""
    return None if tiles is None else dict(tiles)


def bf16_reference(make, tiles):
    """make(config): the bf16 forward operator of a float32 layer's layout shape, for its autocast
    view: prepared with the layer's tiles (its bf16 layout is then the fp32 one paired), or its own
    choice where it takes none of them."""
    bound = tile_bound_config(tiles)
    if bound is not None:
        try:
            return make(bound)
        except ValueError:
            pass
    return make("auto")


def prepared_pass(make, key, name, weight_layout, tiles):
    """PassWeight of the operator make('auto') prepares, or, when it blocks the weight otherwise
    than the layer, of the one prepared bound to the layer's tiles (tile_bound_config) if that
    blocks it as the layer does: the weight is then read in place instead of through a gather per
    call."""
    op, op_key = make("auto"), key + ("auto",)
    bound = tile_bound_config(tiles)
    if not weight_layout.matches(op, name) and bound is not None:
        try:
            candidate = make(bound)
        except ValueError:
            candidate = None  # the pass takes no configuration with these tiles
        if candidate is not None and weight_layout.matches(candidate, name):
            op, op_key = candidate, key + (tuple(sorted(bound.items())),)
    return PassWeight(op, name, weight_layout, op_key)


_layouts = {}
_alike = {}


def operands_alike(pass_a, name_a, pass_b, name_b, shape, dtype):
    """Whether two prepared passes lay out an activation operand alike (then one blocked copy serves
    both: converted once per step instead of twice); remembered by the passes' keys."""
    key = (pass_a.key, name_a, pass_b.key, name_b, dtype)
    if key not in _alike:
        if len(_alike) >= 1024:
            _alike.pop(next(iter(_alike)))
        _alike[key] = same_layout(pass_a.op, name_a, pass_b.op, name_b, shape, dtype)
    return _alike[key]


def layout_of(key, op, name, shape, dtype):
    """BlockedLayout of a layer's weight, remembered by the arguments its operator was prepared with
    (`key`): layers of one shape probe it once and share the map."""
    full_key = key + (name, dtype)
    layout = _layouts.get(full_key)
    if layout is None:
        if len(_layouts) >= 64:
            _layouts.pop(next(iter(_layouts)))
        layout = _layouts[full_key] = BlockedLayout(op, name, shape, dtype)
    return layout


class PassWeight:
    """A pass's operator and how it reads (or writes) the layer's weight: straight from the
    blocked parameter when it lays the weight out as the layer does, else through one gather each
    way (the pass's own map and the gathers kept only then)."""

    def __init__(self, op, name, weight_layout, key):
        self.op = op
        self.key = key  # what the operator was prepared with
        self.straight = weight_layout.matches(op, name)
        self.layout = None
        if not self.straight:
            self.layout = BlockedLayout(op, name, weight_layout.shape, weight_layout.dtype)
            self.to_op = self.layout.gather_from(weight_layout)
            self.to_weight = weight_layout.gather_from(self.layout)


class WeightState:
    """The blocked parameter's layout and its bf16 copy, kept while the parameter is unchanged."""

    def __init__(self, layout, dtype):
        self.layout = layout
        self.dtype = dtype  # compute dtype
        self._copy = None
        self._copy_key = None

    def compute_copy(self, weight, refresh=False):
        """The weight in the compute dtype: the parameter itself, or its bf16 copy. The forward
        makes the copy anew (refresh): a change through .data bypasses the version counter, so a
        copy kept across forwards could be stale (autocast's cast cache, too, lives for one
        forward). The backward passes reuse the forward's copy while the parameter's storage and
        version are unchanged."""
        data = weight.detach()
        if self.dtype == data.dtype:
            return data
        key = (data.data_ptr(), weight._version)
        if refresh or self._copy_key != key:
            # Into the last copy when there is one: only the passes read it, within a call (a
            # weight changed between a forward and its backward is autograd's error anyway).
            if self._copy is None or self._copy.shape != data.shape:
                # A normal tensor even when made under torch.inference_mode: an inference tensor
                # could never be copied into again outside it. (Into a normal one, inference mode
                # copies too.)
                with torch.inference_mode(False):
                    self._copy = _memory.empty(data.shape, self.dtype)
            self._copy.copy_(data)
            self._copy_key = key
        return self._copy

    def for_pass(self, passw, weight, refresh=False):
        w = self.compute_copy(weight, refresh)
        if passw.straight:
            return w
        return passw.layout.move_from(passw.to_op, w)

    # Only an AutocastWeight takes a bf16 update's fp32 sums in column-major tiles.
    takes_column_major_f32 = False

    def gradient(self, passw, dw, master):
        """The weight gradient of a pass's blocked output, in the parameter's layout and dtype, its
        padding zero (an optimizer step then leaves the padding zero)."""
        if not passw.straight:
            dw = self.layout.move_from(passw.to_weight, dw)
        if dw.dtype != master:
            dw = _memory.empty(dw.shape, master).copy_(dw)
        if self.layout.padding.numel():
            dw[self.layout.padding] = 0
        return dw


def check_parameter_dtype(weight, master, layer):
    if weight.dtype != master:
        raise TypeError(f"{layer}: the parameters are {weight.dtype}, the layer was made for {master} "
                        "(a weft.torch layer keeps the dtype of its construction; .to(dtype), .double() do not "
                        "convert its blocked layout)")


class BlockedWeightModule(torch.nn.Module):
    """What Linear and Conv2d share: the plans per input shape and team, the plain weight, state
    dicts in the plain layout, and copies (deepcopy, pickling: the prepared operators stay behind and
    are prepared again, from weft.ops' cache, on the next call)."""

    def _cached_plan(self, shape, make, layer=None):
        """The plan of `shape` for `layer`: this layer, or its bf16 autocast view (_autocast.py)."""
        layer = self if layer is None else layer
        threads = self.threads or default_threads()
        key = (shape, threads)
        plan = layer._plans.get(key)
        if plan is None:
            try:
                plan = layer._plans[key] = make(layer, shape, threads)
            finally:
                layer._weight.layout.release_probes()  # kept while the plan's passes were compared
        return plan

    def _autocast_view(self):
        """This float32 layer as bf16 autocast runs it (_autocast.AutocastView), made on first use."""
        view = self.__dict__.get("_autocast")
        if view is None:
            view = self._autocast = AutocastView(self, self._bf16_reference())
        return view

    def plain_weight(self):
        """The weight as torch.nn's layer holds it ((out, in) or (out, in, kh, kw)), a new tensor."""
        return self._weight.layout.from_blocked(self.weight.detach())

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_plans"] = {}
        state["_weight"] = WeightState(self._weight.layout, self._weight.dtype)
        state.pop("_autocast", None)  # made again on first use
        return state

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # The plain weight (a new tensor in the master dtype), the bias as it is.
        destination[prefix + "weight"] = self.plain_weight()
        if self.bias is not None:
            destination[prefix + "bias"] = self.bias if keep_vars else self.bias.detach()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        # The plain weight is blocked into a copy of the dict; nn.Module's loader then copies it into
        # the parameter. A plain weight of another shape is reported as nn.Module reports one.
        key = prefix + "weight"
        if key in state_dict:
            plain = state_dict[key]
            state_dict = dict(state_dict)
            shape = self._weight.layout.shape
            if not isinstance(plain, torch.Tensor) or tuple(plain.shape) != shape:
                got = tuple(plain.shape) if isinstance(plain, torch.Tensor) else type(plain).__name__
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {got} from checkpoint, the "
                                  f"shape in current model is {shape} (weft.torch keeps it blocked, state_dict holds "
                                  "it plain).")
                state_dict[key] = self.weight.detach()  # nothing changes
            else:
                state_dict[key] = self._weight.layout.to_blocked(plain.detach().to(self.master_dtype))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)
