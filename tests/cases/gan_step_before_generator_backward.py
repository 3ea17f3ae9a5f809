"""The discriminator's step runs after its own backward, but the generator's loss was built
earlier through the same discriminator, which saved its weights: its backward then fails."""
import torch
import torch.nn as nn

G = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 2))
D = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
opt_g = torch.optim.SGD(G.parameters(), lr=0.1)

fake = G(torch.randn(8, 2))
loss_d = D(fake.detach()).mean()
loss_g = -D(fake).mean()
opt_d.zero_grad()
loss_d.backward()
opt_d.step()  # expect: GG001
opt_g.zero_grad()
loss_g.backward()
opt_g.step()
