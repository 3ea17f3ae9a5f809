"""double() on a float32 tensor makes a copy: add_ on it is fine."""
import torch

x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
z = y.double()
z.add_(1)
(y.sum() + z.sum()).backward()
