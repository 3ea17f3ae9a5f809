"""F.silu(..., inplace=True) straight on a Linear output: linear does not save its output."""
import torch
import torch.nn as nn
import torch.nn.functional as F

fc1, fc2 = nn.Linear(4, 8), nn.Linear(8, 1)
h = F.silu(fc1(torch.randn(2, 4)), inplace=True)
fc2(h).sum().backward()
