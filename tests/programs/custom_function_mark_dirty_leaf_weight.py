"""A custom Function that scales its input in place marks it dirty; applied to a leaf that requires grad,
torch refuses the in-place change of the leaf."""
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
y = ScaleInplace.apply(w, 2.0)  # expect: GG002
y.sum().backward()
print("ok")
