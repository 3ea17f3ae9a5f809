"""The discriminator steps, then the generator's loss reuses `d_fake`, the discriminator's output
computed with its old weights: the generator's backward fails. Detaching `d_fake` would silence it
and train nothing, so the fixes are to compute `D(fake)` again or to step later."""
import torch
import torch.nn as nn

G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.SGD(G.parameters(), lr=1e-3)
opt_d = torch.optim.SGD(D.parameters(), lr=1e-3)

fake = G(torch.randn(8, 4))
d_fake = D(fake)
loss_d = d_fake.mean()
opt_d.zero_grad()
loss_d.backward(retain_graph=True)
opt_d.step()  # expect: GG001
loss_g = -d_fake.mean()
opt_g.zero_grad()
loss_g.backward()
opt_g.step()
