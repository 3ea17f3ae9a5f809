"""A PPO Gaussian policy splits one head into mean and log-std with .split() and clamps the log-std in place: split outputs are multi-output views that may not be modified in place."""
import torch
import torch.nn as nn


class GaussianPolicy(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden=32, log_std_bounds=(-5.0, 2.0)):
        super().__init__()
        self.act_dim = act_dim
        self.log_std_bounds = log_std_bounds
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.head = nn.Linear(hidden, 2 * act_dim)

    def distribution(self, obs):
        mean, log_std = self.head(self.body(obs)).split(self.act_dim, dim=-1)
        log_std.clamp_(*self.log_std_bounds)  # expect: GG003
        return torch.distributions.Normal(mean, log_std.exp())


def ppo_loss(policy, obs, actions, old_log_probs, advantages, clip=0.2):
    dist = policy.distribution(obs)
    log_probs = dist.log_prob(actions).sum(-1)
    ratio = torch.exp(log_probs - old_log_probs)
    surrogate = torch.min(ratio * advantages, ratio.clamp(1 - clip, 1 + clip) * advantages)
    return -surrogate.mean() - 0.01 * dist.entropy().sum(-1).mean()


torch.manual_seed(0)
policy = GaussianPolicy(obs_dim=6, act_dim=2)
opt = torch.optim.Adam(policy.parameters(), lr=3e-4, eps=1e-5)
obs, actions = torch.randn(32, 6), torch.randn(32, 2)
old_log_probs, advantages = torch.randn(32), torch.randn(32)
loss = ppo_loss(policy, obs, actions, old_log_probs, advantages)
opt.zero_grad()
loss.backward()
opt.step()
