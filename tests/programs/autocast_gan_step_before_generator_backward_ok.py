"""The same GAN under `torch.autocast("cpu", dtype=torch.bfloat16)`: the discriminator's linear
layers save bfloat16 copies of their fp32 weights, so `scaler.step(opt_d)` changing the weights in
place before the generator's backward breaks nothing (the copies keep their version)."""
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
    with torch.autocast("cpu", dtype=torch.bfloat16):
        g_loss = bce(disc(fake), torch.ones(8, 1))
        d_loss = bce(disc(fake.detach()), torch.zeros(8, 1))
    opt_d.zero_grad()
    scaler.scale(d_loss).backward()
    scaler.step(opt_d)
    opt_g.zero_grad()
    scaler.scale(g_loss).backward()
    scaler.step(opt_g)
    scaler.update()
