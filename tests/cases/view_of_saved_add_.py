"""add_ through a view(-1) of exp's output: the view shares the saved tensor's version counter."""
import torch

x = torch.randn(2, 3, requires_grad=True)
y = x.exp()
y.view(-1).add_(1)  # expect: GG001
y.sum().backward()
