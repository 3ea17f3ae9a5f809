"""A discriminator stem ends in LeakyReLU(inplace=True) and the first pre-activation residual block starts with F.leaky_relu(x, inplace=True) again, overwriting the result the stem's activation saved."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class PreActBlock(nn.Module):
    def __init__(self, ch, slope=0.2):
        super().__init__()
        self.slope = slope
        self.conv1 = nn.Conv2d(ch, ch, 3, padding=1)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1)

    def forward(self, x):
        h = F.leaky_relu(x, self.slope, inplace=True)  # expect: GG001
        h = self.conv1(h)
        h = self.conv2(F.leaky_relu(h, self.slope))
        return x + h


class Critic(nn.Module):
    def __init__(self, ch=8, n_blocks=2):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, ch, 3, padding=1), nn.LeakyReLU(0.2, inplace=True))
        self.blocks = nn.Sequential(*(PreActBlock(ch) for _ in range(n_blocks)))
        self.head = nn.Linear(ch, 1)

    def forward(self, img):
        h = self.blocks(self.stem(img))
        return self.head(h.mean(dim=(2, 3)))


torch.manual_seed(0)
critic = Critic()
opt = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.0, 0.9))
real, fake = torch.randn(4, 3, 8, 8), torch.randn(4, 3, 8, 8)
loss = critic(fake).mean() - critic(real).mean()
opt.zero_grad()
loss.backward()
opt.step()
