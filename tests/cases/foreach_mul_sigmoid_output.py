"""`torch._foreach_mul_` changes each tensor of its list in place: one is the output `sigmoid` saved."""
import torch

x = torch.randn(3, requires_grad=True)
hs = [torch.sigmoid(x)]
torch._foreach_mul_(hs, 2.0)  # expect: GG001
hs[0].sum().backward()
