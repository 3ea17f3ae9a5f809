"""A view(-1) taken under no_grad, changed in place once grad mode is back."""
import torch
import torch.nn as nn

lin = nn.Linear(3, 3)
h = lin(torch.randn(2, 3))
with torch.no_grad():
    flat = h.view(-1)
flat.add_(1)  # expect: GG003
h.sum().backward()
