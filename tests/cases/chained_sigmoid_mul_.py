"""mul_ chained straight onto sigmoid's result: the temporary is the tensor sigmoid saved."""
import torch

x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x).mul_(2)  # expect: GG001
y.sum().backward()
