"""A lambda returns sigmoid's output; `+=` on it changes what sigmoid saved."""
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.act = lambda t: t.sigmoid()

    def forward(self, x):
        g = self.act(self.fc(x))
        g += 1  # expect: GG001
        return g


Gate()(torch.randn(2, 3)).sum().backward()
