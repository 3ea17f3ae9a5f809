"""`y[i] += v` on exp's output: an augmented index assignment is an in-place index_put_."""
import torch

x = torch.randn(4, 3, requires_grad=True)
y = torch.exp(x)
y[1] += 1.0  # expect: GG001
y.sum().backward()
