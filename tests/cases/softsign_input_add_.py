"""`F.softsign` (`x / (1 + |x|)`) saves its input: changing it in place afterwards breaks backward."""
import torch
import torch.nn.functional as F

x = torch.randn(3, 4, requires_grad=True)
a = x * 1
h = F.softsign(a)
a.add_(1)  # expect: GG001
h.sum().backward()
