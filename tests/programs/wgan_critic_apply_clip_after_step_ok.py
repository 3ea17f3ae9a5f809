"""WGAN weight clipping given to `critic.apply` after the optimizer's step, as the paper does it:
the backward pass has already used the saved weights."""
import torch
import torch.nn as nn


def clip_weights(module, bound=0.01):
    if isinstance(module, nn.Linear):
        module.weight.data.clamp_(-bound, bound)


torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(4, 32), nn.LeakyReLU(0.2), nn.Linear(32, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
opt = torch.optim.RMSprop(critic.parameters(), lr=5e-5)
for _ in range(3):
    real, fake = torch.randn(16, 4) + 1.0, torch.randn(16, 4)
    loss = critic(fake).mean() - critic(real).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    critic.apply(clip_weights)
