"""A RealNVP affine coupling layer transforms the second half of its input by writing into it
(`x[:, d:] = ...`): the conditioner's first Linear saved `x[:, :d]`, a view of the same tensor,
so the flow's backward fails."""
import math

import torch
import torch.nn as nn


class AffineCoupling(nn.Module):
    def __init__(self, dim, hidden=32):
        super().__init__()
        self.d = dim // 2
        self.net = nn.Sequential(nn.Linear(self.d, hidden), nn.ReLU(), nn.Linear(hidden, 2 * (dim - self.d)))

    def forward(self, x):
        s, t = self.net(x[:, :self.d]).chunk(2, dim=1)
        s = torch.tanh(s)
        x[:, self.d:] = x[:, self.d:] * torch.exp(s) + t  # expect: GG001
        return x, s.sum(dim=1)


class Flow(nn.Module):
    def __init__(self, dim=4, n_layers=3):
        super().__init__()
        self.layers = nn.ModuleList([AffineCoupling(dim) for _ in range(n_layers)])

    def forward(self, x):
        log_det = torch.zeros(x.shape[0])
        for layer in self.layers:
            x, ld = layer(x)
            log_det = log_det + ld
            x = x.flip(1)
        return x, log_det


def nll(flow, x):
    z, log_det = flow(x)
    log_pz = -0.5 * (z ** 2).sum(dim=1) - 0.5 * z.shape[1] * math.log(2 * math.pi)
    return -(log_pz + log_det).mean()


torch.manual_seed(0)
flow = Flow()
opt = torch.optim.Adam(flow.parameters(), lr=1e-3)
data = torch.randn(128, 4) @ torch.tensor([[2.0, 0.3, 0, 0], [0, 1, 0, 0], [0, 0, 0.5, 0], [0, 0, 0.2, 1]])
loss = nll(flow, data)
opt.zero_grad()
loss.backward()
opt.step()
