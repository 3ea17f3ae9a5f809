"""torch.where returns a new tensor: zero_ on it leaves sigmoid's output alone."""
import torch

x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
w = torch.where(y > 0.5, y, torch.zeros_like(y))
w.mul_(3)
w.sum().backward()
