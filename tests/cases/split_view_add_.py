"""add_ on one output of split, a function that returns several views."""
import torch
import torch.nn as nn

lin = nn.Linear(3, 4)
h = lin(torch.randn(2, 3))
a, b = h.split(2, dim=1)
b.add_(1)  # expect: GG003
(a * b).sum().backward()
