"""sigmoid_() on a product that nothing saved is fine: mul by a Python scalar saves no tensor."""
import torch

x = torch.randn(4, requires_grad=True)
y = x * 3
y.sigmoid_()
y.sum().backward()
