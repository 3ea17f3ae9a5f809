"""The twin of resnet_bottleneck_output_scale_mul_.py, written out of place (`y = y.mul(self.scale)`): a new tensor, and what the library code saved stays as it was; it trains cleanly."""
import torch
import torch.nn as nn
from torchvision.models.resnet import Bottleneck


class ScaledStage(nn.Module):
    def __init__(self, planes=8):
        super().__init__()
        self.block = Bottleneck(planes * 4, planes)
        self.scale = 0.5

    def forward(self, x):
        y = self.block(x)
        y = y.mul(self.scale)
        return y


torch.manual_seed(0)
stage = ScaledStage()
opt = torch.optim.SGD(stage.parameters(), lr=0.1)
x = torch.randn(2, 32, 8, 8)
loss = stage(x).pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()
