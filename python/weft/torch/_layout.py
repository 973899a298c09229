"""Where each element of a plain weight sits in an operator's blocked copy, as an index map.

A weft operator converts its operands with op.to_blocked / op.from_blocked in its own dtype only.
weft.torch needs more: fp32 master weights in the layout of a bf16 operator (VNNI-2 tiles), the
gradient of one pass moved into the layout of another, and a mask of the zero padding. All of it
follows from one map, found by asking the operator itself: the plain weight filled with the digits
of each element's flat index (base 200, plus one: exact in bf16, which holds integers to 256, and
never zero, so that a zero in the blocked copy is padding) is converted once per digit. The map
is then applied by torch indexing, exactly, in any dtype.
"""
import math

import torch

_BASE = 200


class BlockedLayout:
    """The blocked layout of operand `name` of a prepared weft.ops operator (plain shape `shape`)."""

    def __init__(self, op, name, shape, dtype):
        self.shape = tuple(int(extent) for extent in shape)
        self.numel = math.prod(self.shape)
        self.size = int(op.blocked_size(name))
        remaining = torch.arange(self.numel, dtype=torch.int64)
        index = torch.zeros(self.size, dtype=torch.int64)
        valid = None
        scale = 1
        while True:
            digit = remaining % _BASE
            blocked = op.to_blocked(name, (digit + 1).to(dtype).reshape(self.shape))
            values = blocked.to(torch.int64)
            if valid is None:
                valid = values != 0
            index += (values - 1).clamp(min=0) * scale
            remaining = remaining // _BASE
            scale *= _BASE
            if not bool(remaining.any()):
                break
        self.positions = valid.nonzero().squeeze(1)   # blocked positions that hold an element
        self.sources = index[self.positions]          # the plain flat index each of them holds
        # A layout is a permutation plus zero padding: anything else means the probe misread it.
        if self.sources.numel() != self.numel or not bool(
                (torch.bincount(self.sources, minlength=self.numel) == 1).all()):
            raise RuntimeError(f"weft.torch: the blocked layout of operand {name!r} is not a permutation of its "
                               f"{self.numel} elements plus padding")
        self.padding = (~valid).nonzero().squeeze(1)  # stays zero: the kernels sum over it
        self._position_of = None

    def same_as(self, other):
        return self.size == other.size and torch.equal(self.positions, other.positions) and torch.equal(
            self.sources, other.sources)

    def to_blocked(self, plain):
        """A flat tensor of `size` elements, plain's dtype, zero padding."""
        out = torch.zeros(self.size, dtype=plain.dtype)
        out[self.positions] = plain.reshape(-1)[self.sources]
        return out

    def from_blocked(self, blocked):
        plain = torch.empty(self.numel, dtype=blocked.dtype)
        plain[self.sources] = blocked.reshape(-1)[self.positions]
        return plain.reshape(self.shape)

    def position_of(self):
        """plain flat index -> its blocked position."""
        if self._position_of is None:
            self._position_of = torch.empty(self.numel, dtype=torch.int64)
            self._position_of[self.sources] = self.positions
        return self._position_of

    def gather_from(self, other):
        """Index g such that blocked_here[positions] = blocked_there[g]: a tensor in `other`'s layout
        moved into this one by one gather (padding left zero)."""
        return other.position_of()[self.sources]

    def move_from(self, other, gather, blocked):
        out = torch.zeros(self.size, dtype=blocked.dtype)
        out[self.positions] = blocked[gather]
        return out


def same_layout(op_a, name_a, op_b, name_b, shape, dtype):
    """Whether two operators lay out operands of plain shape `shape` alike, by the same digit probes
    as BlockedLayout but without keeping an index map (activations may be large): equal blocked
    copies of every probe mean every element, and every zero of padding, at the same place."""
    if op_a.blocked_size(name_a) != op_b.blocked_size(name_b):
        return False
    remaining = torch.arange(math.prod(shape), dtype=torch.int64)
    while True:
        plain = (remaining % _BASE + 1).to(dtype).reshape(shape)
        if not torch.equal(op_a.to_blocked(name_a, plain), op_b.to_blocked(name_b, plain)):
            return False
        remaining = remaining // _BASE
        if not bool(remaining.any()):
            return True
