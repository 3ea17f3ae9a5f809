"""GAN step: the discriminator is stepped after its own backward, but before the generator's backward through it."""
import torch
import torch.nn as nn

G = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 2))
D = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
for step in range(2):
    real = torch.randn(16, 2)
    fake = G(torch.randn(16, 2))
    opt_d.zero_grad()
    d_loss = D(real).mean() - D(fake.detach()).mean()
    d_loss.backward()
    g_loss = -D(fake).mean()
    opt_d.step()  # expect: GG001
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
