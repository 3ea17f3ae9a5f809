"""A forward pre-hook registered with `with_kwargs=True` replaces the `mask=` keyword by its
sigmoid; the block's forward then halves the mask it is given in place. `sigmoid` saved that
output for backward, so the backward pass raises."""
import torch
import torch.nn as nn


class GatedProj(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, mask=None):
        mask.mul_(0.5)  # expect: GG001
        return self.proj(x) * mask


def squash_mask(module, args, kwargs):
    return args, {"mask": torch.sigmoid(kwargs["mask"])}


torch.manual_seed(0)
block = GatedProj(8)
block.register_forward_pre_hook(squash_mask, with_kwargs=True)
logits = torch.randn(4, 8, requires_grad=True)
out = block(torch.randn(4, 8), mask=logits)
out.sum().backward()
