"""The generator steps first; the discriminator's loss takes `fake.detach()`, so its backward stops
at the generator's output and never needs the generator's old weights."""
import torch
import torch.nn as nn
import torch.nn.functional as F

G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
real = torch.randn(8, 2)

for step in range(2):
    fake = G(torch.randn(8, 4))
    loss_g = F.softplus(-D(fake)).mean()
    opt_g.zero_grad()
    loss_g.backward(retain_graph=True)
    opt_g.step()
    loss_d = F.softplus(D(fake.detach())).mean() + F.softplus(-D(real)).mean()
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()
