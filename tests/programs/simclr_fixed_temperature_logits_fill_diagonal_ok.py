"""A SimCLR-style NT-Xent loss with a fixed temperature masks self-similarity with
`logits.fill_diagonal_(-inf)`: dividing by a Python float saves nothing, and the matrix product
saved its operands, not its output, so the in-place fill is harmless."""
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
    def __init__(self, temperature=0.5):
        super().__init__()
        self.temperature = temperature

    def forward(self, z1, z2):
        z = torch.cat([z1, z2], dim=0)
        n = z1.shape[0]
        logits = z @ z.t() / self.temperature
        logits.fill_diagonal_(float("-inf"))
        targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
        return F.cross_entropy(logits, targets)


torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
head, criterion = ProjectionHead(), NTXent()
optimizer = torch.optim.Adam([*encoder.parameters(), *head.parameters()], lr=1e-3)
x = torch.randn(8, 10)
view1, view2 = x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x)
loss = criterion(head(encoder(view1)), head(encoder(view2)))
optimizer.zero_grad()
loss.backward()
optimizer.step()
