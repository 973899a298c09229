"""weft.torch.optimize(model): nn.Linear and nn.Conv2d layers swapped in place for weft.torch's,
their weights copied; a ReLU that follows one in an nn.Sequential fused into it. What is left to
PyTorch is listed with the reason."""
import torch
from torch import nn
from torch.nn.utils import parametrize

from .conv import Conv2d
from .linear import Linear

# What each layer kind runs in: weft's GEMM operators compute in float64 too, its convolutions do not.
_LINEAR_DTYPES = (torch.float32, torch.bfloat16, torch.float64)
_CONV_DTYPES = (torch.float32, torch.bfloat16)


class OptimizeReport:
    """swapped: [(name, what it became)]; left: [(name, why PyTorch keeps it)]."""

    def __init__(self):
        self.swapped, self.left = [], []

    def __str__(self):
        lines = [f"weft.torch.optimize: {len(self.swapped)} layers swapped, {len(self.left)} left to PyTorch"]
        lines += [f"  swapped {name}: {what}" for name, what in self.swapped]
        lines += [f"  left    {name}: {why}" for name, why in self.left]
        return "\n".join(lines)

    __repr__ = __str__


def _shared_parameters(model):
    """ids of parameters that more than one module holds (tied weights): their owners read them plain."""
    counts = {}
    for module in model.modules():
        for parameter in module._parameters.values():
            if parameter is not None:
                counts[id(parameter)] = counts.get(id(parameter), 0) + 1
    return {key for key, count in counts.items() if count > 1}


def _places(model):
    """How many places (a parent module's child slot, each parent counted once) each module fills:
    a module at several places is one layer there, its weights tied with itself."""
    counts = {}
    for parent in model.modules():
        for child in parent._modules.values():
            if child is not None:
                counts[id(child)] = counts.get(id(child), 0) + 1
    return counts


def _hook_names(hooks):
    return ", ".join(getattr(hook, "__name__", type(hook).__name__) for hook in hooks.values())


def _uncopied_reason(layer):
    """Why the weft layer, which holds a weight and a bias and runs nothing else, would not be the
    layer: what a hook or a parametrization does, or state beyond weight and bias, would be lost
    (weight_norm: a forward pre-hook computing weight from weight_g and weight_v). None if nothing."""
    if parametrize.is_parametrized(layer):
        return "parametrized (torch.nn.utils.parametrize): weft.torch's layers hold a plain weight"
    for hooks, what in ((layer._forward_pre_hooks, "forward pre-hook"), (layer._forward_hooks, "forward hook"),
                        (layer._backward_hooks, "backward hook")):
        if hooks:
            return f"it has a {what} ({_hook_names(hooks)}), which weft.torch's layer would not run"
    extra = sorted(set(layer._parameters) - {"weight", "bias"})
    if extra:
        return f"parameters {', '.join(extra)} beyond weight and bias: weft.torch's layer holds only those"
    if layer._buffers:
        return f"buffer {', '.join(map(repr, layer._buffers))}: weft.torch's layer holds only weight and bias"
    extra = sorted(set(layer.state_dict()) - {"weight", "bias"})
    if extra:
        return f"state_dict keys {', '.join(extra)} beyond weight and bias: weft.torch's layer holds only those"
    return None


def _common_reason(layer, shared):
    if isinstance(layer, nn.Linear) and layer.weight.dtype not in _LINEAR_DTYPES:
        return f"{layer.weight.dtype}: weft.torch swaps float32, bfloat16 and float64 linear layers"
    if isinstance(layer, nn.Conv2d) and layer.weight.dtype not in _CONV_DTYPES:
        return f"{layer.weight.dtype}: weft's convolutions compute in float32 and bfloat16"
    if layer.weight.device.type != "cpu":
        return f"on {layer.weight.device}: weft runs on the CPU"
    if id(layer.weight) in shared or (layer.bias is not None and id(layer.bias) in shared):
        return "its weight or bias is shared with another module (tied): that module reads it plain"
    return None


