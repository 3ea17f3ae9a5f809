"""`a /= a.std()`: std (recorded by std.correction's kernel, whatever the overload) saved a."""
import torch

w = torch.randn(6, requires_grad=True)
a = w * 2
a /= a.std(dim=0)  # expect: GG001
a.sum().backward()
