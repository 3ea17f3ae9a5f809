"""A GAN trained with a GradScaler, but no autocast region: `scaler.step(opt_d)` runs the
discriminator's optimizer step, changing its weights in place, before the generator's loss,
whose graph went through the discriminator and saved those weights, runs its backward."""
import torch
import torch.nn as nn

gen = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
disc = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
opt_d = torch.optim.Adam(disc.parameters())
opt_g = torch.optim.Adam(gen.parameters())
scaler = torch.amp.GradScaler("cpu")
bce = nn.BCEWithLogitsLoss()

for _ in range(2):
    fake = gen(torch.randn(8, 4))
    if True:
        g_loss = bce(disc(fake), torch.ones(8, 1))
        d_loss = bce(disc(fake.detach()), torch.zeros(8, 1))
    opt_d.zero_grad()
    scaler.scale(d_loss).backward()
    scaler.step(opt_d)  # expect: GG001
    opt_g.zero_grad()
    scaler.scale(g_loss).backward()
    scaler.step(opt_g)
    scaler.update()
