"""A memory-saving leaky ReLU changes its input in place inside a custom autograd Function and says so
with `ctx.mark_dirty`; it saves the result (the same tensor) for its backward. The layer adds its bias
out of place; the Function's own in-place change was declared, so backward runs."""
import torch
import torch.nn as nn


class InplaceLeakyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, slope):
        x.masked_scatter_(x < 0, x[x < 0] * slope)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        ctx.slope = slope
        return x

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return torch.where(y > 0, grad_output, grad_output * ctx.slope), None


class Layer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.bias = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        y = InplaceLeakyReLU.apply(self.fc(x), 0.1)
        return y + self.bias


torch.manual_seed(0)
layer = Layer(6)
x = torch.randn(4, 6)
loss = layer(x).pow(2).sum()
loss.backward()
