"""Discounted returns written in place into a fresh buffer: the rewards come from a comparison
(`(x > 0).float()`, a tensor in no graph), the discount from `float(os.environ.get(...))` (a
number, never a tensor): nothing the returns hold needs a gradient, so the writes are safe."""
import os

import torch
import torch.nn as nn

GAMMA = float(os.environ.get("GAMMA", "0.9"))


def discounted(rewards, gamma):
    returns = torch.zeros(len(rewards) + 1)
    for t in reversed(range(len(rewards))):
        returns[t] = rewards[t] + gamma * returns[t + 1]
    return returns[:-1]


torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.SGD(critic.parameters(), lr=0.05)
for episode in range(3):
    states = torch.randn(8, 4)
    rewards = (states[:, 0] > 0).float()
    targets = discounted(rewards, GAMMA)
    values = critic(states).squeeze(-1)
    loss = ((values - targets) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
