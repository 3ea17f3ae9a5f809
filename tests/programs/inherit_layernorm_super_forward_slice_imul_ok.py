"""A mixture-of-experts router's layer-norm subclass calls `super().forward(x)`, then boosts the
first two logits in place: `nn.LayerNorm` saves its input and statistics, not its output, so
training runs."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class BiasedRouterNorm(nn.LayerNorm):
    def __init__(self, n_exp, boost=1.5):
        super().__init__(n_exp)
        self.boost = boost

    def forward(self, x):
        z = super().forward(x)
        z[..., :2] *= self.boost
        return z


class MoE(nn.Module):
    def __init__(self, dim, n_exp=4):
        super().__init__()
        self.router = nn.Sequential(nn.Linear(dim, n_exp), BiasedRouterNorm(n_exp), nn.Softmax(dim=-1))
        self.experts = nn.ModuleList(nn.Linear(dim, dim) for _ in range(n_exp))

    def forward(self, x):
        gates = self.router(x)
        outs = torch.stack([e(x) for e in self.experts], dim=-1)
        return (outs * gates.unsqueeze(-2)).sum(-1)


torch.manual_seed(0)
moe = MoE(16)
opt = torch.optim.Adam(moe.parameters(), lr=1e-3)
x, y = torch.randn(8, 16), torch.randn(8, 16)
loss = F.mse_loss(moe(x), y)
opt.zero_grad()
loss.backward()
opt.step()
