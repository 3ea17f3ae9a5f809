"""Triplet features split with `chunk()` from a raw batch that requires no grad; the anchor chunk
is scaled in place by a fixed float: nothing written requires grad, so the view may be changed."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TripletScorer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.temperature = 0.5

    def forward(self, packed):
        anchor, pos, neg = packed.chunk(3, dim=-1)
        anchor *= self.temperature
        a, p, n = self.proj(anchor), self.proj(pos), self.proj(neg)
        return F.cosine_similarity(a, p), F.cosine_similarity(a, n)


def load_batch(bs=8, dim=16):
    return torch.randn(bs, 3 * dim)


torch.manual_seed(0)
model = TripletScorer(16)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(2):
    sp, sn = model(load_batch())
    loss = F.relu(sn - sp + 0.2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
