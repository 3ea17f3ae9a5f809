"""The WGAN trainer clips the critic's weights through p.data.clamp_() right after the critic step, before the next forward: no saved tensor holds the old weights, so nothing is corrupted."""
import torch
import torch.nn as nn


class Critic(nn.Module):
    def __init__(self, d=2, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x)


def clip_weights(critic, clip_value):
    for p in critic.parameters():
        p.data.clamp_(-clip_value, clip_value)


def train(critic, generator, opt_c, opt_g, data, n_critic=2, clip_value=0.01, nz=4):
    for real in data:
        for _ in range(n_critic):
            fake = generator(torch.randn(real.shape[0], nz)).detach()
            loss_c = critic(fake).mean() - critic(real).mean()
            opt_c.zero_grad()
            loss_c.backward()
            opt_c.step()
            clip_weights(critic, clip_value)
        loss_g = -critic(generator(torch.randn(real.shape[0], nz))).mean()
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()


torch.manual_seed(0)
critic = Critic()
generator = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
opt_c = torch.optim.RMSprop(critic.parameters(), lr=5e-5)
opt_g = torch.optim.RMSprop(generator.parameters(), lr=5e-5)
train(critic, generator, opt_c, opt_g, [torch.randn(16, 2) + 2 for _ in range(2)])
