"""A view returned by a @torch.no_grad() helper, changed in place with grad mode on."""
import torch
import torch.nn as nn


@torch.no_grad()
def first_row(t):
    return t[0]


lin = nn.Linear(3, 3)
h = lin(torch.randn(2, 3))
row = first_row(h)
row.mul_(2)  # expect: GG003
h.sum().backward()
