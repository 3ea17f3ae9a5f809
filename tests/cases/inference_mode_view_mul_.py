"""A view taken under inference_mode, changed in place in normal mode."""
import torch
import torch.nn as nn

lin = nn.Linear(3, 3)
h = lin(torch.randn(2, 3))
with torch.inference_mode():
    first = h[0]
first.mul_(2)  # expect: GG003
h.sum().backward()
