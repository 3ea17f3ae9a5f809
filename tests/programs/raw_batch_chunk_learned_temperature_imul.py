"""Triplet features arrive concatenated in one raw tensor (which requires no grad) and are split
with `chunk()`; scaling the anchor chunk in place by a learned temperature writes a value that
requires grad into one of several views, so PyTorch raises at once."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TripletScorer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.log_temp = nn.Parameter(torch.zeros(()))

    def forward(self, packed):
        anchor, pos, neg = packed.chunk(3, dim=-1)
        anchor *= self.log_temp.exp()  # expect: GG003
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
