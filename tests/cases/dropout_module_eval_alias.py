"""nn.Dropout in eval mode returns its input object: `*=` on the result hits sigmoid's saved output."""
import torch
import torch.nn as nn

drop = nn.Dropout(0.5)
drop.eval()
x = torch.randn(4, requires_grad=True)
s = torch.sigmoid(x)
y = drop(s)
y *= 2  # expect: GG001
s.sum().backward()
