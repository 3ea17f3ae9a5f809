"""float() on a float32 tensor returns the tensor itself: add_ on it changes sigmoid's saved output."""
import torch

x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
z = y.float()
z.add_(1)  # expect: GG001
y.sum().backward()
