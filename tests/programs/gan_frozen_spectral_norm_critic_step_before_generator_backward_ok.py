"""GAN: G loss computed through a frozen spectral-norm D, then the D step, then the G backward (parametrizations version)."""
import torch
import torch.nn as nn
from torch.nn.utils.parametrizations import spectral_norm

torch.manual_seed(0)

G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
D = nn.Sequential(spectral_norm(nn.Linear(2, 32)), nn.LeakyReLU(0.2), spectral_norm(nn.Linear(32, 1)))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3, betas=(0.5, 0.999))
bce = nn.BCEWithLogitsLoss()

real = torch.randn(8, 2) + 1.0
fake = G(torch.randn(8, 4))

D.requires_grad_(False)
g_out = D(fake)
g_loss = bce(g_out, torch.ones_like(g_out))
D.requires_grad_(True)

d_real = D(real)
d_fake = D(fake.detach())
d_loss = bce(d_real, torch.ones_like(d_real)) + bce(d_fake, torch.zeros_like(d_fake))
opt_d.zero_grad()
d_loss.backward()
opt_d.step()

opt_g.zero_grad()
g_loss.backward()
opt_g.step()
