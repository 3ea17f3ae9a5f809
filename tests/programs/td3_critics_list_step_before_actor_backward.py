"""A TD3 agent keeps its twin critics and their optimizers in plain lists and evaluates the actor's
Q-value in the same pass as the critic targets: the critics' step changes their weights in place
before the actor loss, which still needs them, is backpropagated."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


def mlp(d_in, d_out, hidden=64):
    return nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, d_out))


class Critic(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.q = mlp(obs_dim + act_dim, 1)

    def forward(self, obs, act):
        return self.q(torch.cat([obs, act], dim=-1))


class TD3:
    def __init__(self, obs_dim=5, act_dim=2, gamma=0.99):
        self.actor = nn.Sequential(mlp(obs_dim, act_dim), nn.Tanh())
        self.critics = [Critic(obs_dim, act_dim), Critic(obs_dim, act_dim)]
        self.targets = [copy.deepcopy(c) for c in self.critics]
        self.actor_target = copy.deepcopy(self.actor)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=1e-3)
        self.critic_opts = [torch.optim.Adam(c.parameters(), lr=1e-3) for c in self.critics]
        self.gamma = gamma

    def td_target(self, reward, next_obs, done):
        with torch.no_grad():
            next_act = self.actor_target(next_obs)
            next_q = torch.min(*[t(next_obs, next_act) for t in self.targets])
            return reward + self.gamma * (1 - done) * next_q

    def update(self, obs, act, reward, next_obs, done):
        y = self.td_target(reward, next_obs, done)
        critic_loss = sum(F.mse_loss(c(obs, act), y) for c in self.critics)
        actor_loss = -self.critics[0](obs, self.actor(obs)).mean()
        for opt in self.critic_opts:
            opt.zero_grad()
        critic_loss.backward()
        for opt in self.critic_opts:
            opt.step()  # expect: GG001
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()


torch.manual_seed(0)
agent = TD3()
batch = (torch.randn(32, 5), torch.rand(32, 2) * 2 - 1, torch.randn(32, 1), torch.randn(32, 5), torch.zeros(32, 1))
agent.update(*batch)
