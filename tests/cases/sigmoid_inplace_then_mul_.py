"""sigmoid_() saves its own result: a later mul_ on the same tensor breaks backward."""
import torch

x = torch.randn(4, requires_grad=True)
y = x * 3
y.sigmoid_()
y.mul_(2)  # expect: GG001
y.sum().backward()
