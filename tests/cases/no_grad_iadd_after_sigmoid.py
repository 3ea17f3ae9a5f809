"""An in-place op under no_grad still bumps the version counter: backward still fails."""
import torch

x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
with torch.no_grad():
    y += 1  # expect: GG001
y.sum().backward()
