"""A mixture-of-experts router's softmax subclass (`class BiasedRouterSoftmax(nn.Softmax)`) calls
`super().forward(x)`, then boosts the first two experts' probabilities in place: `nn.Softmax`
saved that output, so `backward()` raises."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class BiasedRouterSoftmax(nn.Softmax):
    def __init__(self, boost=1.5):
        super().__init__(dim=-1)
        self.boost = boost

    def forward(self, x):
        probs = super().forward(x)
        probs[..., :2] *= self.boost  # expect: GG001
        return probs / probs.sum(dim=-1, keepdim=True)


class MoE(nn.Module):
    def __init__(self, dim, n_exp=4):
        super().__init__()
        self.router = nn.Sequential(nn.Linear(dim, n_exp), BiasedRouterSoftmax())
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
