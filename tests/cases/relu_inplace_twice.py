"""relu_ saves its result: a second relu_ on it changes what the first one saved."""
import torch
import torch.nn as nn
import torch.nn.functional as F

lin = nn.Linear(3, 3)
h = F.relu(lin(torch.randn(2, 3)), inplace=True)
h = F.relu(h, inplace=True)  # expect: GG001
h.sum().backward()
