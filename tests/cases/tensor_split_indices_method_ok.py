"""Tensor.tensor_split with indices returns plain slices: zeroing one of them is allowed."""
import torch
import torch.nn as nn

lin = nn.Linear(3, 6)
h = lin(torch.randn(2, 3))
a, b, c = h.tensor_split([1, 3], dim=1)
b.zero_()
(a.sum() * b.sum() + c.sum()).backward()
