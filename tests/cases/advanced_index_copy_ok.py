"""Indexing with a tensor of indices copies: mul_ on the copy leaves tanh's saved output alone."""
import torch

x = torch.randn(5, requires_grad=True)
y = torch.tanh(x)
picked = y[torch.tensor([0, 2, 4])]
picked.mul_(2)
picked.sum().backward()
