"""One GAN training step that updates the discriminator before the generator's backward pass.

`g_loss` runs `fake` through the discriminator, whose `nn.Linear` layers saved their weights for
backward. `d_optimizer.step()` changes those weights in place, so `g_loss.backward()` raises
"one of the variables needed for gradient computation has been modified by an inplace
operation" (PyTorch 1.5 and later). Fix: compute `g_loss` after `d_optimizer.step()`, with a
fresh forward pass through `discriminator`, and pass `fake.detach()` to the discriminator's loss
so that `retain_graph=True` is no longer needed.
"""

import torch
from torch import nn

latent_size, data_size, batch_size, steps = 16, 32, 64, 100

generator = nn.Sequential(nn.Linear(latent_size, 64), nn.ReLU(), nn.Linear(64, data_size))
discriminator = nn.Sequential(nn.Linear(data_size, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1))
g_optimizer = torch.optim.Adam(generator.parameters(), lr=2e-4)
d_optimizer = torch.optim.Adam(discriminator.parameters(), lr=2e-4)
criterion = nn.BCEWithLogitsLoss()

real_labels = torch.ones(batch_size, 1)
fake_labels = torch.zeros(batch_size, 1)

for step in range(steps):
    real = torch.randn(batch_size, data_size)
    noise = torch.randn(batch_size, latent_size)

    fake = generator(noise)
    d_loss = criterion(discriminator(real), real_labels) + criterion(discriminator(fake), fake_labels)
    g_loss = criterion(discriminator(fake), real_labels)

    d_optimizer.zero_grad()
    d_loss.backward(retain_graph=True)  # g_loss backpropagates through `fake` again
    d_optimizer.step()

    g_optimizer.zero_grad()
    g_loss.backward()
    g_optimizer.step()
