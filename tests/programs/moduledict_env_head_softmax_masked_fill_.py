"""Policy heads live in an `nn.ModuleDict` keyed by task name, the task read from an environment
variable. Every head ends in `nn.Softmax`, which saves its output, and the caller zeroes invalid
actions in place with `masked_fill_`, so `backward()` raises."""
import os

import torch
import torch.nn as nn


class MultiHeadPolicy(nn.Module):
    def __init__(self, obs_dim, n_act):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 32), nn.ELU())
        self.heads = nn.ModuleDict({
            "navigate": nn.Sequential(nn.Linear(32, n_act), nn.Softmax(dim=-1)),
            "manipulate": nn.Sequential(nn.Linear(32, n_act), nn.Softmax(dim=-1)),
        })

    def forward(self, obs, task):
        return self.heads[task](self.body(obs))


def masked_policy(policy, obs, task, invalid):
    probs = policy(obs, task)
    probs.masked_fill_(invalid, 0.0)  # expect: GG001
    return probs / probs.sum(-1, keepdim=True)


torch.manual_seed(0)
task = os.environ.get("TASK", "navigate")
policy = MultiHeadPolicy(8, 5)
opt = torch.optim.Adam(policy.parameters(), lr=3e-4)
obs = torch.randn(16, 8)
invalid = torch.zeros(16, 5, dtype=torch.bool)
invalid[:, -1] = True
actions = torch.randint(0, 4, (16,))
probs = masked_policy(policy, obs, task, invalid)
loss = -probs.gather(1, actions[:, None]).log().mean()
opt.zero_grad()
loss.backward()
opt.step()
