"""An ensemble: each member's loss goes into a list and the total is the builtin `sum(losses)`; one
member normalises `torch.exp` scores in place (`scores /= ...`), and exp saved its output."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ExpScorer(nn.Module):
    def __init__(self, d=10, k=4):
        super().__init__()
        self.proj = nn.Linear(d, k)

    def forward(self, x):
        scores = torch.exp(self.proj(x))
        scores /= scores.sum(dim=-1, keepdim=True)  # expect: GG001
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
