"""autograd.grad toward `h` and toward the leaf `x` behind it runs the graph from `h` down to `x`: sigmoid's saved output, changed in place, breaks it."""
import torch

x = torch.randn(3, requires_grad=True)
a = x.sigmoid()
h = a * 3
loss = (h ** 2).sum()
a.mul_(2)  # expect: GG001
gh, gx = torch.autograd.grad(loss, [h, x])
