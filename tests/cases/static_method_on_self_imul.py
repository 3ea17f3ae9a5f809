"""`self.squash(s)` calls a @staticmethod: s is its first parameter, not the instance; pow saved s."""
import torch
import torch.nn as nn


class Capsules(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4, 3))

    @staticmethod
    def squash(s):
        squared = (s ** 2).sum(dim=-1, keepdim=True)
        s *= squared / (1 + squared)  # expect: GG001
        return s

    def forward(self, u):
        return self.squash(self.weight * u)


Capsules()(torch.randn(4, 3)).sum().backward()
