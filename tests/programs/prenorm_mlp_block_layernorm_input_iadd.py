"""A pre-norm block written with `x += self.mlp(self.norm(x))`: LayerNorm saved x for backward, and the residual += changes it."""
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F


class PreNormMLP(nn.Module):
    def __init__(self, dim, expansion=4, drop=0.0):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(OrderedDict([
            ("fc1", nn.Linear(dim, expansion * dim)),
            ("act", nn.GELU()),
            ("drop", nn.Dropout(drop)),
            ("fc2", nn.Linear(expansion * dim, dim)),
        ]))

    def forward(self, x):
        x += self.mlp(self.norm(x))  # expect: GG001
        return x


class TokenMixer(nn.Module):
    def __init__(self, vocab=50, dim=16, depth=2, n_cls=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(PreNormMLP(dim) for _ in range(depth))
        self.head = nn.Linear(dim, n_cls)

    def forward(self, ids):
        x = self.embed(ids) * 1.0
        for block in self.blocks:
            x = block(x)
        return self.head(x.mean(dim=1))


torch.manual_seed(0)
model = TokenMixer()
opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.05)
ids, labels = torch.randint(0, 50, (4, 9)), torch.randint(0, 4, (4,))
loss = F.cross_entropy(model(ids), labels)
opt.zero_grad()
loss.backward()
opt.step()
