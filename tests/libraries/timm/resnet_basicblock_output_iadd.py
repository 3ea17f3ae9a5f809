"""A custom stage reuses timm's ResNet BasicBlock and adds a bias map onto its output in place; the block's last act is ReLU(inplace=True), which saved that output."""
import torch
import torch.nn as nn
from timm.models.resnet import BasicBlock


class Stage(nn.Module):
    def __init__(self, channels=8):
        super().__init__()
        self.block = BasicBlock(channels, channels)
        self.bias = nn.Parameter(torch.zeros(1, channels, 1, 1))

    def forward(self, x):
        y = self.block(x)
        y += self.bias  # expect: GG001
        return y


torch.manual_seed(0)
stage = Stage()
opt = torch.optim.SGD(stage.parameters(), lr=0.1)
x = torch.randn(2, 8, 6, 6)
loss = stage(x).mean()
opt.zero_grad()
loss.backward()
opt.step()
