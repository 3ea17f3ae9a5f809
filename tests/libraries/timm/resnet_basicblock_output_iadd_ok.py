"""The twin of resnet_basicblock_output_iadd.py, written out of place (`y = y + self.bias`): a new tensor, and what the library code saved stays as it was; it trains cleanly."""
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
        y = y + self.bias
        return y


torch.manual_seed(0)
stage = Stage()
opt = torch.optim.SGD(stage.parameters(), lr=0.1)
x = torch.randn(2, 8, 6, 6)
loss = stage(x).mean()
opt.zero_grad()
loss.backward()
opt.step()
