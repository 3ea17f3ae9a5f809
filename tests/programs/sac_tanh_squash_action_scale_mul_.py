"""A SAC actor squashes its sample with tanh, uses the squashed action in the log-prob correction, then rescales it in place to the action bounds; tanh and pow saved it."""
import math

import torch
import torch.nn as nn

LOG_STD_MIN, LOG_STD_MAX = -5.0, 2.0


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim, high=2.0, hidden=32):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Mish(), nn.Linear(hidden, hidden), nn.Mish())
        self.mu = nn.Linear(hidden, act_dim)
        self.log_std = nn.Linear(hidden, act_dim)
        self.register_buffer("action_scale", torch.full((act_dim,), high))

    def forward(self, obs):
        h = self.trunk(obs)
        mu = self.mu(h)
        log_std = torch.clamp(self.log_std(h), LOG_STD_MIN, LOG_STD_MAX)
        std = log_std.exp()
        u = mu + std * torch.randn_like(mu)
        log_prob = (-0.5 * ((u - mu) / std) ** 2 - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)
        action = torch.tanh(u)
        log_prob = log_prob - torch.log(self.action_scale * (1 - action.pow(2)) + 1e-6).sum(-1)
        action.mul_(self.action_scale)  # expect: GG001
        return action, log_prob


torch.manual_seed(0)
actor = Actor(obs_dim=5, act_dim=2)
critic = nn.Sequential(nn.Linear(7, 32), nn.ReLU(), nn.Linear(32, 1))
for p in critic.parameters():
    p.requires_grad_(False)
actor_opt = torch.optim.Adam(actor.parameters(), lr=3e-4)
obs, alpha = torch.randn(16, 5), 0.2
action, log_prob = actor(obs)
q = critic(torch.cat([obs, action], dim=-1)).squeeze(-1)
actor_loss = (alpha * log_prob - q).mean()
actor_opt.zero_grad()
actor_loss.backward()
actor_opt.step()
