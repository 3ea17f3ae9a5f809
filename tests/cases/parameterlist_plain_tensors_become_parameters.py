"""`nn.ParameterList` makes each plain tensor it is given an `nn.Parameter`: changing one in
place in `forward` changes a leaf that requires grad."""
import torch
import torch.nn as nn


class Gains(nn.Module):
    def __init__(self):
        super().__init__()
        self.gains = nn.ParameterList([torch.ones(3), torch.ones(3)])  # each made an nn.Parameter

    def forward(self, x):
        self.gains[1].mul_(0.9)  # expect: GG002
        return x * self.gains[0] * self.gains[1]


Gains()(torch.randn(3)).sum().backward()
