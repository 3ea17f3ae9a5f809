"""Scales appended one by one to an `nn.ParameterList` made empty; the second is clamped in
place in `forward`: a leaf that requires grad."""
import torch
import torch.nn as nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.scales = nn.ParameterList([])
        self.scales.append(nn.Parameter(torch.ones(3)))
        self.scales.append(nn.Parameter(torch.ones(3)))

    def forward(self, x):
        self.scales[1].clamp_(0.1, 2.0)  # expect: GG002
        return x * self.scales[0] * self.scales[1]


M()(torch.randn(3)).sum().backward()
