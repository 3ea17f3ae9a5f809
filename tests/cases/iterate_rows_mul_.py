"""Iterating over a tensor unbinds it: each row is one of several views of one base."""
import torch
import torch.nn as nn

lin = nn.Linear(3, 3)
h = lin(torch.randn(4, 3))
for row in h:
    row.mul_(2)  # expect: GG003
h.sum().backward()
