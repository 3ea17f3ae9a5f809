"""torch.unbind(...)[0]: still one of several views of one base, so add_ on it fails."""
import torch
import torch.nn as nn

lin = nn.Linear(3, 3)
h = lin(torch.randn(2, 3))
first = torch.unbind(h)[0]
first.add_(1)  # expect: GG003
h.sum().backward()
