"""A PPO script clips a clone of its probability ratio with the in-place helper imported from
ppo/losses.py, so the ratio exp saved for backward keeps its values."""
import torch
import torch.nn as nn

from ppo.losses import clip_ratio_, clipped_surrogate

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 3))
optimizer = torch.optim.Adam(policy.parameters(), lr=3e-4)
obs, actions, advantages = torch.randn(16, 4), torch.randint(0, 3, (16,)), torch.randn(16)
with torch.no_grad():
    old_log_probs = torch.log_softmax(policy(obs), dim=-1).gather(1, actions[:, None]).squeeze(1)

log_probs = torch.log_softmax(policy(obs), dim=-1).gather(1, actions[:, None]).squeeze(1)
ratio = torch.exp(log_probs - old_log_probs)
clipped = clip_ratio_(ratio.clone(), 0.2)
loss = clipped_surrogate(ratio, clipped, advantages)
optimizer.zero_grad()
loss.backward()
optimizer.step()
