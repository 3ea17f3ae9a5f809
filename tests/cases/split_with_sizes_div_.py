"""`/=` on an output of split_with_sizes, a function that returns several views."""
import torch
import torch.nn as nn

lin = nn.Linear(3, 3)
h = lin(torch.randn(2, 3))
small, big = h.split_with_sizes([1, 2], dim=1)
big /= 2  # expect: GG003
(small.sum() + big.sum()).backward()
