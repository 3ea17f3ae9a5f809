"""Each head returns a (scores, features) pair and the pairs are transposed with `zip(*pairs)`; the
prior is added to the first head's exp scores out of place, so backward runs."""
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, d=8, k=4):
        super().__init__()
        self.fc = nn.Linear(d, k)

    def forward(self, x):
        logits = self.fc(x)
        return torch.exp(logits), logits


heads = nn.ModuleList([Head(), Head()])
opt = torch.optim.SGD(heads.parameters(), lr=0.1)
x = torch.randn(5, 8)
scores, feats = zip(*[head(x) for head in heads])
first = scores[0] + 0.1
loss = sum(s.mean() for s in scores) + sum(f.pow(2).mean() for f in feats)
opt.zero_grad()
loss.backward()
opt.step()
