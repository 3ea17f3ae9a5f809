"""A constant slice of an nn.Sequential is a Sequential of those layers: calling it runs Sigmoid,
which saved its output."""
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(3, 3), nn.Sigmoid(), nn.Linear(3, 1))
features = net[:2](torch.randn(2, 3))
features.add_(1)  # expect: GG001
net[2](features).sum().backward()
