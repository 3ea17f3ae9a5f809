"""An ensemble: each member's loss goes into a list and the total is the builtin `sum(losses)`; the
exp member normalises its scores out of place, so backward runs."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ExpScorer(nn.Module):
    def __init__(self, d=10, k=4):
        super().__init__()
        self.proj = nn.Linear(d, k)

    def forward(self, x):
        scores = torch.exp(self.proj(x))
        scores = scores / scores.sum(dim=-1, keepdim=True)
        return scores.clamp_min(1e-8).log()


members = nn.ModuleList([ExpScorer(), nn.Sequential(nn.Linear(10, 4), nn.LogSoftmax(dim=-1))])
opt = torch.optim.SGD(members.parameters(), lr=0.05)
x, y = torch.randn(5, 10), torch.randint(0, 4, (5,))
losses = []
for member in members:
    losses.append(F.nll_loss(member(x), y))
loss = sum(losses) / len(losses)
opt.zero_grad()
loss.backward()
opt.step()
