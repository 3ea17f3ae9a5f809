"""A frozen weight-norm critic scores the student's output; the critic is EMA-updated before the backward."""
import torch
import torch.nn as nn
from torch.nn.utils import weight_norm

torch.manual_seed(0)

student = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 6))
online_critic = nn.Sequential(weight_norm(nn.Linear(6, 16)), nn.ReLU(), weight_norm(nn.Linear(16, 1)))
critic = nn.Sequential(weight_norm(nn.Linear(6, 16)), nn.ReLU(), weight_norm(nn.Linear(16, 1)))
critic.load_state_dict(online_critic.state_dict())
critic.requires_grad_(False)
opt = torch.optim.SGD(student.parameters(), lr=0.1)

x = torch.randn(10, 6)
for step in range(2):
    y = student(x)
    loss = critic(y).mean() + 0.1 * y.pow(2).mean()
    with torch.no_grad():
        for pe, po in zip(critic.parameters(), online_critic.parameters()):
            pe.mul_(0.99).add_(po, alpha=0.01)
    opt.zero_grad()
    loss.backward()
    opt.step()
