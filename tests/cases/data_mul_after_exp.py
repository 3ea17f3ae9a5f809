"""y.data.mul_(0) after exp: the version counter is bypassed, the gradient silently wrong."""
import torch

x = torch.randn(4, requires_grad=True)
y = torch.exp(x)
expected = y.detach().clone()
y.data.mul_(0)  # expect: GG004
y.sum().backward()
assert not torch.allclose(x.grad, expected), "gradient unexpectedly right"
