"""A SimCLR-style NT-Xent loss with a learnable temperature (CLIP's `logit_scale`) masks self-similarity
with `logits.fill_diagonal_(-inf)`: multiplying by the scale saved its two operands, not the product,
so the in-place fill of the product is harmless."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ProjectionHead(nn.Module):
    def __init__(self, d_in=32, d_out=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, d_in), nn.ReLU(), nn.Linear(d_in, d_out))

    def forward(self, h):
        return F.normalize(self.net(h), dim=-1)


class NTXent(nn.Module):
    def __init__(self, init_temperature=0.07):
        super().__init__()
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / init_temperature)))

    def forward(self, z1, z2):
        z = torch.cat([z1, z2], dim=0)
        n = z1.shape[0]
        sim = z @ z.t()
        logits = sim * self.logit_scale.exp()
        logits.fill_diagonal_(float("-inf"))
        targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
        return F.cross_entropy(logits, targets)


torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
head, criterion = ProjectionHead(), NTXent()
params = [*encoder.parameters(), *head.parameters(), *criterion.parameters()]
optimizer = torch.optim.Adam(params, lr=1e-3)
x = torch.randn(8, 10)
view1, view2 = x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x)
loss = criterion(head(encoder(view1)), head(encoder(view2)))
optimizer.zero_grad()
loss.backward()
optimizer.step()
