"""The same Function applied to an intermediate result: marking it dirty is allowed."""
import torch


class ScaleInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.mark_dirty(x)
        ctx.factor = factor
        return x.mul_(factor)

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.factor, None


w = torch.randn(4, requires_grad=True)
h = w * 1.5
y = ScaleInplace.apply(h, 2.0)
y.sum().backward()
print("ok")
