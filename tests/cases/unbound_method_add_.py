"""torch.Tensor.add_(y, 1): the unbound-method spelling of an in-place op on exp's output."""
import torch

x = torch.randn(4, requires_grad=True)
y = torch.exp(x)
torch.Tensor.add_(y, 1)  # expect: GG001
y.sum().backward()
