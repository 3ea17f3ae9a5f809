"""backward toward `h` alone stops at `h`: sigmoid's saved output behind it, changed in place, is never read."""
import torch

x = torch.randn(3, requires_grad=True)
a = x.sigmoid()
h = a * 3
loss = (h ** 2).sum()
a.mul_(2)
loss.backward(inputs=[h])
