"""torch.dropout(t, p, train=False) returns its input object: `-=` on it hits exp's saved output."""
import torch

x = torch.randn(4, requires_grad=True)
e = torch.exp(x)
d = torch.dropout(e, 0.5, False)
d -= 1  # expect: GG001
e.sum().backward()
