"""var saves its input, not its output: changing the variance in place is harmless."""
import torch

w = torch.randn(6, requires_grad=True)
v = (w * 2).var(0, unbiased=False)
v.sub_(1)
v.backward()
