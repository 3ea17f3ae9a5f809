"""add saves neither operand: changing the constant in place afterwards is fine."""
import torch

x = torch.randn(4, requires_grad=True)
c = torch.ones(4)
y = x + c
c.add_(1)
y.sum().backward()
