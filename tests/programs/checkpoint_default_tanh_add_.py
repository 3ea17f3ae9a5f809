"""`checkpoint(block, x)` without `use_reentrant`: torch 2.13 runs the reentrant variant, which
runs `block` again in backward; the in-place `add_` there changes what `tanh` saved."""
import warnings

import torch
from torch.utils.checkpoint import checkpoint

warnings.simplefilter("ignore")


def block(x):
    g = torch.tanh(x)
    g.add_(1.0)  # expect: GG001
    return g * x


x = torch.randn(4, requires_grad=True)
checkpoint(block, x).sum().backward()
