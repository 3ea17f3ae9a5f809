"""mul saves the other operand when x requires grad: changing the constant in place breaks backward."""
import torch

x = torch.randn(4, requires_grad=True)
c = torch.ones(4)
y = x * c
c.add_(1)  # expect: GG001
y.sum().backward()
