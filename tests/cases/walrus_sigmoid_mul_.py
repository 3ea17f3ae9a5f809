"""mul_ on a walrus-bound sigmoid output."""
import torch

x = torch.randn(4, requires_grad=True)
(y := torch.sigmoid(x)).mul_(2)  # expect: GG001
y.sum().backward()
