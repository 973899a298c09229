"""weft.torch: torch.nn layers on weft's operators (imported on demand: `import weft` never
imports PyTorch).

    import torch, weft.torch
    layer = weft.torch.Linear(1024, 1024, bias=True, relu=True)          # as nn.Linear + fused ReLU
    mlp = weft.torch.MLP([784, 1024, 1024, 10])                          # ReLU between the layers
    conv = weft.torch.Conv2d(64, 64, 3, stride=1, padding=1, relu=True)  # as nn.Conv2d + fused ReLU
    print(weft.torch.optimize(model))      # nn.Linear / nn.Conv2d swapped in place, the rest listed

Forward and both backward passes run weft's operators through torch.autograd.Function. Weights
live blocked in a Parameter between calls (what the optimizer steps on); state_dict() and
load_state_dict() speak nn.Linear's and nn.Conv2d's plain layouts. dtype=torch.bfloat16 computes
in bf16 on fp32 master weights, or on bf16 parameters with master_dtype=torch.bfloat16 (what
optimize() gives a bf16 model). See docs/python.md, "weft.torch".
"""
from ._function import release_scratch
from ._memory import memory_stats, set_memory_limit
from .conv import Conv2d
from .linear import MLP, Linear
from .optimize import OptimizeReport, optimize

__all__ = ["Linear", "MLP", "Conv2d", "optimize", "OptimizeReport", "release_scratch", "memory_stats", "set_memory_limit"]
