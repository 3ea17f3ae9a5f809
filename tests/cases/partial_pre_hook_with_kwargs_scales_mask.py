"""A forward pre-hook registered as a `functools.partial` with `with_kwargs=True` scales the
`mask=` keyword in place: the output of `sigmoid`, which saved it."""
import functools

import torch
import torch.nn as nn


class Mix(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x, mask=None):
        return self.proj(x) * mask


def sharpen(module, args, kwargs, factor):
    kwargs["mask"].mul_(factor)  # expect: GG001


block = Mix()
block.register_forward_pre_hook(functools.partial(sharpen, factor=2.0), with_kwargs=True)
mask = torch.sigmoid(torch.randn(4, 8, requires_grad=True))
block(torch.randn(4, 8), mask=mask).sum().backward()
