"""Index assignment into exp's output: exp saved its result for backward."""
import torch

x = torch.randn(5, requires_grad=True)
y = x.exp()
y[0] = 0  # expect: GG001
y.sum().backward()
