"""The saved tensor comes back from a helper function: add_ on it still breaks backward."""
import torch


def gate(t):
    return torch.sigmoid(t)


x = torch.randn(4, requires_grad=True)
g = gate(x)
g.add_(1)  # expect: GG001
g.sum().backward()
