"""A memory-efficient Swish written as a custom autograd Function keeps its input as a `ctx`
attribute instead of `ctx.save_for_backward`; the caller then scales that input in place. Tensors
kept on `ctx` are not version-checked, so torch raises nothing (the gradient is silently computed
from the changed input): no error to report, though the code is wrong."""
import torch
import torch.nn as nn


class SwishFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.x = x
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_output):
        s = torch.sigmoid(ctx.x)
        return grad_output * (s * (1 + ctx.x * (1 - s)))


class GatedUnit(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.proj(x)
        act = SwishFn.apply(h)
        h.mul_(0.5)
        return act + h


torch.manual_seed(0)
unit = GatedUnit(8)
x = torch.randn(3, 8)
loss = unit(x).sum()
loss.backward()
