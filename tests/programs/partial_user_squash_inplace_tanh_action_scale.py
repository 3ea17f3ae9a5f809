"""An actor binds its action bounds into a helper with `partial(squash, low=..., high=..., inplace=True)`: the helper's in-place branch rescales the tanh output, which tanh saved for backward."""
from functools import partial

import torch
import torch.nn as nn


def squash(u, low=-1.0, high=1.0, inplace=False):
    a = torch.tanh(u)
    scale, shift = (high - low) / 2, (high + low) / 2
    if inplace:
        return a.mul_(scale).add_(shift)  # expect: GG001
    return a * scale + shift


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim, low, high):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, act_dim))
        self.to_action = partial(squash, low=low, high=high, inplace=True)

    def forward(self, obs):
        return self.to_action(self.net(obs))


class Critic(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.q = nn.Sequential(nn.Linear(obs_dim + act_dim, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, obs, act):
        return self.q(torch.cat([obs, act], dim=-1))


torch.manual_seed(0)
actor, critic = Actor(6, 2, low=-2.0, high=2.0), Critic(6, 2)
actor_opt = torch.optim.Adam(actor.parameters(), lr=3e-4)
obs = torch.randn(8, 6)
actor_loss = -critic(obs, actor(obs)).mean()
actor_opt.zero_grad()
actor_loss.backward()
actor_opt.step()
