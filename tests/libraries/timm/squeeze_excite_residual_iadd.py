"""A convolutional block adds timm.layers.SqueezeExcite's output back onto its input in place; SE's `x * self.gate(x_se)` saved that input."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from timm.layers import SqueezeExcite


class SEResidual(nn.Module):
    def __init__(self, channels=16):
        super().__init__()
        self.conv = nn.Conv2d(3, channels, 3, padding=1)
        self.se = SqueezeExcite(channels, rd_ratio=0.25)
        self.fc = nn.Linear(channels, 4)

    def forward(self, x):
        h = self.conv(x)
        h += self.se(h)  # expect: GG001
        return self.fc(h.mean(dim=(2, 3)))


torch.manual_seed(0)
model = SEResidual()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
x = torch.randn(2, 3, 8, 8)
y = torch.tensor([0, 3])
loss = F.cross_entropy(model(x), y)
opt.zero_grad()
loss.backward()
opt.step()
