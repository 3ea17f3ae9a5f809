"""The generator ends in F.hardtanh(..., inplace=True) and then rescales with add_(1).mul_(0.5): hardtanh_ saves a clone, ConvTranspose2d saved its input, so both writes are safe."""
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F


def up_block(c_in, c_out):
    return [nn.ConvTranspose2d(c_in, c_out, 4, 2, 1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(True)]


class Generator(nn.Module):
    def __init__(self, nz=8, ngf=8):
        super().__init__()
        layers = [nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True)]
        layers += up_block(ngf * 2, ngf)
        self.body = nn.Sequential(*layers)
        self.to_rgb = nn.Sequential(OrderedDict(conv=nn.ConvTranspose2d(ngf, 3, 4, 2, 1)))

    def forward(self, z):
        img = F.hardtanh(self.to_rgb(self.body(z)), -1.0, 1.0, inplace=True)
        img.add_(1).mul_(0.5)
        return img


class Discriminator(nn.Module):
    def __init__(self, ndf=8):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, ndf, 4, 2, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(ndf, 1, 8, 1, 0))

    def forward(self, x):
        return self.net(x).flatten()


torch.manual_seed(0)
netG, netD = Generator(), Discriminator()
optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
for _ in range(2):
    z = torch.randn(4, 8, 1, 1)
    errG = F.binary_cross_entropy_with_logits(netD(netG(z)), torch.ones(4))
    optG.zero_grad()
    errG.backward()
    optG.step()
