"""`2 ** a` (`pow.Scalar`, a scalar base) saves its result: changing that result in place breaks backward."""
import torch

x = torch.randn(3, 4, requires_grad=True)
a = x * 1
h = 2 ** a
h.add_(1)  # expect: GG001
h.sum().backward()
