"""`F.softmin` (a softmax of `-x`) saves its output: changing the output in place breaks backward."""
import torch
import torch.nn.functional as F

x = torch.randn(3, 4, requires_grad=True)
a = x * 1
h = F.softmin(a, dim=-1)
h.add_(1)  # expect: GG001
h.sum().backward()
