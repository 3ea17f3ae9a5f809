"""A saved output kept in a list: changing the list element changes the tensor itself."""
import torch

x = torch.randn(4, requires_grad=True)
outs = [torch.tanh(x)]
outs[0].mul_(2)  # expect: GG001
outs[0].sum().backward()
