"""A view of a leaf taken under no_grad, changed with grad on: torch reports the no_grad view
(GG003) before it would report the view of a leaf (GG002)."""
import torch

x = torch.randn(4, 3, requires_grad=True)
with torch.no_grad():
    row = x[0]
row.mul_(2)  # expect: GG003
x.sum().backward()
