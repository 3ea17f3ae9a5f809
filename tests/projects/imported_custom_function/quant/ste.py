"""Quantisation-aware training helpers: straight-through estimators written as custom autograd Functions."""
import torch


class ClampedRoundSTE(torch.autograd.Function):
    """Rounds to the integer grid in [-levels, levels]; the gradient passes straight through inside it."""

    @staticmethod
    def forward(ctx, x, levels):
        ctx.save_for_backward(x)
        ctx.levels = levels
        return x.round().clamp(-levels, levels)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * (x.abs() <= ctx.levels), None


class QuantileScale(torch.autograd.Function):
    """Divides by a fixed scale; the scale is kept on `ctx`, nothing is saved for backward."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x / scale

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output / ctx.scale, None
