"""The autograd.Function of weft.torch's layers: a weft forward operator, and in the backward pass
its two backward operators, on plain activations and the layer's blocked weight.

Each activation is converted into the blocked layout once per pass that reads it, and the outputs
back to plain tensors (other PyTorch operations may come between layers), except where a pass
takes the plain tensor itself (plan.x_plain, y_plain, dx_plain, upd_x_plain, bwd_dy_plain,
upd_dy_plain: weft.ops' GEMM passes). Where two passes lay an activation out alike
(plan.x_shared: the forward's and the update's x; plan.dy_shared: the two backward passes' dy)
one copy serves both.

A bias whose blocked layout is its plain one (plan.bias_plain: its length a multiple of the
tile) is read in place.

The blocked copies that never leave one call (the forward's blocked y; the backward's blocked dy,
dx and, in bf16, dw) are kept per thread and reused by the next call of the same size: glibc hands
multi-megabyte blocks back to the system when they are freed, and touching a new one again faults
in every page (on a Zen 5 VM a 2048-wide bf16 MLP step spent more time there than in its GEMMs).
What escapes a call (outputs, gradients, the blocked x kept for the backward pass) is allocated
anew, from weft's recycling pool (_memory.py: freed blocks keep their pages for the next step).
release_scratch() frees the kept copies of the calling thread and the pool's free blocks.
"""
import threading

import torch

from . import _memory

_scratch = threading.local()


def _kept_buffer(key, shape, dtype):
    pool = getattr(_scratch, "pool", None)
    if pool is None:
        pool = _scratch.pool = {}
    buffer = pool.get(key)
    if buffer is None:
        buffer = pool[key] = _memory.empty(shape, dtype)
    return buffer


def _kept(role, op, name, dtype):
    """The calling thread's blocked buffer for `role` (one per size and dtype) of operand `name`."""
    size = op.blocked_size(name)
    return _kept_buffer((role, size, dtype), size, dtype)


def _kept_plain(role, shape, dtype):
    """The calling thread's buffer for plain tensor `role` of `shape`."""
    return _kept_buffer(("plain " + role, tuple(shape), dtype), shape, dtype)


def _new(op, name, dtype, blocked):
    """A new tensor (it escapes the call) for operand `name`: its blocked copy or its plain shape."""
    return _memory.empty(op.blocked_size(name) if blocked else op.plain_shape(name), dtype)


def release_scratch():
    """Frees the blocked buffers weft.torch's layers keep for the calling thread between calls, and
    the free blocks of weft's recycling pool (weft.torch.memory_stats())."""
    _scratch.pool = {}
    _memory.release()


class BlockedWeightFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, layer, plan):
        fwd = plan.fwd.op
        x = x.detach()
        if plan.x_plain:
            xb = x.reshape(-1)
        else:
            xb = fwd.to_blocked("x", x, out=_new(fwd, "x", layer.dtype, True) if plan.x_shared else
                                _kept("x", fwd, "x", layer.dtype))
        bb = None if bias is None else bias.detach().to(layer.dtype)
        if bb is not None and not plan.bias_plain:
            bb = fwd.to_blocked("b", bb)
        if plan.y_plain:
            y = _new(fwd, "y", layer.dtype, False)
            fwd(xb, layer._weight.for_pass(plan.fwd, weight, refresh=True), bb, layout="blocked", out=y.reshape(-1))
        else:
            yb = fwd(xb, layer._weight.for_pass(plan.fwd, weight, refresh=True), bb, layout="blocked",
                     out=_kept("y", fwd, "y", layer.dtype))
            y = fwd.from_blocked("y", yb, out=_new(fwd, "y", layer.dtype, False))
        ctx.layer, ctx.plan = layer, plan
        ctx.save_for_backward(xb if plan.x_shared else x, weight, y if layer.relu else None)
        return y

    @staticmethod
    def backward(ctx, dy):
        with torch.no_grad():
            gradients = _gradients(ctx, dy.detach())
        if torch.is_grad_enabled():  # create_graph=True
            gradients = _differentiable_once(gradients)
        return gradients + (None, None)


def _differentiable_once(gradients):
    """The gradients, made to raise when differentiated again. weft's passes are no torch
    operations: the gradients have no graph of their own, and a second differentiation would drop
    the layer's terms silently. @once_differentiable alone guards only where the incoming dy
    requires grad; so, as it does, the gradients are tied to a node that refuses, in every case."""
    present = [g for g in gradients if g is not None]
    if not present:
        return gradients
    refused = iter(_SecondDerivativeRefused.apply(*(g.detach().requires_grad_() for g in present)))
    return tuple(None if g is None else next(refused) for g in gradients)


