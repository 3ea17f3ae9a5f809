"""Policy heads in an `nn.ModuleDict` keyed by a task read from the environment. The heads give raw
logits, masked in place before the softmax: what the heads' linear layers saved is their input,
so training runs."""
import os

import torch
import torch.nn as nn


class MultiHeadPolicy(nn.Module):
    def __init__(self, obs_dim, n_act):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 32), nn.ELU())
        self.heads = nn.ModuleDict({
            "navigate": nn.Linear(32, n_act),
            "manipulate": nn.Linear(32, n_act),
        })

    def forward(self, obs, task):
        return self.heads[task](self.body(obs))


def masked_policy(policy, obs, task, invalid):
    logits = policy(obs, task)
    logits.masked_fill_(invalid, float("-inf"))
    return logits.softmax(-1)


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
