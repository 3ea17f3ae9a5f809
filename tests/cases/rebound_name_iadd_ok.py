"""The name is rebound to a fresh tensor before `+=`: sigmoid's saved output is untouched."""
import torch

x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
y = y + 1
y += 1
y.sum().backward()
