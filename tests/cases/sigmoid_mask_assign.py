"""Boolean-mask assignment into sigmoid's saved output."""
import torch
import torch.nn as nn

lin = nn.Linear(4, 4)
p = torch.sigmoid(lin(torch.randn(2, 4)))
p[p > 0.5] = 1.0  # expect: GG001
p.sum().backward()
