"""`.detach()` shares a tensor's version counter, not its graph: an in-place op on the tensor puts
nothing of its graph into the detached one, whose backward runs."""

import torch

w = torch.randn(4, requires_grad=True)
w2 = torch.randn(4, requires_grad=True)
x = w * 2            # saves nothing (a scalar factor)
y = x.detach()       # shares x's version counter, but not its graph
x.exp_()             # exp_ saves its result x
x.add_(1)            # x's exp node now holds a stale output: backward through x would fail
z = y * w2           # y at its current version: z's graph is y (a leaf) and w2
z.sum().backward()   # torch: fine, never reaches ExpBackward
print("ok")
