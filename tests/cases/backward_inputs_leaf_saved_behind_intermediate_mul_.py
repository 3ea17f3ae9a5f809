"""backward toward `h` and toward the leaf `x` that `h`'s graph saved runs the graph from `h` down to `x`: exp's saved output, changed in place, breaks it."""
import torch

x = torch.randn(3, requires_grad=True)
a = x.exp()
h = a * x
loss = (h ** 2).sum()
a.mul_(2)  # expect: GG001
loss.backward(inputs=[h, x])
