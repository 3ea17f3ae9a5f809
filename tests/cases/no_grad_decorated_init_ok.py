"""Parameters filled in place inside a @torch.no_grad() method: the supported way to initialise."""
import torch
import torch.nn as nn


class Scale(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(dim))
        self.bias = nn.Parameter(torch.empty(dim))
        self.reset_parameters()

    @torch.no_grad()
    def reset_parameters(self):
        self.weight.fill_(1.0)
        self.bias.zero_()
        self.weight[0] += 0.5

    def forward(self, x):
        return torch.sigmoid(x * self.weight + self.bias)


Scale(4)(torch.randn(2, 4)).sum().backward()
