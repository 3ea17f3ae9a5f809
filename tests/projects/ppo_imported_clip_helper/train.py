"""A PPO script clips its probability ratio with an in-place helper imported from ppo/losses.py: the
ratio is exp's output, which exp saved for backward, and the helper's clamp_ changes it."""
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
clipped = clip_ratio_(ratio, 0.2)  # expect: GG001
loss = clipped_surrogate(ratio, clipped, advantages)
optimizer.zero_grad()
loss.backward()
optimizer.step()
