"""The critic's stem ends in a plain Conv2d and each pre-activation block activates out of place, using inplace=True only on conv outputs: Conv2d saves its input, so every in-place LeakyReLU is safe."""
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
        h = F.leaky_relu(x, self.slope)
        h = F.leaky_relu(self.conv1(h), self.slope, inplace=True)
        h = self.conv2(h)
        return x + h


class Critic(nn.Module):
    def __init__(self, ch=8, n_blocks=2):
        super().__init__()
        self.stem = nn.Conv2d(3, ch, 3, padding=1)
        self.blocks = nn.Sequential(*(PreActBlock(ch) for _ in range(n_blocks)))
        self.head = nn.Linear(ch, 1)

    def forward(self, img):
        h = self.blocks(self.stem(img))
        h = nn.functional.leaky_relu(h, 0.2, inplace=True)
        return self.head(h.mean(dim=(2, 3)))


torch.manual_seed(0)
critic = Critic()
opt = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.0, 0.9))
for step in range(2):
    real, fake = torch.randn(4, 3, 8, 8), torch.randn(4, 3, 8, 8)
    loss = critic(fake).mean() - critic(real).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
