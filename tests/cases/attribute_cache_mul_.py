"""A saved output kept on self: changing self.cache in place breaks backward."""
import torch
import torch.nn as nn


class Gate(nn.Module):
    def forward(self, x):
        self.cache = torch.sigmoid(x)
        self.cache.mul_(2)  # expect: GG001
        return self.cache


Gate()(torch.randn(4, requires_grad=True)).sum().backward()
