"""A residual MLP block uses a ReLU clipped at 6 written as a custom autograd Function (its backward
passes gradient only inside [0, 6]); the Function saves its input with `ctx.save_for_backward`, and
the block adds the skip connection out of place: the saved input stays as it was."""
import torch
import torch.nn as nn


class BoundedReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bound):
        ctx.save_for_backward(x)
        ctx.bound = bound
        return x.clamp(0.0, bound)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        inside = (x > 0) & (x < ctx.bound)
        return grad_output * inside, None


def bounded_relu(x, bound=6.0):
    return BoundedReLU.apply(x, bound)


class ResidualBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.skip = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.fc(x)
        out = bounded_relu(h)
        h = h + self.skip(x)
        return out + h


torch.manual_seed(0)
block = ResidualBlock(8)
optimizer = torch.optim.SGD(block.parameters(), lr=0.1)
x = torch.randn(4, 8)
loss = block(x).pow(2).mean()
optimizer.zero_grad()
loss.backward()
optimizer.step()
