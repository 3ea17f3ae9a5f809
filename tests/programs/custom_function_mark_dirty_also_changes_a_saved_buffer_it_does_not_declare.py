"""A custom normalisation Function marks its input dirty, and also updates a running buffer it is
given in place, one an op of the caller saved: the change the Function does not declare is the bug."""
import torch


class NormInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, running):
        ctx.mark_dirty(x)
        running.mul_(0.9).add_(0.1 * x.mean())  # expect: GG001
        x.sub_(x.mean())
        return x

    @staticmethod
    def backward(ctx, g):
        return g, None


w = torch.randn(4, requires_grad=True)
stats = torch.ones(4, requires_grad=True) * 1.0
gate = stats.exp()
h = w * 2
y = NormInplace.apply(h, gate)
(y.sum() + gate.sum()).backward()
