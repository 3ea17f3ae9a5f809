"""Two gates computed by map over a split of unknown length, one scaled in place."""
import torch

torch.manual_seed(0)
w = torch.randn(8, 8, requires_grad=True)


def gates(x, n):
    parts = (x @ w).split(x.shape[1] // n, dim=1)
    a, b = map(torch.sigmoid, parts)
    a.mul_(2.0)  # expect: GG001
    return a * b


gates(torch.randn(4, 8), 2).sum().backward()
