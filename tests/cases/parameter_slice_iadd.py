"""`+=` into a row of a Parameter outside no_grad: a view of a leaf that requires grad."""
import torch
import torch.nn as nn


class Table(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(6, 3))

    def bump_first_row(self):
        self.weight[0] += 1.0  # expect: GG002

    def forward(self, idx):
        return self.weight[idx]


t = Table()
t.bump_first_row()
t(torch.tensor([0, 2])).sum().backward()
