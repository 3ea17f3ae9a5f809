"""unsafe_chunk outputs get their own version counter: changing one silently corrupts sigmoid's output."""
import torch

x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
expected = (y * (1 - y)).detach().clone()
a, b = y.unsafe_chunk(2)
a.mul_(0)  # expect: GG004
y.sum().backward()
assert not torch.allclose(x.grad, expected), "gradient unexpectedly right"