def _conv_padding(layer):
    """The padding as a pair of ints, or a reason it has none weft takes."""
    if isinstance(layer.padding, str):
        if layer.padding == "valid":
            return (0, 0)
        # 'same' with stride 1 (PyTorch's only case): symmetric for odd kernels only.
        if all(k % 2 == 1 for k in layer.kernel_size):
            return tuple(k // 2 for k in layer.kernel_size)
        return "padding='same' with an even kernel pads unevenly; weft pads symmetrically"
    return tuple(layer.padding)


def _master_dtype(layer, master_dtype):
    """The swapped layer's parameter dtype: the layer's own, or fp32 masters for a bf16 layer when
    master_dtype is torch.float32."""
    if master_dtype == torch.float32 and layer.weight.dtype == torch.bfloat16:
        return torch.float32
    return layer.weight.dtype


def _swap(name, layer, shared, threads, master_dtype):
    """(the weft.torch layer, description) or (None, reason)."""
    if isinstance(layer, (nn.Linear, nn.Conv2d)):
        reason = _uncopied_reason(layer)
        if reason:
            return None, reason
    if type(layer) is nn.Linear:
        reason = _common_reason(layer, shared)
        if reason:
            return None, reason
        new = Linear(layer.in_features, layer.out_features, bias=layer.bias is not None, dtype=layer.weight.dtype,
                     threads=threads, master_dtype=_master_dtype(layer, master_dtype))
    elif type(layer) is nn.Conv2d:
        reason = _common_reason(layer, shared)
        if reason is None and layer.groups != 1:
            reason = f"groups={layer.groups}: weft's convolution has no groups"
        if reason is None and tuple(layer.dilation) != (1, 1):
            reason = f"dilation={tuple(layer.dilation)}: weft's convolution has no dilation"
        if reason is None and layer.padding_mode != "zeros":
            reason = f"padding_mode={layer.padding_mode!r}: weft pads with zeros"
        padding = _conv_padding(layer) if reason is None else None
        if isinstance(padding, str):
            reason = padding
        if reason:
            return None, reason
        new = Conv2d(layer.in_channels, layer.out_channels, tuple(layer.kernel_size), stride=tuple(layer.stride),
                     padding=padding, bias=layer.bias is not None, dtype=layer.weight.dtype, threads=threads,
                     master_dtype=_master_dtype(layer, master_dtype))
    elif isinstance(layer, (nn.Linear, nn.Conv2d)):
        return None, f"{type(layer).__name__}, a subclass of {type(layer).__mro__[1].__name__}: its owner may read " \
                     ".weight plain"
    else:
        return None, None
    new.load_state_dict(layer.state_dict())
    new.train(layer.training)
    new.weight.requires_grad_(layer.weight.requires_grad)
    if layer.bias is not None:
        new.bias.requires_grad_(layer.bias.requires_grad)
    return new, None


def optimize(model, threads=None, master_dtype=None):
    """Swaps, in place, the nn.Linear and nn.Conv2d layers of `model` (itself included only through
    its children: pass a container) that weft.torch runs, for weft.torch.Linear / Conv2d with the
    same weights; fuses an nn.ReLU that follows one of them in an nn.Sequential (the ReLU becomes
    nn.Identity, so state_dict keys stay). Returns an OptimizeReport (print it) of what was swapped
    and what was left to PyTorch, and why: among others layers with hooks, parametrizations or
    state beyond weight and bias, which the weft layer would not reproduce. A module used at
    several places becomes one weft layer at each of them (no ReLU fused into it). Create the
    optimizer after this call: the parameters are new ones.

    The swapped layers compute in their weights' dtype and keep it for their parameters, as the
    model had them (a bf16 model trains in bf16, as torch.nn's); master_dtype=torch.float32 gives
    the bf16 layers fp32 master weights instead (their values exactly, widened)."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"argument 'model' must be a torch.nn.Module, not {type(model).__name__}")
    if master_dtype not in (None, torch.float32):
        raise TypeError(f"argument 'master_dtype' must be None (each layer's own dtype) or torch.float32 (fp32 "
                        f"masters for bf16 layers), not {master_dtype!r}")
    # Every layer is made (its weights copied) before any is put in: an error on the way leaves
    # the model as it was, not half converted.
    walk = _Walk(report=OptimizeReport(), shared=_shared_parameters(model), places=_places(model), threads=threads,
                 master_dtype=master_dtype)
    _optimize_children(model, "", walk)
    for parent, name, new in walk.edits:
        parent._modules[name] = new
    return walk.report


class _Walk:
    """What optimize's walk through the model carries: the arguments, the report, the module
    replacements to make (parent, name, new), and the modules met already: a swapped one
    (id -> (its weft layer, where it was swapped)) is that same layer at its other places, and a
    container's layers are swapped where it is first met."""

    def __init__(self, report, shared, places, threads, master_dtype):
        self.report, self.shared, self.places = report, shared, places
        self.threads, self.master_dtype = threads, master_dtype
        self.edits, self.swapped, self.visited = [], {}, set()


def _optimize_children(module, prefix, walk):
    report = walk.report
    if isinstance(module, nn.MultiheadAttention):
        report.left.append((prefix.rstrip(".") or "(model)", "nn.MultiheadAttention reads its projections plain"))
        return
    names = list(module._modules)
    for position, name in enumerate(names):
        child = module._modules[name]
        if child is None:
            continue
        qualified = prefix + name
        if id(child) in walk.swapped:
            new, first = walk.swapped[id(child)]
            walk.edits.append((module, name, new))
            report.swapped.append((qualified, f"the same layer as {first} (one module, at several places)"))
            continue
        if id(child) in walk.visited:
            continue
        new, reason = _swap(qualified, child, walk.shared, walk.threads, walk.master_dtype)
        if new is not None:
            walk.swapped[id(child)] = (new, qualified)
            walk.edits.append((module, name, new))
            following = module._modules[names[position + 1]] if position + 1 < len(names) else None
            relu_next = isinstance(module, nn.Sequential) and type(following) is nn.ReLU
            # A layer at several places is one module: a ReLU fused here would act at the others.
            fused = relu_next and walk.places.get(id(child), 1) == 1
            if fused:
                new.relu = True
                new._plans.clear()
                walk.edits.append((module, names[position + 1], nn.Identity()))
            what = f"weft.torch.{type(new).__name__}({new.extra_repr()})"
            if fused:
                what += f", fused the ReLU {prefix + names[position + 1]}"
            elif relu_next:
                what += f", the ReLU {prefix + names[position + 1]} not fused: the layer is at other places too"
            report.swapped.append((qualified, what))
        elif reason is not None:
            report.left.append((qualified, reason))
        else:
            walk.visited.add(id(child))
            _optimize_children(child, qualified + ".", walk)
