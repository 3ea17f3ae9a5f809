"""mul_ after the only backward pass: nothing reads sigmoid's saved output any more."""
import torch

x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
y.sum().backward()
with torch.no_grad():
    y.mul_(2)
x.grad.zero_()
torch.sigmoid(x * 2).sum().backward()
