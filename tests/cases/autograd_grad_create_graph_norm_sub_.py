"""A gradient from autograd.grad(create_graph=True) is in a graph: its norm saved its output,
and the backward of the penalty needs it."""
import torch

w = torch.randn(3, requires_grad=True)
x = torch.randn(4, 3, requires_grad=True)
(grad,) = torch.autograd.grad((x * w).sigmoid().sum(), x, create_graph=True)
norm = grad.norm(2, dim=1)
norm.sub_(1)  # expect: GG001
norm.pow(2).mean().backward()
