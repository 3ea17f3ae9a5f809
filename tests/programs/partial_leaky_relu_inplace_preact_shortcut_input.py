"""A pre-activation block takes its activation as `partial(F.leaky_relu, negative_slope=0.2, inplace=True)` and activates its input after the 1x1 shortcut conv read it: Conv2d saved that input for its weight gradient, and the partial's in-place leaky ReLU changes it."""
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F


class PreActBlock(nn.Module):
    def __init__(self, in_ch, out_ch, act):
        super().__init__()
        self.act = act
        self.shortcut = nn.Conv2d(in_ch, out_ch, 1, bias=False)
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, padding=1)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, padding=1)

    def forward(self, x):
        skip = self.shortcut(x)
        h = self.act(x)  # expect: GG001
        h = self.conv1(h)
        h = self.conv2(self.act(h))
        return skip + h


class Discriminator(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        act = partial(F.leaky_relu, negative_slope=0.2, inplace=True)
        self.stem = nn.Conv2d(3, ch, 3, padding=1)
        self.block1 = PreActBlock(ch, 2 * ch, act)
        self.block2 = PreActBlock(2 * ch, 2 * ch, act)
        self.head = nn.Linear(2 * ch, 1)

    def forward(self, img):
        h = self.block2(self.block1(self.stem(img)))
        return self.head(h.mean(dim=(2, 3)))


torch.manual_seed(0)
disc = Discriminator()
opt = torch.optim.Adam(disc.parameters(), lr=2e-4, betas=(0.5, 0.999))
real, fake = torch.randn(4, 3, 8, 8), torch.randn(4, 3, 8, 8)
loss = F.softplus(-disc(real)).mean() + F.softplus(disc(fake)).mean()
opt.zero_grad()
loss.backward()
opt.step()