class _SecondDerivativeRefused(torch.autograd.Function):
    @staticmethod
    def forward(ctx, *gradients):
        return gradients

    @staticmethod
    def backward(ctx, *_):
        raise RuntimeError("weft.torch's layers are differentiable once: their backward passes are weft's operators, "
                           "which autograd cannot differentiate (no double backward, gradient penalties or Hessians "
                           "through them)")


def _gradients(ctx, dy):
    """dx, dw and db of BlockedWeightFunction (those it needs), from a detached dy."""
    x, weight, y = ctx.saved_tensors
    layer, plan = ctx.layer, ctx.plan
    y = None if y is None else y.detach()  # the ReLU's output, the mask of its backward
    # The ReLU's backward (where the forward fused one) goes into the conversions of dy into
    # the passes' layouts (one pass over dy and y per conversion; where both passes read dy
    # plain, one masked plain copy serves both), and the bias gradient is summed from that
    # masked dy. The conversions read a contiguous dy: an expanded one (a loss's sum()) is
    # copied into a kept buffer first.
    dy = dy.to(layer.dtype)
    if not dy.is_contiguous():
        dy = _kept_plain("dy", dy.shape, dy.dtype).copy_(dy)
    dx = dw = db = dyb = dy_upd = None

    def dy_for(op, plain, role):
        # dy in the pass's layout through the ReLU's mask: the incoming tensor itself where
        # the pass reads dy plain and no ReLU masks it.
        if plain and y is None:
            return dy.reshape(-1)
        return op.to_blocked("dy", dy, out=_kept(role, op, "dy", layer.dtype), relu_of=y)

    if ctx.needs_input_grad[0]:
        bwd = plan.bwd.op
        dyb = dy_for(bwd, plan.bwd_dy_plain, "dy")
        if plan.dx_plain:
            dx = _new(bwd, "dx", layer.dtype, False)
            bwd(dyb, layer._weight.for_pass(plan.bwd, weight), layout="blocked", out=dx.reshape(-1))
        else:
            dxb = bwd(dyb, layer._weight.for_pass(plan.bwd, weight), layout="blocked",
                      out=_kept("dx", bwd, "dx", layer.dtype))
            dx = bwd.from_blocked("dx", dxb, out=_new(bwd, "dx", layer.dtype, False))
    if ctx.needs_input_grad[1]:
        upd = plan.upd.op
        dy_upd = dyb if dyb is not None and plan.dy_shared else dy_for(upd, plan.upd_dy_plain, "dy_upd")
        if plan.x_shared:
            x_upd = x
        elif plan.upd_x_plain:
            x_upd = x.reshape(-1)
        else:
            x_upd = upd.to_blocked("x", x, out=_kept("x_upd", upd, "x", layer.dtype))
        # The blocked dW is the gradient itself when the pass writes it in the parameters' dtype
        # (it escapes): always for fp32, fp64 and bf16 parameters; for fp32 masters of bf16
        # compute when the pass lays dW out as the parameter (fp32 sums unrounded, in the bf16
        # tile order). Else a bf16 dW is kept, and moved and widened into a new fp32 tensor.
        straight_f32 = layer.dtype != weight.dtype and plan.upd.straight and upd.writes_f32_output
        # Under autocast, an fp32 weight whose tiles the bf16 passes pair takes the sums in its
        # own column-major tiles (_autocast.py): the gradient itself, nothing to move.
        column_major = straight_f32 and layer._weight.takes_column_major_f32 and upd.writes_f32_column_major
        dwb = upd(dy_upd, x_upd, layout="blocked",
                  out=_new(upd, "dw", weight.dtype, True) if layer.dtype == weight.dtype or straight_f32 else
                  _kept("dw", upd, "dw", layer.dtype), **({"dw_order": "column_major"} if column_major else {}))
        dw = dwb if column_major else layer._weight.gradient(plan.upd, dwb, weight.dtype)
    if ctx.needs_input_grad[2]:
        # Summed in fp32 or fp64 (weft's reduction TPPs: torch 1.13 sums bf16 into fp32 some 15x
        # slower than in bf16, and bf16 sums would round each partial sum).
        op, blocked = (plan.bwd.op, dyb) if dyb is not None else (plan.upd.op, dy_upd)
        if blocked is None:  # only the bias needs its gradient
            blocked = dy_for(op, plan.upd_dy_plain, "dy")
        sums = torch.float32 if weight.dtype == torch.bfloat16 else weight.dtype  # bf16 parameters: rounded after
        db = op.channel_sums("dy", blocked, out=torch.empty(op.plain_shape("dy")[1], dtype=sums)).to(weight.dtype)
    return dx, dw, db
