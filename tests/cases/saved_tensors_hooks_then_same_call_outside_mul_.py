"""A helper runs once under saved_tensors_hooks (no version check there) and again outside: exp saves its output the second time, so changing it in place breaks backward."""
import torch
from torch.autograd.graph import saved_tensors_hooks

W = torch.randn(3, requires_grad=True)


def features(scale: float):
    return (W * scale).exp()


with saved_tensors_hooks(lambda t: t, lambda t: t):
    a = features(2.0)
a.sum().backward()

b = features(2.0)
b.mul_(2)  # expect: GG001
b.sum().backward()
