"""Output arrays like the inputs: NumPy arrays for NumPy inputs, torch tensors for torch ones.

torch is looked up in sys.modules only: a caller who passes a torch tensor has imported it, and weft
itself never imports it (weft must import where PyTorch is absent).
"""
import sys

import numpy as np

_NUMPY_DTYPES = {"f32": np.float32, "f64": np.float64, "bf16": np.uint16}


def _torch_module_of(array):
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(array, torch.Tensor):
        return torch
    return None


def dtype_name(array, name, declared=None):
    """'f32', 'f64' or 'bf16' for the array of argument `name` (uint16 counts as bf16 only when
    declared so)."""
    if declared is not None:
        # Checked here as the extension's dtype parser checks it: where the output is made from
        # the name (no out=), an unknown one would otherwise fail as a bare KeyError.
        if not isinstance(declared, str):
            raise TypeError("argument 'dtype' must be a string such as 'bf16'")
        names = {"f32": "f32", "float32": "f32", "f64": "f64", "float64": "f64", "bf16": "bf16", "bfloat16": "bf16"}
        if declared not in names:
            raise ValueError(f"argument 'dtype': {declared!r} is none of 'f32', 'f64', 'bf16'")
        return names[declared]
    torch = _torch_module_of(array)
    if torch is not None:
        names = {torch.float32: "f32", torch.float64: "f64", torch.bfloat16: "bf16"}
        if array.dtype in names:
            return names[array.dtype]
        raise TypeError(f"argument '{name}' is a tensor of {array.dtype}: weft takes float32, float64 and bfloat16")
    dtype = np.dtype(getattr(array, "dtype", np.float32))
    if dtype == np.float32:
        return "f32"
    if dtype == np.float64:
        return "f64"
    raise TypeError(f"argument '{name}' is an array of {dtype}: weft takes float32, float64 and bfloat16 (uint16 with dtype='bf16')")


def empty_like_kind(model, shape, dtype):
    """An uninitialized C-contiguous array of `shape` and weft dtype name `dtype`, of model's kind."""
    torch = _torch_module_of(model)
    if torch is not None:
        torch_dtypes = {"f32": torch.float32, "f64": torch.float64, "bf16": torch.bfloat16}
        return torch.empty(tuple(shape), dtype=torch_dtypes[dtype])
    return np.empty(tuple(shape), dtype=_NUMPY_DTYPES[dtype])


def shape_of(array, name):
    """The shape of the array of argument `name`; TypeError for what is no array."""
    shape = getattr(array, "shape", None)
    if shape is None or isinstance(array, type):
        raise TypeError(f"argument '{name}' must be a NumPy array or a DLPack tensor (torch.Tensor), "
                        f"not {type(array).__name__}")
    return tuple(int(extent) for extent in shape)
