"""A lambda changes its argument in place; sigmoid saved that tensor, its output, for backward."""
import torch
import torch.nn as nn


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.post = lambda t: t.mul_(2)  # expect: GG001

    def forward(self, x):
        return self.post(torch.sigmoid(self.fc(x)))


Scaled()(torch.randn(2, 3)).sum().backward()
