"""Self-attention that scales the query in place after splitting a fused projection with `chunk()`.

`chunk()` returns several views of one tensor; autograd cannot rewrite the backward of such an
op, so `q *= self.scale` raises "Output 0 of Split is a view and is being modified inplace".
Fix: `q = q * self.scale`.
"""

import torch
from torch import nn


class SelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, dim = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q *= self.scale
        q, k, v = (t.reshape(batch, length, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        attention = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        context = (attention @ v).transpose(1, 2).reshape(batch, length, dim)
        return self.out(context)


attention = SelfAttention(dim=64, heads=4)
tokens = torch.randn(2, 10, 64)
loss = attention(tokens).pow(2).mean()
loss.backward()
