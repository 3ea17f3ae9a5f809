"""detach() shares the version counter: add_ on the detached tensor changes relu's saved output."""
import torch

x = torch.randn(5, requires_grad=True)
y = torch.relu(x * 2)
z = y.detach()
z.add_(1)  # expect: GG001
y.sum().backward()
