"""An actor-critic trainer picked by a command-line option: its critic step keeps the graph
(`retain_graph=True`), steps the critic and returns the undetached advantage; the caller's actor
loss goes through it, back into the critic's changed weights, and its backward fails."""
import argparse

import torch
import torch.nn as nn


class CriticTrainer:
    def __init__(self, obs_dim):
        self.critic = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, 1))
        self.opt = torch.optim.SGD(self.critic.parameters(), lr=1e-2)

    def critic_step(self, obs, returns):
        values = self.critic(obs)
        advantage = returns - values
        loss = advantage.pow(2).mean()
        self.opt.zero_grad()
        loss.backward(retain_graph=True)
        self.opt.step()  # expect: GG001
        return advantage


parser = argparse.ArgumentParser()
parser.add_argument("--update", default="critic_step")
args = parser.parse_args()
trainer = CriticTrainer(4)
policy = nn.Linear(4, 2)
obs, returns = torch.randn(16, 4), torch.randn(16, 1)
update = getattr(trainer, args.update)
advantage = update(obs, returns)
log_probs = torch.log_softmax(policy(obs), dim=-1)[:, :1]
actor_loss = -(log_probs * advantage).mean()
actor_loss.backward()
