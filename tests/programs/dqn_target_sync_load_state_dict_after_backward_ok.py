"""DQN: the target network is synced with `load_state_dict` every few steps, after the
optimizer's step; its own forward ran under `torch.no_grad()`, so nothing it saved is pending."""
import torch
import torch.nn as nn
import torch.nn.functional as F

policy = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
target = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
target.load_state_dict(policy.state_dict())
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
for step in range(4):
    s, a, r, s2 = torch.randn(8, 4), torch.randint(0, 2, (8,)), torch.randn(8), torch.randn(8, 4)
    q = policy(s).gather(1, a.unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        q_next = target(s2).max(dim=1).values
    loss = F.smooth_l1_loss(q, r + 0.99 * q_next)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 2 == 1:
        target.load_state_dict(policy.state_dict())
