"""The twin of drop_path_zero_rate_alias_iadd.py, written out of place (`weights = weights + self.prior`): a new tensor, and what the library code saved stays as it was; it trains cleanly."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from timm.layers import DropPath


class GatedPool(nn.Module):
    def __init__(self, dim=8, drop_path_rate=0.0):
        super().__init__()
        self.score = nn.Linear(dim, 1)
        self.drop_path = DropPath(drop_path_rate)
        self.prior = nn.Parameter(torch.zeros(1, 6, 1))

    def forward(self, x):
        weights = self.score(x).softmax(dim=1)
        weights = self.drop_path(weights)
        weights = weights + self.prior
        return (weights * x).sum(1)


torch.manual_seed(0)
pool = GatedPool()
opt = torch.optim.Adam(pool.parameters(), lr=1e-3)
x = torch.randn(2, 6, 8)
loss = pool(x).pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()
