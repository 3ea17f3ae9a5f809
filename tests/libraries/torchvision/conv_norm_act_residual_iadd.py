"""A segmentation decoder uses torchvision.ops.Conv2dNormActivation (conv, batch norm, ReLU) and adds the skip connection onto its output in place; ReLU's backward needs its output."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision.ops import Conv2dNormActivation


class DecoderStage(nn.Module):
    def __init__(self, channels=8):
        super().__init__()
        self.fuse = Conv2dNormActivation(channels, channels, kernel_size=3)
        self.classifier = nn.Conv2d(channels, 2, 1)

    def forward(self, x, skip):
        y = self.fuse(x)
        y += skip  # expect: GG001
        return self.classifier(y)


torch.manual_seed(0)
stage = DecoderStage()
opt = torch.optim.Adam(stage.parameters(), lr=1e-3)
x = torch.randn(2, 8, 8, 8)
skip = torch.randn(2, 8, 8, 8)
mask = torch.randint(0, 2, (2, 8, 8))
loss = F.cross_entropy(stage(x, skip), mask)
opt.zero_grad()
loss.backward()
opt.step()
