"""A depth refiner runs a while loop that feeds softplus(pred) to an update net and then does `pred += delta`; softplus saved pred itself, so the += breaks its backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class UpdateBlock(nn.Module):
    def __init__(self, ctx_dim, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(ctx_dim + 1, hidden), nn.GELU(), nn.Linear(hidden, 1))

    def forward(self, ctx, depth_feat):
        return self.net(torch.cat([ctx, depth_feat], dim=-1))


class IterativeDepth(nn.Module):
    def __init__(self, d_in=8, ctx_dim=16, n_iters=3):
        super().__init__()
        self.context = nn.Sequential(nn.Linear(d_in, ctx_dim), nn.LayerNorm(ctx_dim), nn.GELU())
        self.init_head = nn.Linear(ctx_dim, 1)
        self.update = UpdateBlock(ctx_dim)
        self.n_iters = n_iters

    def forward(self, x):
        ctx = self.context(x)
        pred = self.init_head(ctx)
        preds, it = [], 0
        while it < self.n_iters:
            delta = self.update(ctx, F.softplus(pred))
            pred += delta  # expect: GG001
            preds.append(pred)
            it += 1
        return preds


def sequence_loss(preds, target, gamma=0.8):
    n = len(preds)
    return sum(gamma ** (n - i - 1) * F.l1_loss(F.softplus(p), target) for i, p in enumerate(preds))


torch.manual_seed(0)
model = IterativeDepth()
opt = torch.optim.AdamW(model.parameters(), lr=2e-4)
x, depth = torch.randn(16, 8), torch.rand(16, 1) * 5
loss = sequence_loss(model(x), depth)
opt.zero_grad()
loss.backward()
opt.step()
