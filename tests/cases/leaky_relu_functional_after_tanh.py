"""F.leaky_relu(..., inplace=True) on tanh's output: tanh saved it for backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = torch.tanh(self.fc(x))
        h = F.leaky_relu(h, 0.2, inplace=True)  # expect: GG001
        return h


Block()(torch.randn(2, 4)).sum().backward()
