"""A differentiable Sinkhorn matching layer normalises the transport plan `exp(scores / eps)` in place,
alternating rows and columns; exp saved that plan as its output, so the matching loss's backward fails."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SinkhornMatcher(nn.Module):
    def __init__(self, dim=16, n_iters=5, eps=0.1):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.n_iters = n_iters
        self.eps = eps

    def forward(self, desc_a, desc_b):
        a, b = F.normalize(self.proj(desc_a), dim=-1), F.normalize(self.proj(desc_b), dim=-1)
        scores = a @ b.transpose(-1, -2)
        plan = torch.exp(scores / self.eps)
        for _ in range(self.n_iters):
            plan /= plan.sum(dim=-1, keepdim=True)  # expect: GG001
            plan /= plan.sum(dim=-2, keepdim=True)
        return plan


torch.manual_seed(0)
matcher = SinkhornMatcher()
opt = torch.optim.Adam(matcher.parameters(), lr=1e-3)
desc_a = torch.randn(2, 6, 16)
perm = torch.stack([torch.randperm(6) for _ in range(2)])
desc_b = torch.gather(desc_a, 1, perm.unsqueeze(-1).expand(-1, -1, 16)) + 0.05 * torch.randn(2, 6, 16)
plan = matcher(desc_a, desc_b)
loss = -torch.log(plan.gather(2, perm.argsort(1).unsqueeze(-1)) + 1e-9).mean()
opt.zero_grad()
loss.backward()
opt.step()
