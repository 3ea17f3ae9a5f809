"""detach().clone() is a fresh tensor: changing it leaves relu's saved output alone."""
import torch

x = torch.randn(5, requires_grad=True)
y = torch.relu(x * 2)
z = y.detach().clone()
z.add_(1)
y.sum().backward()
