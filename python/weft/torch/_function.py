"""The autograd.Function of weft.torch's layers: a weft forward operator, and in the backward pass
its two backward operators, on plain activations and the layer's blocked weight.

Each activation is converted into the blocked layout once per pass that reads it, and the outputs
back to plain tensors (other PyTorch operations may come between layers). Where two passes lay an
activation out alike (plan.x_shared: the forward's and the update's x; plan.dy_shared: the two
backward passes' dy) one blocked copy serves both.
"""
import torch


class BlockedWeightFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, layer, plan, bias_dims):
        fwd = plan.fwd.op
        x = x.detach()
        xb = fwd.to_blocked("x", x)
        bb = None if bias is None else fwd.to_blocked("b", bias.detach().to(layer.dtype))
        y = fwd.from_blocked("y", fwd(xb, layer._weight.for_pass(plan.fwd, weight), bb, layout="blocked"))
        ctx.layer, ctx.plan, ctx.bias_dims = layer, plan, bias_dims
        ctx.save_for_backward(xb if plan.x_shared else x, weight, y if layer.relu else None)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight, y = ctx.saved_tensors
        layer, plan = ctx.layer, ctx.plan
        dy = dy.to(layer.dtype).contiguous()
        if y is not None:
            dy = torch.ops.aten.threshold_backward(dy, y, 0)  # ReLU's gradient (0 at 0), as torch's own
        dx = dw = db = dyb = None
        if ctx.needs_input_grad[0]:
            bwd = plan.bwd.op
            dyb = bwd.to_blocked("dy", dy)
            dx = bwd.from_blocked("dx", bwd(dyb, layer._weight.for_pass(plan.bwd, weight), layout="blocked"))
        if ctx.needs_input_grad[1]:
            upd = plan.upd.op
            dy_upd = dyb if dyb is not None and plan.dy_shared else upd.to_blocked("dy", dy)
            x_upd = x if plan.x_shared else upd.to_blocked("x", x)
            dw = layer._weight.gradient(plan.upd, upd(dy_upd, x_upd, layout="blocked"), weight.dtype)
        if ctx.needs_input_grad[2]:
            # weft has no bias-gradient operator; summed in the master dtype without a widened copy of dy
            db = dy.sum(ctx.bias_dims, dtype=weight.dtype)
        return dx, dw, db, None, None, None
