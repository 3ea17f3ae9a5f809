"""An attention module caches its key scores by name (`self.cache.get(key)`) and computes them on a
miss; the scores, whichever path gave them, are normalised in place, and on a miss they are the
output of `torch.exp`, which saved it for backward."""
import torch
import torch.nn as nn


class CachedScores(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.q = nn.Linear(d, d)
        self.cache = {}

    def forward(self, x, key):
        scores = self.cache.get(key)
        if scores is None:
            scores = torch.exp(self.q(x) @ x.t())
        scores /= scores.sum(-1, keepdim=True)  # expect: GG001
        return scores @ x


attn = CachedScores()
opt = torch.optim.SGD(attn.parameters(), lr=0.01)
x = torch.randn(4, 8)
loss = attn(x, "batch0").pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()
