"""nn.ELU(inplace=True) right after nn.Sigmoid in a Sequential: sigmoid saved its output."""
import torch
import torch.nn as nn

net = nn.Sequential(
    nn.Linear(4, 8),
    nn.Sigmoid(),
    nn.ELU(inplace=True),  # expect: GG001
    nn.Linear(8, 1),
)
net(torch.randn(2, 4)).sum().backward()
