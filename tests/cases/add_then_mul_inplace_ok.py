"""add saves nothing: mul_ on its fresh result is fine even after sigmoid."""
import torch

x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
z = y.add(1)
z.mul_(2)
z.sum().backward()
