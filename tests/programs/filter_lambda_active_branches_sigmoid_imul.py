"""Mixture branches are kept with `filter` and a lambda (`filter(lambda b: b.enabled, self.branches)`);
each kept branch's sigmoid gate is scaled in place, and sigmoid saved its output for backward."""
import torch
import torch.nn as nn


class Branch(nn.Module):
    def __init__(self, d=8, enabled=True):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.enabled = enabled

    def forward(self, x):
        return torch.sigmoid(self.fc(x))


class Mixture(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.branches = nn.ModuleList([Branch(d), Branch(d, enabled=False), Branch(d)])

    def forward(self, x):
        gates = [branch(x) for branch in filter(lambda b: b.enabled, self.branches)]
        for g in gates:
            g *= 0.5  # expect: GG001
        return sum(gates)


model = Mixture()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(4, 8)
loss = model(x).pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()
