"""A loop over model.modules() zeroing biases outside no_grad."""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Conv2d(4, 4, 3))
for m in model.modules():
    if isinstance(m, nn.Conv2d):
        m.bias.zero_()  # expect: GG002
model(torch.randn(1, 3, 8, 8)).sum().backward()
