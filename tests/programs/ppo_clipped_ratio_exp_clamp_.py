"""A PPO update clips the probability ratio with clamp_ instead of clamp: exp saved its output,
the ratio, for backward, and clamp_ overwrites it before the policy loss is backpropagated."""
import torch
import torch.nn as nn
from torch.distributions import Categorical


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=6, n_actions=3, hidden=32):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.body(obs)
        return Categorical(logits=self.pi(h)), self.v(h).squeeze(-1)


class PPO:
    def __init__(self, net, clip=0.2, lr=3e-4, value_coef=0.5):
        self.net = net
        self.clip = clip
        self.value_coef = value_coef
        self.optimizer = torch.optim.Adam(net.parameters(), lr=lr)

    def policy_loss(self, dist, actions, old_log_probs, advantages):
        ratio = torch.exp(dist.log_prob(actions) - old_log_probs)
        surr1 = ratio * advantages
        surr2 = ratio.clamp_(1 - self.clip, 1 + self.clip) * advantages  # expect: GG001
        return -torch.min(surr1, surr2).mean()

    def update(self, batch, epochs=2):
        obs, actions, old_log_probs, returns = batch
        for _ in range(epochs):
            dist, values = self.net(obs)
            advantages = (returns - values).detach()
            loss = self.policy_loss(dist, actions, old_log_probs, advantages)
            loss = loss + self.value_coef * (returns - values).pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


torch.manual_seed(0)
net = ActorCritic()
obs = torch.randn(64, 6)
with torch.no_grad():
    dist, _ = net(obs)
    actions = dist.sample()
    old_log_probs = dist.log_prob(actions)
returns = torch.randn(64)
PPO(net).update((obs, actions, old_log_probs, returns))
