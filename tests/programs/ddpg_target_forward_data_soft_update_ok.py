"""A DDPG-style critic update, chosen by a command-line option, runs the target networks with grad
on and uses their output only through `.detach()`; after the optimizer step it soft-updates the
target weights through `.data`. The target forward's graph dies with the function: no backward
ever reaches the changed target weights."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def mlp(n_in, n_out):
    return nn.Sequential(nn.Linear(n_in, 64), nn.ReLU(), nn.Linear(64, n_out))


class DDPG:
    def __init__(self, obs_dim, act_dim, tau=0.005, gamma=0.99):
        self.critic = mlp(obs_dim + act_dim, 1)
        self.critic_target = mlp(obs_dim + act_dim, 1)
        self.actor_target = mlp(obs_dim, act_dim)
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-3)
        self.tau, self.gamma = tau, gamma

    def update_critic(self, obs, act, rew, next_obs):
        next_act = torch.tanh(self.actor_target(next_obs))
        next_q = self.critic_target(torch.cat([next_obs, next_act], dim=-1))
        target = rew + self.gamma * next_q.detach()
        q = self.critic(torch.cat([obs, act], dim=-1))
        loss = F.mse_loss(q, target)
        self.critic_opt.zero_grad()
        loss.backward()
        self.critic_opt.step()
        for tp, p in zip(self.critic_target.parameters(), self.critic.parameters()):
            tp.data.mul_(1 - self.tau).add_(self.tau * p.data)
        for tp in self.actor_target.parameters():
            tp.data.mul_(1 - self.tau)
        return loss.item()


parser = argparse.ArgumentParser()
parser.add_argument("--update", default="update_critic")
args = parser.parse_args()
agent = DDPG(6, 2)
for _ in range(3):
    getattr(agent, args.update)(torch.randn(32, 6), torch.randn(32, 2), torch.randn(32, 1), torch.randn(32, 6))
