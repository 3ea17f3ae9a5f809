"""t_() is an in-place view op: it bumps the version of tanh's saved output."""
import torch

x = torch.randn(3, 2, requires_grad=True)
y = torch.tanh(x)
y.t_()  # expect: GG001
y.sum().backward()
