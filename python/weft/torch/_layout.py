"""Where each element of a plain weight sits in an operator's blocked copy, as an index map.

A weft operator converts its operands with op.to_blocked / op.from_blocked in its own dtype only.
weft.torch needs more: fp32 master weights in the layout of a bf16 operator (VNNI-2 tiles), the
gradient of one pass moved into the layout of another, and a mask of the zero padding. All of it
follows from one map, found by asking the operator itself: the plain weight filled with the digits
of each element's flat index (plus one, never zero, so that a zero in the blocked copy is padding;
digits of 8 bits in bf16, which holds integers to 256 exactly, of 24 in fp32) is converted once per
digit. The map is
then applied by torch indexing, exactly, in any dtype.

Memory: one int32 per blocked element (int64 beyond 2^31 elements), kept once per layer shape;
whether another operator lays the weight out alike is found by the same probes without a map.
"""
import math

import torch

from . import _memory

# Probe digits: (digit + 1) must be an integer the dtype holds exactly (bf16 to 2^8, fp32 to 2^24,
# fp64 to 2^53), so that a float32 weight of up to 2^24 elements takes one probe.
_BASES = {torch.bfloat16: 2 ** 8, torch.float32: 2 ** 24, torch.float64: 2 ** 53}


def _digit_probes(numel, shape, dtype):
    """The plain probes, one per digit of the flat indices: (digit + 1) as `dtype`, and its scale."""
    base = _BASES[dtype]
    remaining = torch.arange(numel, dtype=torch.int64)
    scale = 1
    while True:
        if numel <= base:
            digit = remaining  # the last digit: no division needed
        else:
            digit = remaining % base
        yield (digit + 1).to(dtype).reshape(shape), scale
        if numel <= base * scale:
            return
        remaining = remaining // base
        scale *= base


class BlockedLayout:
    """The blocked layout of operand `name` of a prepared weft.ops operator (plain shape `shape`)."""

    def __init__(self, op, name, shape, dtype):
        self.shape = tuple(int(extent) for extent in shape)
        self.numel = math.prod(self.shape)
        self.size = int(op.blocked_size(name))
        self.dtype = dtype
        index_type = torch.int32 if self.numel < 2 ** 31 else torch.int64
        index = torch.zeros(self.size, dtype=torch.int64)
        valid = None
        for plain, scale in _digit_probes(self.numel, self.shape, dtype):
            values = op.to_blocked(name, plain).to(torch.int64)
            if valid is None:
                valid = values != 0
            index += (values - 1).clamp(min=0) * scale
        index[~valid] = -1
        # A layout is a permutation plus zero padding: anything else means the probe misread it.
        sources = index[valid]
        if sources.numel() != self.numel or not bool((torch.bincount(sources, minlength=self.numel) == 1).all()):
            raise RuntimeError(f"weft.torch: the blocked layout of operand {name!r} is not a permutation of its "
                               f"{self.numel} elements plus padding")
        self.index = index.to(index_type)  # blocked position -> plain flat index, -1: padding
        self.padding = (~valid).nonzero().squeeze(1)  # stays zero: the kernels sum over it
        self._probes = None

    def matches(self, op, name):
        """Whether operator `op` lays operand `name` out as this layout (by the probes, no map). The
        probes and their blocked images are kept until release_probes(): a plan asks several passes."""
        if int(op.blocked_size(name)) != self.size:
            return False
        if self._probes is None:
            self._probes = [(plain, self.to_blocked(plain))
                            for plain, _ in _digit_probes(self.numel, self.shape, self.dtype)]
        return all(torch.equal(op.to_blocked(name, plain), expected) for plain, expected in self._probes)

    def release_probes(self):
        self._probes = None

    def same_as(self, other):
        return self.size == other.size and torch.equal(self.index, other.index)

    def to_blocked(self, plain):
        """A flat tensor of `size` elements, plain's dtype, zero padding."""
        out = plain.reshape(-1)[self.index.clamp(min=0).long()]
        if self.padding.numel():
            out[self.padding] = 0
        return out

    def from_blocked(self, blocked):
        valid = self.index >= 0
        plain = torch.empty(self.numel, dtype=blocked.dtype)
        plain[self.index[valid].long()] = blocked.reshape(-1)[valid]
        return plain.reshape(self.shape)

    def gather_from(self, other):
        """Index g with blocked_here = blocked_there[g] (padding here: any position, zeroed after): a
        tensor in `other`'s layout moved into this one by one gather."""
        position_of = torch.empty(other.numel, dtype=torch.int64)
        valid = other.index >= 0
        position_of[other.index[valid].long()] = valid.nonzero().squeeze(1)
        return position_of[self.index.clamp(min=0).long()]

    def move_from(self, gather, blocked):
        out = torch.index_select(blocked, 0, gather, out=_memory.empty(gather.numel(), blocked.dtype))
        if self.padding.numel():
            out[self.padding] = 0
        return out


def same_layout(op_a, name_a, op_b, name_b, shape, dtype):
    """Whether two operators lay out operands of plain shape `shape` alike, by the same digit probes
    as BlockedLayout but without keeping an index map (activations may be large): equal blocked
    copies of every probe mean every element, and every zero of padding, at the same place."""
    if op_a.blocked_size(name_a) != op_b.blocked_size(name_b):
        return False
    return all(torch.equal(op_a.to_blocked(name_a, plain), op_b.to_blocked(name_b, plain))
               for plain, _ in _digit_probes(math.prod(shape), shape, dtype))


def is_plain(op, name, shape, dtype):
    """Whether operator `op` lays operand `name` (plain shape `shape`) out as its plain layout: no
    padding, no permutation (a bias whose length is a multiple of the tile). The blocked copy is
    then the plain tensor itself, read in place, so nothing has to be kept or converted per call."""
    numel = math.prod(shape)
    if op.blocked_size(name) != numel:
        return False
    return all(torch.equal(op.to_blocked(name, plain), plain.reshape(-1))
               for plain, _ in _digit_probes(numel, shape, dtype))
