"""A VAE's encoder splits one Linear's output into mean and log-variance with chunk(), then clamps
the log-variance in place for stability; chunk's outputs are multi-output views, which autograd
refuses to let anyone change in place. The reparameterisation is the PyTorch examples' in-place one."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class VAE(nn.Module):
    def __init__(self, d_in=20, hidden=32, z_dim=4):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, 2 * z_dim))
        self.dec = nn.Sequential(nn.Linear(z_dim, hidden), nn.ReLU(), nn.Linear(hidden, d_in))

    def encode(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=-1)
        logvar.clamp_(min=-8.0, max=8.0)  # expect: GG003
        return mu, logvar

    def reparameterize(self, mu, logvar):
        std = logvar.mul(0.5).exp_()
        eps = torch.randn_like(std)
        return eps.mul(std).add_(mu)

    def forward(self, x):
        mu, logvar = self.encode(x)
        return torch.sigmoid(self.dec(self.reparameterize(mu, logvar))), mu, logvar


def loss_function(recon, x, mu, logvar):
    bce = F.binary_cross_entropy(recon, x, reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


torch.manual_seed(0)
model = VAE()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
data = torch.rand(16, 20)
recon, mu, logvar = model(data)
loss = loss_function(recon, data, mu, logvar)
optimizer.zero_grad()
loss.backward()
optimizer.step()
