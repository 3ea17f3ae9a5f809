"""A gate module imported from a package of the project returns sigmoid's output; `+=` on it in
the caller breaks backward. The analysis follows the import into pkg/blocks.py."""
import torch
import torch.nn as nn
from pkg import Gate


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = Gate()
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        g = self.gate(x)
        g += 1  # expect: GG001
        return self.head(g)


Net()(torch.randn(2, 4)).sum().backward()
