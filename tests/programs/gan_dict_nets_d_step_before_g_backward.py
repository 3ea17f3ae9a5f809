"""A GAN trainer keeps its networks and optimizers in dicts and scores the fake batch once: the
discriminator's step changes its weights in place while the generator's loss still needs them."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def build(z_dim=16, x_dim=32, hidden=64):
    nets = {
        "G": nn.Sequential(nn.Linear(z_dim, hidden), nn.ReLU(), nn.Linear(hidden, x_dim), nn.Tanh()),
        "D": nn.Sequential(nn.Linear(x_dim, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, 1)),
    }
    opts = {name: torch.optim.Adam(net.parameters(), lr=2e-4, betas=(0.5, 0.999)) for name, net in nets.items()}
    return nets, opts


class GANTrainer:
    def __init__(self, nets, opts, z_dim=16):
        self.nets, self.opts, self.z_dim = nets, opts, z_dim

    def discriminator_loss(self, real, d_fake):
        d_real = self.nets["D"](real)
        return (F.binary_cross_entropy_with_logits(d_real, torch.ones_like(d_real))
                + F.binary_cross_entropy_with_logits(d_fake, torch.zeros_like(d_fake)))

    def train_step(self, real):
        fake = self.nets["G"](torch.randn(real.size(0), self.z_dim))
        d_fake = self.nets["D"](fake)
        d_loss = self.discriminator_loss(real, d_fake)
        self.opts["D"].zero_grad()
        d_loss.backward(retain_graph=True)
        self.opts["D"].step()  # expect: GG001
        g_loss = F.binary_cross_entropy_with_logits(d_fake, torch.ones_like(d_fake))
        self.opts["G"].zero_grad()
        g_loss.backward()
        self.opts["G"].step()
        return d_loss.item(), g_loss.item()


torch.manual_seed(0)
trainer = GANTrainer(*build())
for _ in range(2):
    trainer.train_step(torch.rand(16, 32) * 2 - 1)
