"""`2 ** a` (`pow.Scalar`) saves its exponent too: changing `a` in place after it breaks backward."""
import torch

x = torch.randn(3, 4, requires_grad=True)
a = x * 1
h = 2 ** a
a.add_(1)  # expect: GG001
h.sum().backward()
