"""A WGAN-GP critic step computes its gradient penalty out of place, `(grad.norm(2, dim=1) - 1) ** 2`
in method form, so the norm the double backward needs keeps its values."""
import torch
import torch.nn as nn
from torch import autograd


def make_critic(dim=2, hidden=64):
    return nn.Sequential(nn.Linear(dim, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, hidden), nn.LeakyReLU(0.2),
                         nn.Linear(hidden, 1))


def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.size(0), 1).expand_as(real)
    interpolates = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    scores = critic(interpolates)
    grad = autograd.grad(outputs=scores, inputs=interpolates, grad_outputs=torch.ones_like(scores),
                         create_graph=True, retain_graph=True)[0]
    return grad.view(grad.size(0), -1).norm(2, dim=1).sub(1).pow(2).mean()


def critic_step(critic, generator, opt_c, real, z_dim=8, lambda_gp=10.0):
    fake = generator(torch.randn(real.size(0), z_dim)).detach()
    loss = critic(fake).mean() - critic(real).mean() + lambda_gp * gradient_penalty(critic, real, fake)
    opt_c.zero_grad()
    loss.backward()
    opt_c.step()
    return loss.item()


torch.manual_seed(0)
critic = make_critic()
generator = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 2))
opt_c = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.5, 0.9))
critic_step(critic, generator, opt_c, torch.randn(32, 2) * 0.5 + 1.0)
