"""Without create_graph, a gradient from autograd.grad requires no grad: norm saves nothing."""
import torch

w = torch.randn(3, requires_grad=True)
x = torch.randn(4, 3, requires_grad=True)
(grad,) = torch.autograd.grad((x * w).sigmoid().sum(), x, retain_graph=True)
norm = grad.norm(2, dim=1)
norm.sub_(1)
(x * w * norm[:, None]).sum().backward()
