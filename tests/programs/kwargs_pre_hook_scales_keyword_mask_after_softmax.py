"""A forward pre-hook registered with `with_kwargs=True` returns new `(args, kwargs)`: it scales
the `mask=` keyword in place. The mask is the output of `softmax` (which saves it), so the
backward pass raises; the block then uses the mask the hook gave."""
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
    mask = kwargs["mask"]
    mask.mul_(2.0)  # expect: GG001
    return args, {"mask": mask}


torch.manual_seed(0)
block = MaskedMix(8)
block.register_forward_pre_hook(sharpen_mask, with_kwargs=True)
scores = torch.randn(4, 8, requires_grad=True)
mask = torch.softmax(scores, dim=-1)
out = block(torch.randn(4, 8), mask=mask)
out.sum().backward()
