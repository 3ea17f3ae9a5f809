"""A GAN discriminator applies F.leaky_relu with inplace=True to each Linear's output (which no op
saved) and then F.dropout out of place, so the output the in-place leaky_relu saved is left alone."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Discriminator(nn.Module):
    def __init__(self, x_dim=64, hidden=(128, 64), p_drop=0.3):
        super().__init__()
        sizes = (x_dim, *hidden)
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
        self.out = nn.Linear(sizes[-1], 1)
        self.p_drop = p_drop

    def forward(self, x):
        for layer in self.layers:
            x = F.leaky_relu(layer(x), 0.2, inplace=True)
            x = F.dropout(x, self.p_drop, training=self.training)
        return self.out(x)


class Generator(nn.Module):
    def __init__(self, z_dim=16, x_dim=64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, 128), nn.ReLU(inplace=True), nn.Linear(128, x_dim), nn.Tanh())

    def forward(self, z):
        return self.net(z)


def discriminator_step(D, G, opt_d, real, z_dim=16):
    fake = G(torch.randn(real.size(0), z_dim)).detach()
    d_real, d_fake = D(real), D(fake)
    loss = F.binary_cross_entropy_with_logits(d_real, torch.ones_like(d_real)) + \
        F.binary_cross_entropy_with_logits(d_fake, torch.zeros_like(d_fake))
    opt_d.zero_grad()
    loss.backward()
    opt_d.step()


torch.manual_seed(0)
D, G = Discriminator(), Generator()
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
discriminator_step(D, G, opt_d, torch.rand(32, 64) * 2 - 1)
