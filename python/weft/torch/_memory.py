"""Memory of the large tensors weft.torch makes: outputs, gradients, blocked copies.

They come from weft's recycling pool (weft._weft.recycled_block, wrapped by torch.frombuffer):
when the last tensor on a block is freed, the block returns to the pool with its pages mapped, and
the next step's tensor of that size takes it. glibc gives freed blocks of megabytes back to the
system instead, so a training step that frees its gradients (zero_grad(set_to_none=True)) and
makes them again faults in every page anew; on a virtual machine that may cost more than the
step's GEMMs (48 ms to first touch 16 MB on a Zen 5 guest). Blocks of 2 MiB and more are huge
pages where the kernel allows it (transparent huge pages in "madvise" mode).

The pool keeps at most an eighth of the machine's memory in free blocks (set_memory_limit);
weft.torch.release_scratch() frees them, weft.torch.memory_stats() tells what it holds.
"""
import math

import torch

from .. import _weft

# Smaller tensors come from torch.empty: glibc serves them from its heap without new faults.
RECYCLED_FROM_BYTES = 1 << 18


def empty(shape, dtype):
    """An uninitialized contiguous tensor of `shape` (a tuple or an element count) and `dtype`."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    nbytes = math.prod(shape) * (torch.finfo(dtype).bits // 8)
    if nbytes < RECYCLED_FROM_BYTES:
        return torch.empty(shape, dtype=dtype)
    return torch.frombuffer(_weft.recycled_block(nbytes), dtype=dtype).view(shape)


def release():
    _weft.release_recycled_memory()


def set_memory_limit(nbytes):
    """How many bytes of free blocks the recycling pool keeps at most (0: none; an eighth of the
    machine's memory unless set). A limit below what it holds frees its free blocks."""
    _weft.set_recycled_memory_limit(nbytes)


def memory_stats():
    """The recycling pool: bytes in free blocks ('cached_bytes') and in tensors ('in_use_bytes'),
    its 'limit_bytes', and how many blocks it allocated and reused."""
    return dict(_weft.recycled_memory_stats())
