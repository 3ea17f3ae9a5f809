"""The VAE trainer backpropagates the reconstruction loss with retain_graph, then the KL term, and steps once after both backwards."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, d_in, hidden, z_dim):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU())
        self.to_stats = nn.Linear(hidden, 2 * z_dim)

    def forward(self, x):
        mu, logvar = self.to_stats(self.body(x)).chunk(2, dim=-1)
        return mu, logvar


class VAE(nn.Module):
    def __init__(self, d_in=12, hidden=24, z_dim=4):
        super().__init__()
        self.encoder = Encoder(d_in, hidden, z_dim)
        self.decoder = nn.Sequential(nn.Linear(z_dim, hidden), nn.SiLU(), nn.Linear(hidden, d_in))

    def forward(self, x):
        mu, logvar = self.encoder(x)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.decoder(z), mu, logvar


def train_epoch(model, opt, batches, beta=0.5):
    for x in batches:
        recon, mu, logvar = model(x)
        recon_loss = F.mse_loss(recon, x, reduction="sum") / x.shape[0]
        kl = -0.5 * torch.mean(torch.sum(1 + logvar - mu.pow(2) - logvar.exp(), dim=-1))
        opt.zero_grad()
        recon_loss.backward(retain_graph=True)
        (beta * kl).backward()
        opt.step()


torch.manual_seed(0)
model = VAE()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
train_epoch(model, opt, [torch.randn(8, 12) for _ in range(2)])
