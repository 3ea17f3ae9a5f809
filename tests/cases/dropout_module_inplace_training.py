"""nn.Dropout(inplace=True) in training mode scales sigmoid's saved output in place."""
import torch
import torch.nn as nn

drop = nn.Dropout(0.5, inplace=True)
x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
z = drop(y)  # expect: GG001
z.sum().backward()
