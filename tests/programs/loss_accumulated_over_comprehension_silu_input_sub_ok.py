"""Contrastive pairs: the pair scores come from a list comprehension and the loss is accumulated from
0 in a loop over it; the scorer shifts the Linear output out of place after `F.silu` read it, so
backward runs."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class PairScorer(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.enc = nn.Linear(d, d)

    def forward(self, a, b):
        ha, hb = self.enc(a), self.enc(b)
        act = F.silu(ha)
        ha = ha.sub(hb.mean())
        return (act * hb).sum(-1)


scorer = PairScorer()
opt = torch.optim.Adam(scorer.parameters(), lr=1e-3)
pairs = [(torch.randn(4, 8), torch.randn(4, 8)) for _ in range(3)]
loss = 0
for score in [scorer(a, b) for a, b in pairs]:
    loss += F.softplus(-score).mean()
opt.zero_grad()
loss.backward()
opt.step()
