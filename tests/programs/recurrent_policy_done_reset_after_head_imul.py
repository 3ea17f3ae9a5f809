"""A recurrent A2C rollout computes the policy from the GRUCell state, then resets finished episodes with `h *= 1 - done`; the policy head's Linear had saved h."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RecurrentPolicy(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=16):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh())
        self.cell = nn.GRUCell(hidden, hidden)
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def step(self, obs, h):
        h = self.cell(self.encoder(obs), h)
        return self.pi(h), self.v(h).squeeze(-1), h


def rollout(policy, observations, dones, rewards, hidden=16):
    h = torch.zeros(observations.shape[1], hidden)
    log_probs, values = [], []
    for obs, done in zip(observations, dones):
        logits, value, h = policy.step(obs, h)
        action = torch.distributions.Categorical(logits=logits).sample()
        log_probs.append(F.log_softmax(logits, -1).gather(1, action[:, None]).squeeze(1))
        values.append(value)
        h *= (1.0 - done)[:, None]  # expect: GG001
    returns = rewards.flip(0).cumsum(0).flip(0)
    advantages = returns - torch.stack(values)
    return -(torch.stack(log_probs) * advantages.detach()).mean() + 0.5 * advantages.pow(2).mean()


torch.manual_seed(0)
policy = RecurrentPolicy(obs_dim=4, n_actions=3)
opt = torch.optim.RMSprop(policy.parameters(), lr=7e-4)
T, N = 5, 6
observations, rewards = torch.randn(T, N, 4), torch.randn(T, N)
dones = (torch.rand(T, N) < 0.2).float()
loss = rollout(policy, observations, dones, rewards)
opt.zero_grad()
loss.backward()
nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
opt.step()
