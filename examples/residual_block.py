"""A ResNet-style basic block whose skip connection is added in place after the ReLU.

`nn.ReLU` saves its output for backward; `out += identity` then changes that output, so
`loss.backward()` raises "one of the variables needed for gradient computation has been
modified by an inplace operation". Fix: `out = out + identity`, or add before the ReLU as
torchvision does.
"""

import torch
from torch import nn


class BasicBlock(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, kernel_size=3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out += identity
        return out


block = BasicBlock(16)
images = torch.randn(8, 16, 32, 32)
loss = block(images).mean()
loss.backward()
