"""`.contiguous()` of a transposed tensor copies it: in-place ops on the copy leave the original's
graph as it was, and its backward runs."""

import torch

w = torch.randn(3, 4, requires_grad=True)
w2 = torch.randn(4, 3, requires_grad=True)
x = (w * 2).t()       # a non-contiguous tensor: contiguous() copies it
y = x.contiguous()    # a new tensor (its own version counter in torch)
y.exp_()              # y's exp node saves y
y.add_(1)             # stale for y's graph only
z = x * w2            # x's graph: t, mul by a scalar
z.sum().backward()    # torch: fine
print("ok")
