"""A forward pre-hook registered with `with_kwargs=True` returns new `(args, kwargs)` with a
scaled copy of the `mask=` keyword: `softmax`'s saved output is left alone."""
import torch
import torch.nn as nn


class MaskedMix(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, mask=None):
        out = self.proj(x)
        return out * mask if mask is not None else out


def sharpen_mask(module, args, kwargs):
    mask = kwargs["mask"] * 2.0
    mask.clamp_(max=1.0)
    return args, {"mask": mask}


torch.manual_seed(0)
block = MaskedMix(8)
block.register_forward_pre_hook(sharpen_mask, with_kwargs=True)
scores = torch.randn(4, 8, requires_grad=True)
mask = torch.softmax(scores, dim=-1)
out = block(torch.randn(4, 8), mask=mask)
out.sum().backward()
