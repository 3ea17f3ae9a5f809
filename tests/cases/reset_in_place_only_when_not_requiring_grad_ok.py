"""A buffer that is learnable only when asked for; it is reset in place only when it is not,
which torch allows (a leaf that requires grad would refuse)."""
import sys

import torch

learnable = len(sys.argv) > 1
if learnable:
    offset = torch.zeros(3, requires_grad=True)
else:
    offset = torch.zeros(3)
if not offset.requires_grad:
    offset.add_(1.0)
x = torch.randn(3, requires_grad=True)
(x + offset).sum().backward()
